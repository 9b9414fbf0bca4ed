"""``patchwork-companion config check FILE`` and ``config default`` (see :mod:`firmware_py.config`)."""
from __future__ import annotations

import sys


def add_parser(sub) -> None:
    """Register ``config`` with its ``check`` and ``default`` subcommands."""
    p = sub.add_parser("config", help="check a config file or print the default one")
    cfs = p.add_subparsers(dest="config_command", required=True)
    ck = cfs.add_parser("check", help="validate FILE and name each bad key with its allowed values")
    ck.add_argument("file")
    ck.set_defaults(func=run_check)
    cd = cfs.add_parser("default", help="print the default config (every key documented)")
    cd.set_defaults(func=run_default)


def run_check(args) -> int:
    """``config check FILE``: 0 valid, 2 not (each problem printed), 1 valid but the
    journal folder is not writable (the games would not be saved)."""
    from ..config import journal_dir_problem, load_or_report
    cfg = load_or_report(args.file)
    if cfg is None:
        return 2
    problem = journal_dir_problem(cfg)
    if problem:                       # valid, but the games would not be saved
        print(f"{args.file}: {problem}", file=sys.stderr)
        return 1
    print(f"{args.file}: ok")
    return 0


def run_default(args) -> int:
    """``config default``: print the packaged default config."""
    from ..config import default_text
    sys.stdout.write(default_text())
    return 0
