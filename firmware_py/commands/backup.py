"""``patchwork-companion backup FILE``: every game record and the player names in one
.tar.gz (``restore FILE`` reads it back; see :mod:`firmware_py.store.backup`)."""
from __future__ import annotations

import sys

from .common import add_store_options, fail, store_folder


def add_parser(sub) -> None:
    """Register ``backup``."""
    b = sub.add_parser("backup", help="write every game record and the player names to FILE (.tar.gz)")
    b.add_argument("file")
    add_store_options(b)
    b.set_defaults(func=run_backup)


def run_backup(args, out=None) -> int:
    """``backup FILE``; returns the exit status."""
    from ..store.backup import backup
    folder = store_folder(args)
    if folder is None:
        return 2
    try:
        games = backup(folder, args.file)
    except OSError as exc:
        return fail(f"backup: {exc.filename or args.file}: {exc.strerror or exc}")
    from ..store.backup import NAMES
    names = folder / NAMES
    said = "with the player names" if names.exists() else f"(no player names: no {names})"
    print(f"{games} game{'s' if games != 1 else ''} from {folder} saved in {args.file} {said}",
          file=out or sys.stdout)
    return 0
