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


def _import_server():
    """The server module, imported without Python's ``ssl`` module when it can be: the page
    speaks plain HTTP on the LAN (no TLS: put a reverse proxy in front for that), and
    keeping ssl (with libssl) out of the process saves about 4 MB of memory.
    asyncio and aiohttp import ssl only if it is there."""
    import sys
    if "ssl" not in sys.modules:
        sys.modules["ssl"] = None                 # an import of ssl now raises ImportError
        try:
            from ..web.server import serve
            return serve
        except ImportError:
            pass                                  # this aiohttp needs ssl: load it after all
        finally:
            if sys.modules.get("ssl", 0) is None:
                del sys.modules["ssl"]
    from ..web.server import serve
    return serve


def run(args) -> int:
    """The command: serve until SIGTERM/SIGINT; returns the exit status."""
    from ..config import load_or_report
    cfg = load_or_report(args.config)
    if cfg is None:
        return 2
    if args.port is not None and not 1 <= args.port <= 65535:
        return fail(f"web: --port {args.port} is not 1..65535")
    try:
        serve = _import_server()
    except ImportError as exc:
        return fail(f"web: {exc.name or exc} is not installed; "
                    "pip install 'patchwork-companion' installs aiohttp with it")
    from .club import start_bridge
    stop_club = start_bridge(cfg, args.config)      # club mode rides on this networked process
    try:
        return serve(cfg, args.address, args.port, args.store)
    finally:
        if stop_club is not None:
            stop_club()
