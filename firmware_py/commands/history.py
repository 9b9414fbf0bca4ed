"""``patchwork-companion history``: finished games, newest first; ``history show ID``: one game;
``history --rebuild``: recreate the index from the saved records (and the post-game
analyses from their cache); ``history show ID --analysis``: also what each decision cost.

``history`` prints one line per game: id, date, game, time board, both players
with their scores (the first player first), the winner and the duration.
``--player NAME`` and ``--game G`` filter; ``--limit N`` (default 50, 0 = all);
``--json`` prints one JSON object (an index row) per line instead. ``history
show ID`` prints the tally and a turn-by-turn table (who moved, the move, then
both players' space, buttons, income, empty squares and score after it).
"""
from __future__ import annotations

import sqlite3
import sys

from .common import add_filters, add_store_options, fail, reconcile_store, store_folder


def add_parser(sub) -> None:
    """Register ``history``."""
    p = sub.add_parser("history", help="finished games, newest first (history show ID: one game; "
                       "--rebuild: recreate the index from the saved records)")
    p.add_argument("show", nargs="*", metavar="show ID",
                   help="'show ID': the tally and a turn-by-turn table of game ID")
    add_filters(p)
    p.add_argument("--limit", type=int, default=50, help="at most this many games (0: all)")
    p.add_argument("--json", action="store_true", help="one JSON object per game")
    p.add_argument("--rebuild", action="store_true", help="recreate the index from records/*.json")
    p.add_argument("--analysis", action="store_true",
                   help="with 'show ID': also what each decision cost (see 'analyse')")
    add_store_options(p)
    p.set_defaults(func=run)


def run(args, out=None) -> int:
    """The command; returns the exit status (2: bad arguments, no such game, unusable index)."""
    from ..store import History
    out = out or sys.stdout
    folder = store_folder(args)
    if folder is None:
        return 2
    history = History(folder)
    if args.rebuild:
        return rebuild(history, out)
    if args.show:
        if len(args.show) != 2 or args.show[0] != "show":
            return fail("history: expected 'history show ID' (or no argument for the list)")
        status = show(folder, args.show[1], out)
        return analysis(history, args.show[1], out) if status == 0 and args.analysis else status
    if args.limit < 0:
        return fail("history: --limit must be 0 (all) or more")
    reconcile_store(folder)                         # a deleted index comes back here
    if not history.db_path.exists():
        print(f"no history in {folder} yet (no finished game; or run 'history --rebuild')",
              file=sys.stderr)
        return 0 if not history.records.is_dir() else 2
    from ..store.history import dumps_row, row_text
    from ..store.stats import page_of_games
    try:
        with history.index() as index:
            rows = page_of_games(index, args.player, args.game, args.limit or 1 << 62, 0)
    except sqlite3.Error as exc:
        return fail(f"{history.db_path}: {exc}; 'patchwork-companion history --rebuild' "
                    "recreates it")
    for row in rows:
        print(dumps_row(row) if args.json else row_text(row), file=out)
    return 0


def rebuild(history, out) -> int:
    """``history --rebuild``: recreate the index from the records (skipped files are listed)."""
    try:
        report = history.rebuild()
    except (OSError, sqlite3.Error) as exc:
        locked = isinstance(exc, sqlite3.OperationalError) and "locked" in str(exc)
        hint = (" (another process holds the index: the service while it files a game, a "
                "sqlite3 shell, a backup tool, restore? Try again once it lets go)"
                if locked else "")
        print(f"history --rebuild: cannot write {history.db_path}: {exc}{hint}", file=sys.stderr)
        return 2
    if report.set_aside:
        print(f"{history.db_path}: damaged; kept as {report.set_aside}", file=sys.stderr)
    for path, why in report.skipped:
        print(f"{path}: skipped: {why}", file=sys.stderr)
    print(f"{history.db_path}: {report.games} games indexed from {history.records}"
          + (f", {len(report.skipped)} records skipped" if report.skipped else "")
          + (f", {report.analyses} analyses taken from the cache" if report.analyses else ""),
          file=out)
    return 0


def analysis(history, game_id: str, out) -> int:
    """``history show ID --analysis``: the stored analysis after the turn table (a note when
    there is none yet)."""
    from ..analysis import VERSION
    from ..analysis.describe import report_lines
    from ..store import analyses as stored
    from ..store.text import shown as _shown
    try:
        found = stored.load(history, game_id, VERSION)
        names = player_names(history, game_id)
    except sqlite3.Error as exc:
        return fail(f"{history.db_path}: {exc}")
    print("", file=out)
    if found is None:
        print(f"not analysed yet: 'patchwork-companion analyse {_shown(game_id)}' does it now",
              file=out)
        return 0
    print("\n".join(report_lines(found, names)), file=out)
    return 0


def show(folder, game_id: str, out) -> int:
    """Print one game's tally and its turn-by-turn table (control characters of a record's
    names shown escaped, as in the list)."""
    from ..store.text import shown as _shown
    from ..store.wording import duration_text, result_text, when_text
    from ..web.library import Library
    library = Library(folder)
    found = library.game(game_id)
    if found is None:
        return fail(f"history show: no game {game_id!r} in {folder} "
                    "('patchwork-companion history' lists the ids)")
    row, record = found
    print(f"{_shown(row['id'])}  {row['game']} ({row['time_board']} time board), "
          f"started {_shown(when_text(row.get('started'), row.get('ended')) or '?')}"
          + (f", {duration_text(row.get('duration_s'))}" if row.get("duration_s") else ""),
          file=out)
    print(f"{'player':12} {'buttons':>7} {'special':>7} {'empty':>5} {'score':>5}", file=out)
    for p in row["players"]:
        mark = "  winner" if p["winner"] else ""
        print(f"{_shown(p['name']):12} {p['buttons']:7d} {7 if p['special'] else 0:7d} {p['empty']:5d} "
              f"{p['score']:5d}{mark}", file=out)
    names = [_shown(p["name"]) for p in row["players"]]
    winner = next((i for i, p in enumerate(row["players"]) if p["winner"]), None)
    print(result_text(names, [p["score"] for p in row["players"]], winner,
                      bool(row.get("tie_break"))), file=out)
    group = "space buttons income empty score"
    print("", file=out)
    print(f"{'':3}  {'':36}" + "".join(f"  {n[:len(group)]:<{len(group)}}" for n in names),
          file=out)
    print(f"{'#':>3}  {'move':36}" + f"  {group}" * 2, file=out)
    for k, frame in enumerate(library.replay_steps(record)[1:], 1):
        cells = "".join(f"  {p['position']:5d} {p['buttons']:7d} {p['income']:6d} {p['empty']:5d} "
                        f"{p['score']:5d}" for p in frame["players"])
        text = _shown(frame["text"].split(": ", 1)[1].split(" (")[0].split(",")[0].split(";")[0])
        print(f"{k:3d}  {text[:36]:36}{cells}".rstrip(), file=out)
    return 0


def player_names(history, game_id: str) -> tuple[str, str]:
    """The two players' names of ``game_id`` from the index, first player first
    (control characters shown escaped); ``("first", "second")`` when not indexed."""
    from ..store.text import shown as _shown
    with history.index() as index:
        rows = index.db.execute("SELECT name FROM players WHERE game_id = ? ORDER BY seat",
                                (game_id,)).fetchall()
    return tuple(_shown(r["name"]) for r in rows) if len(rows) == 2 else ("first", "second")
