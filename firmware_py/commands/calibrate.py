"""``patchwork-companion calibrate``: learn the sensor channel and the LED under each space
(see :mod:`firmware_py.calibrate`)."""
from __future__ import annotations


def add_parser(sub) -> None:
    """Register ``calibrate``."""
    p = sub.add_parser("calibrate", help="learn the sensor channel and the LED under each space")
    p.add_argument("--config", help="TOML config file to read (and update with --write)")
    p.add_argument("--game", choices=("patchwork", "patchwork-express"), default="patchwork")
    p.add_argument("--write", action="store_true", help="write the maps into --config FILE (else print them)")
    p.set_defaults(func=run)


def run(args) -> int:
    """The command; returns the exit status."""
    from ..calibrate import main as calibrate_main
    return calibrate_main(args.config, args.game, args.write)
