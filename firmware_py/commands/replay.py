"""``patchwork-companion replay``: check a game record move by move and print the tally
(see :mod:`firmware_py.store.replay`)."""
from __future__ import annotations


def add_parser(sub) -> None:
    """Register ``replay``."""
    p = sub.add_parser("replay", help="check a game record move by move and print the tally")
    p.add_argument("file", help="a patchwork-game-record/1 JSON file")
    p.add_argument("--json", action="store_true", help="print the tally as one JSON object")
    p.add_argument("--trace", action="store_true", help="print the state after each move as JSON")
    p.set_defaults(func=run)


def run(args) -> int:
    """The command; returns the exit status."""
    from ..store.replay import run_replay
    return run_replay(args.file, as_json=args.json, trace=args.trace)
