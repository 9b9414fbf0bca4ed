"""The ``patchwork-companion`` command line."""
from __future__ import annotations

import argparse
import sys


def _replay(args) -> int:
    from .replay_cmd import run_replay
    return run_replay(args.file, as_json=args.json, trace=args.trace)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every subcommand."""
    parser = argparse.ArgumentParser(prog="patchwork-companion",
                                     description="A table companion for Patchwork and Patchwork Express.")
    sub = parser.add_subparsers(dest="command", required=True)
    rp = sub.add_parser("replay", help="check a game record move by move and print the tally")
    rp.add_argument("file", help="a patchwork-game-record/1 JSON file")
    rp.add_argument("--json", action="store_true", help="print the tally as one JSON object")
    rp.add_argument("--trace", action="store_true", help="print the state after each move as JSON")
    rp.set_defaults(func=_replay)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point: parse ``argv`` and run the subcommand; returns the exit status."""
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except BrokenPipeError:  # the reader (e.g. `head`) went away: not an error of ours
        sys.stderr.close()
        return 0


if __name__ == "__main__":
    sys.exit(main())
