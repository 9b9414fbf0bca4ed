"""``patchwork-companion web``: the LAN page (its own process; see :mod:`firmware_py.web`)."""
from __future__ import annotations

from .common import fail


def add_parser(sub) -> None:
    """Register ``web``."""
    p = sub.add_parser("web", help="the web page on the LAN: live table, history, statistics")
    p.add_argument("--config", help="TOML config file ([web] address and port, [feed] dir)")
    p.add_argument("--address", help="listen on this address instead of web.address")
    p.add_argument("--port", type=int, help="listen on this port instead of web.port")
    p.add_argument("--store", help="read finished games from this folder (default: journal.dir)")
    p.set_defaults(func=run)


def run(args) -> int:
    """The command: serve until SIGTERM/SIGINT; returns the exit status."""
    from ..config import load_or_report
    cfg = load_or_report(args.config)
    if cfg is None:
        return 2
    if args.port is not None and not 1 <= args.port <= 65535:
        return fail(f"web: --port {args.port} is not 1..65535")
    try:
        from ..web.server import serve
    except ImportError as exc:
        return fail(f"web: {exc.name or exc} is not installed; "
                    "pip install 'patchwork-companion' installs aiohttp with it")
    return serve(cfg, args.address, args.port, args.store)
