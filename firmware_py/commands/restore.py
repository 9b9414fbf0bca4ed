"""``patchwork-companion restore FILE``: a backup back into the store. The file is checked
completely first, within caps, and staged (nothing in the store changes when anything is
wrong); then its games are added (a game the store already holds keeps the store's copy),
the names merged and the index rebuilt."""
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
    """``restore FILE``; returns the exit status (2: not a valid backup, nothing changed)."""
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
        return fail(f"restore: {exc}; run 'restore' again to complete it")
    print(summary(done, folder), file=out or sys.stdout)
    return 0


def summary(done, folder) -> str:
    """What a restore changed, in one paragraph, e.g. "restored 3 games into /x (2 already
    there kept as they are); player names: added Anna, Bob; kept 1 added since the backup
    (Carl); the history holds 5 games"."""
    from ..companion.names import MAX_NAMES
    text = f"restored {done.games} game{'s' if done.games != 1 else ''} into {folder}"
    if done.kept:
        text += f" ({done.kept} already there kept as they are)"
    if done.repaired:
        text += f"; {done.repaired} damaged record{'s' if done.repaired != 1 else ''} replaced"
    names = []
    if done.added:
        names.append(f"added {', '.join((done.added))}")
    if done.kept_names:
        names.append(f"kept {len(done.kept_names)} added since the backup "
                     f"({', '.join((done.kept_names))})")
    if done.left_out:
        names.append(f"left out {', '.join((done.left_out))} (at most {MAX_NAMES} names)")
    if names:
        text += "; player names: " + "; ".join(names)
    if done.index_problem:
        return text + (f"; the history index was not rebuilt ({done.index_problem}: another "
                       "process holds it?): the service rebuilds it by itself, or run "
                       "'patchwork-companion history --rebuild'")
    return text + f"; the history holds {done.indexed} games"
