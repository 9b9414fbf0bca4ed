"""``patchwork-companion backup FILE`` and ``restore FILE``: the whole store in one file.

``backup`` writes every game record and the player names to FILE (.tar.gz).
``restore`` checks FILE completely first (nothing is written when anything is
wrong), then adds its games to the store (replacing a game already there),
restores the names and rebuilds the index.
"""
from __future__ import annotations

import sys

from .common import add_store_options, fail, store_folder


def add_parsers(sub) -> None:
    """Register ``backup`` and ``restore``."""
    b = sub.add_parser("backup", help="write every game record and the player names to FILE (.tar.gz)")
    b.add_argument("file")
    add_store_options(b)
    b.set_defaults(func=run_backup)
    r = sub.add_parser("restore", help="restore a backup FILE into the store (checked first)")
    r.add_argument("file")
    add_store_options(r)
    r.set_defaults(func=run_restore)


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
    print(f"{games} game{'s' if games != 1 else ''} from {folder} saved in {args.file}",
          file=out or sys.stdout)
    return 0


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
