"""``patchwork-companion demo``: play a whole game record through the companion on simulated
hardware (see :mod:`firmware_py.sim.demo`)."""
from __future__ import annotations


def add_parser(sub) -> None:
    """Register ``demo``."""
    p = sub.add_parser("demo", help="play a whole game record through the companion on simulated hardware")
    p.add_argument("--record", help="a game record to play (default: a real game bundled with the package)")
    p.add_argument("--out", default="demo-out", help="folder for OLED frames, LED frames, journal, record")
    p.add_argument("--json", action="store_true", help="print the tally as replay --json does")
    p.add_argument("--fast", action="store_true", help="quicker hands and shorter timings")
    p.set_defaults(func=run)


def run(args) -> int:
    """The command; returns the exit status."""
    from ..sim.demo import run_demo
    return run_demo(args.record, args.out, as_json=args.json, fast=args.fast)
