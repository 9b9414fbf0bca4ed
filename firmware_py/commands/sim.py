"""``patchwork-companion sim``: the terminal simulator (textual, the ``sim`` extra; see
:mod:`firmware_py.sim.tui`), or with ``--web`` the same table on a web page
(:mod:`firmware_py.sim.web`; no extra needed)."""
from __future__ import annotations

import sys

from .common import CONFIG_HELP, discover


def add_parser(sub) -> None:
    """Register ``sim``."""
    p = sub.add_parser("sim", help="play at a simulated table in the terminal (textual UI; "
                       "the [sim] extra), or with --web in a browser")
    p.add_argument("--config", help=CONFIG_HELP + "; the backend is forced to sim")
    p.add_argument("--out", help="journal folder (default: the state folder that run, history "
                   "and web use); starting again resumes the game kept there")
    p.add_argument("--seed", type=int, help="deal the patch circle from this seed (repeatable games)")
    p.add_argument("--web", action="store_true",
                   help="show the table on a web page instead of the terminal (prints its address)")
    p.add_argument("--address", default="127.0.0.1",
                   help="with --web: the address the page listens on (default 127.0.0.1, this "
                   "machine only; this machine's LAN address or 0.0.0.0 to open it on a phone)")
    p.add_argument("--port", type=int, default=8090,
                   help="with --web: the page's TCP port (default 8090; 0 picks a free one)")
    p.set_defaults(func=run)


def run(args) -> int:
    """The command; returns the exit status (2 when textual is missing or an argument is bad)."""
    if args.web:
        return _run_web(args)
    if args.address != "127.0.0.1" or args.port != 8090:
        print("patchwork-companion sim: --address and --port go with --web", file=sys.stderr)
        return 2
    try:
        import textual  # noqa: F401  the terminal UI's library, an optional extra
    except ImportError:
        print("patchwork-companion sim needs textual, which is not installed: "
              "pip install 'patchwork-companion[sim]' (in a checkout: pip install -e '.[sim]')",
              file=sys.stderr)
        return 2
    found, cfg = discover(args.config)
    if cfg is None:
        return 2
    from ..sim.tui import main as sim_main
    argv = []
    if found.path is not None:
        argv += ["--config", str(found.path)]
    if args.out:
        argv += ["--out", args.out]
    if args.seed is not None:
        argv += ["--seed", str(args.seed)]
    return sim_main(argv)


def _run_web(args) -> int:
    """``sim --web``: the simulated table on a page."""
    if not 0 <= args.port <= 65535:
        print(f"patchwork-companion sim: --port must be 0..65535, got {args.port}", file=sys.stderr)
        return 2
    _found, cfg = discover(args.config)
    if cfg is None:
        return 2
    from ..sim.web import main as web_main
    return web_main(cfg, args.out, args.seed, args.address, args.port)
