"""``patchwork-companion history``: the finished games, newest first; ``--rebuild``
recreates the index from the records."""
from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path


def store_folder(config: str | None, store: str | None) -> Path | None:
    """The store folder: ``--store``, else the config's journal folder (None: config
    errors were printed)."""
    if store:
        return Path(store)
    from ..config import load_or_report, state_dir
    cfg = load_or_report(config)
    return None if cfg is None else state_dir(cfg)


def run_history(config: str | None, store: str | None, rebuild: bool, player: str | None,
                game: str | None, limit: int, as_json: bool) -> int:
    """The command; exit 0, or 2 with a message (no such store, unusable index)."""
    from ..store import History
    from ..store.history import row_text
    folder = store_folder(config, store)
    if folder is None:
        return 2
    history = History(folder)
    if rebuild:
        try:
            report = history.rebuild()
        except (OSError, sqlite3.Error) as exc:
            print(f"history --rebuild: cannot write {history.db_path}: {exc}", file=sys.stderr)
            return 2
        if report.set_aside:
            print(f"{history.db_path}: damaged; kept as {report.set_aside}", file=sys.stderr)
        for path, why in report.skipped:
            print(f"{path}: skipped: {why}", file=sys.stderr)
        print(f"{history.db_path}: {report.games} games indexed from {history.records}"
              + (f", {len(report.skipped)} records skipped" if report.skipped else ""))
        return 0
    if not history.db_path.exists():
        print(f"no history in {folder} yet (no finished game; or run 'history --rebuild')",
              file=sys.stderr)
        return 0 if not history.records.is_dir() else 2
    try:
        with history.index() as index:
            rows = index.games(player=player, game=game, limit=limit)
    except sqlite3.Error as exc:
        print(f"{history.db_path}: {exc}; 'patchwork-companion history --rebuild' recreates it",
              file=sys.stderr)
        return 2
    for row in rows:
        print(json.dumps(row, sort_keys=True) if as_json else row_text(row))
    return 0
