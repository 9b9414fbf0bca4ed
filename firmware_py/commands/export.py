"""``patchwork-companion export``: the history as JSON Lines (the records), CSV, or BG Stats.

``--format jsonl`` (default): every game record, one per line, oldest first;
``csv``: one row per game; ``bgstats``: the BG Stats app's import file, with
BoardGameGeek's ids (Patchwork 163412, Patchwork Express 231326).
``--player``/``--game`` filter; ``-o FILE`` writes a file instead of
standard output.
"""
from __future__ import annotations

import sys
from pathlib import Path

from .common import (add_filters, add_store_options, fail, json_for, reconcile_store,
                     store_folder)


def add_parser(sub) -> None:
    """Register ``export``."""
    p = sub.add_parser("export", help="the history as JSON Lines, CSV or a BG Stats import file")
    p.add_argument("--format", choices=("jsonl", "csv", "bgstats"), default="jsonl")
    add_filters(p)
    p.add_argument("-o", "--output", help="write to this file (default: standard output)")
    add_store_options(p)
    p.set_defaults(func=run)


def run(args, out=None) -> int:
    """The command; returns the exit status."""
    import sqlite3

    from ..disk import write_durably
    from ..store import History
    from ..store.export import to_bgstats_text, to_csv, to_jsonl
    folder = store_folder(args)
    if folder is None:
        return 2
    folder.mkdir(parents=True, exist_ok=True)
    reconcile_store(folder)                         # an export never misses games in silence
    history = History(folder)
    try:
        with history.index() as index:
            if args.format == "csv":
                text = to_csv(index, args.player, args.game)
            elif args.format == "bgstats":
                text = to_bgstats_text(index, args.player, args.game)
            else:
                text = to_jsonl(index, history.records, args.player, args.game)
    except (OSError, sqlite3.Error) as exc:
        return fail(f"export: {exc}")
    if args.output:
        target = Path(args.output)
        try:
            write_durably(target, text.encode())
        except OSError as exc:
            return fail(f"export: cannot write {target}: {exc.strerror or exc}")
        return 0
    out = out or sys.stdout
    out.write(text if args.format == "csv" else json_for(out, text))
    return 0
