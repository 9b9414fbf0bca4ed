"""``patchwork-companion calibrate``: learn the sensor channel and the LED under each space
(see :mod:`firmware_py.bench.calibrate`)."""
from __future__ import annotations

from .common import CONFIG_HELP, discover, found_path


def add_parser(sub) -> None:
    """Register ``calibrate``."""
    p = sub.add_parser("calibrate", help="learn the sensor channel and the LED under each space")
    p.add_argument("--config", help=CONFIG_HELP + "; --write updates it")
    p.add_argument("--game", choices=("patchwork", "patchwork-express"), default="patchwork")
    p.add_argument("--write", action="store_true", help="write the maps into --config FILE (else print them)")
    p.set_defaults(func=run)


def run(args) -> int:
    """The command; returns the exit status."""
    found, cfg = discover(args.config)
    if cfg is None:
        return 2
    from ..bench.calibrate import main as calibrate_main
    return calibrate_main(found_path(found), args.game, args.write)
