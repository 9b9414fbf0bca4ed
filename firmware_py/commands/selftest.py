"""``patchwork-companion selftest``: check each part, PASS/FAIL per part
(see :mod:`firmware_py.bench.selftest`)."""
from __future__ import annotations

from .common import CONFIG_HELP, discover, found_path


def add_parser(sub) -> None:
    """Register ``selftest``."""
    p = sub.add_parser("selftest", help="check the LEDs, OLED, buttons and token sensor; PASS/FAIL per part")
    p.add_argument("--config", help=CONFIG_HELP)
    p.add_argument("--seconds", type=float, default=10.0, help="time limit per button and for the sensor")
    p.add_argument("--yes", action="store_true", help="do not ask whether the LEDs and the OLED looked right")
    p.set_defaults(func=run)


def run(args) -> int:
    """The command; returns the exit status."""
    found, cfg = discover(args.config)
    if cfg is None:
        return 2
    from ..bench.selftest import main as selftest_main
    return selftest_main(found_path(found), args.seconds, args.yes)
