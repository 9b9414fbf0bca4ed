"""``patchwork-companion selftest``: check each part, PASS/FAIL per part
(see :mod:`firmware_py.selftest`)."""
from __future__ import annotations


def add_parser(sub) -> None:
    """Register ``selftest``."""
    p = sub.add_parser("selftest", help="check the LEDs, OLED, buttons and token sensor; PASS/FAIL per part")
    p.add_argument("--config", help="TOML config file (default: the packaged one, simulated)")
    p.add_argument("--seconds", type=float, default=10.0, help="time limit per button and for the sensor")
    p.add_argument("--yes", action="store_true", help="do not ask whether the LEDs and the OLED looked right")
    p.set_defaults(func=run)


def run(args) -> int:
    """The command; returns the exit status."""
    from ..selftest import main as selftest_main
    return selftest_main(args.config, args.seconds, args.yes)
