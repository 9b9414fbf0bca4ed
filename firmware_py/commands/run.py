"""``patchwork-companion run``: the companion service itself (see :mod:`firmware_py.app`)."""
from __future__ import annotations


def add_parser(sub) -> None:
    """Register ``run``."""
    p = sub.add_parser("run", help="the companion service (backend from the config: pi or sim)")
    p.add_argument("--config", help="TOML config file (default: the packaged one, simulated)")
    p.set_defaults(func=run)


def run(args) -> int:
    """The command: serve until SIGTERM/SIGINT; returns the exit status."""
    import faulthandler

    from ..app import run_forever
    from ..config import load_or_report
    cfg = load_or_report(args.config)
    if cfg is None:
        return 2
    faulthandler.enable()          # a watchdog kill (SIGABRT) leaves every thread's traceback
    return run_forever(cfg)
