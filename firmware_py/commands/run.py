"""``patchwork-companion run``: the companion service itself (see :mod:`firmware_py.service.assembly`)."""
from __future__ import annotations

import logging

from .common import CONFIG_HELP, discover

LOG = logging.getLogger("firmware_py.cli")


def add_parser(sub) -> None:
    """Register ``run``."""
    p = sub.add_parser("run", help="the companion service (backend from the config: pi or sim)")
    p.add_argument("--config", help=CONFIG_HELP)
    p.set_defaults(func=run)


def run(args) -> int:
    """The command: serve until SIGTERM/SIGINT; returns the exit status."""
    import faulthandler

    from ..config import EXIT_CONFIG

    def log(line: str, ok: bool) -> None:
        """The first log line: the config file and its backend (or that it is not valid)."""
        (LOG.info if ok else LOG.error)("%s", line)

    found, cfg = discover(args.config, log)
    if cfg is None:
        LOG.error("not starting: fix %s (patchwork-companion config check), then start the "
                  "service again; exit status %d stops systemd from restarting it",
                  found.label, EXIT_CONFIG)
        return EXIT_CONFIG
    from ..service.assembly import run_forever
    faulthandler.enable()          # a watchdog kill (SIGABRT) leaves every thread's traceback
    return run_forever(cfg)
