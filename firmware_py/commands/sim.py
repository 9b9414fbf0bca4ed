"""``patchwork-companion sim``: the terminal simulator (textual, the ``sim`` extra; see
:mod:`firmware_py.sim.tui`)."""
from __future__ import annotations

import sys

from .common import CONFIG_HELP, discover


def add_parser(sub) -> None:
    """Register ``sim``."""
    p = sub.add_parser("sim", help="play at a simulated table in the terminal (textual UI; "
                       "the [sim] extra)")
    p.add_argument("--config", help=CONFIG_HELP + "; the backend is forced to sim")
    p.add_argument("--out", help="journal folder (default: the state folder that run, history "
                   "and web use); starting again resumes the game kept there")
    p.add_argument("--seed", type=int, help="deal the patch circle from this seed (repeatable games)")
    p.set_defaults(func=run)


def run(args) -> int:
    """The command; returns the exit status (2 when textual is missing)."""
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
