"""``patchwork-companion restore FILE``: a backup back into the store. The file is checked
completely first (nothing is written when anything is wrong); then its games are added
(replacing a game already there), the names restored and the index rebuilt."""
from __future__ import annotations

import sys

from .common import add_store_options, fail, store_folder


def add_parser(sub) -> None:
    """Register ``restore``."""
    r = sub.add_parser("restore", help="restore a backup FILE into the store (checked first)")
    r.add_argument("file")
    add_store_options(r)
    r.set_defaults(func=run_restore)


def run_restore(args, out=None) -> int:
    """``restore FILE``; returns the exit status (2: not a valid backup, nothing written)."""
    import sqlite3

    from ..store.backup import BackupError, restore
    folder = store_folder(args)
    if folder is None:
        return 2
    try:
        done = restore(folder, args.file)
    except BackupError as exc:
        return fail(f"restore: {exc}; nothing was changed")
    except (OSError, sqlite3.Error) as exc:
        return fail(f"restore: {exc}")
    names = ", player names" if done.names else ""
    print(f"restored {done.games} game{'s' if done.games != 1 else ''}{names} into {folder}; "
          f"the history holds {done.indexed} games", file=out or sys.stdout)
    return 0
