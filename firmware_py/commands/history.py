"""``patchwork-companion history``: finished games, newest first; ``history show ID``: one game.

``history`` prints one line per game: id, date, game, time board, both players
with their scores (the first player first), the winner and the duration.
``--player NAME`` and ``--game G`` filter; ``--limit N`` (default 50, 0 = all);
``--json`` prints one JSON object per line instead. ``history show ID`` prints
the tally and a turn-by-turn table (who moved, the move, then both players'
space, buttons, income, empty squares and score after it).
"""
from __future__ import annotations

import json
import sqlite3
import sys

from .common import add_filters, add_store_options, fail, store_folder


def add_parser(sub) -> None:
    """Register ``history``."""
    p = sub.add_parser("history", help="finished games, newest first (history show ID: one game)")
    p.add_argument("show", nargs="*", metavar="show ID",
                   help="'show ID': the tally and a turn-by-turn table of game ID")
    add_filters(p)
    p.add_argument("--limit", type=int, default=50, help="at most this many games (0: all)")
    p.add_argument("--json", action="store_true", help="one JSON object per game")
    add_store_options(p)
    p.set_defaults(func=run)


def run(args, out=None) -> int:
    """The command; returns the exit status (2: bad arguments or no such game)."""
    out = out or sys.stdout
    folder = store_folder(args)
    if folder is None:
        return 2
    if args.show:
        if len(args.show) != 2 or args.show[0] != "show":
            return fail("history: expected 'history show ID' (or no argument for the list)")
        return show(folder, args.show[1], out)
    if args.limit < 0:
        return fail("history: --limit must be 0 (all) or more")
    from ..web.library import Library
    library = Library(folder)
    try:
        rows, total = library.games(args.player, args.game, args.limit or 1 << 62, 0)
    except sqlite3.Error as exc:
        return fail(f"history: the index in {folder} cannot be read ({exc}); "
                    "'patchwork-companion history --rebuild' recreates it from the records")
    for row in rows:
        print(json.dumps(row, ensure_ascii=False) if args.json else line(row), file=out)
    if not args.json:
        shown = f"{len(rows)} of {total}" if len(rows) < total else str(total)
        print(f"{shown} game{'s' if total != 1 else ''} in {folder}", file=out)
    return 0


def line(row: dict) -> str:
    """One history line (a page row of ``web.library``)."""
    when = (row.get("started") or row.get("ended") or "")[:16].replace("T", " ") or "?"
    a, b = row["players"]
    winner = next((p["name"] for p in row["players"] if p["winner"]), "-")
    minutes = f"{row['duration_s'] // 60} min" if row.get("duration_s") is not None else "? min"
    return (f"{row['id']}  {when:16}  {row['game']:17}  {row['time_board']:7}  "
            f"{a['name']} {a['score']} : {b['score']} {b['name']}  winner: {winner}  {minutes}")


def show(folder, game_id: str, out) -> int:
    """Print one game's tally and its turn-by-turn table."""
    from ..web.library import Library
    library = Library(folder)
    found = library.game(game_id)
    if found is None:
        return fail(f"history show: no game {game_id!r} in {folder} "
                    "('patchwork-companion history' lists the ids)")
    row, record = found
    print(f"{row['id']}  {row['game']} ({row['time_board']} time board), "
          f"started {row.get('started') or '?'}", file=out)
    print(f"{'player':12} {'buttons':>7} {'special':>7} {'empty':>5} {'score':>5}", file=out)
    for p in row["players"]:
        mark = "  winner" if p["winner"] else ""
        print(f"{p['name']:12} {p['buttons']:7d} {7 if p['special'] else 0:7d} {p['empty']:5d} "
              f"{p['score']:5d}{mark}", file=out)
    names = [p["name"] for p in row["players"]]
    group = "space buttons income empty score"
    print("", file=out)
    print(f"{'':3}  {'':36}" + "".join(f"  {n[:len(group)]:<{len(group)}}" for n in names),
          file=out)
    print(f"{'#':>3}  {'move':36}" + f"  {group}" * 2, file=out)
    for k, frame in enumerate(library.replay_steps(record)[1:], 1):
        cells = "".join(f"  {p['position']:5d} {p['buttons']:7d} {p['income']:6d} {p['empty']:5d} "
                        f"{p['score']:5d}" for p in frame["players"])
        text = frame["text"].split(": ", 1)[1]
        print(f"{k:3d}  {text[:36]:36}{cells}".rstrip(), file=out)
    return 0
