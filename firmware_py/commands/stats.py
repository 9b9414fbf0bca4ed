"""``patchwork-companion stats``: per player name and per game kind, over finished games.

Per name: games, wins, average and best score, 7x7 rate (share of their
Patchwork games in which they held the special tile), average empty squares
and average final income. ``--game G`` counts only that game; ``--json``
prints the figures as one JSON object.
"""
from __future__ import annotations

import json
import sys

from .common import add_store_options, fail, json_for, reconcile_store, store_folder, GAMES


def add_parser(sub) -> None:
    """Register ``stats``."""
    p = sub.add_parser("stats", help="statistics per player name and per game")
    p.add_argument("--game", choices=GAMES, help="only this game")
    p.add_argument("--json", action="store_true", help="the figures as one JSON object")
    add_store_options(p)
    p.set_defaults(func=run)


def run(args, out=None) -> int:
    """The command; returns the exit status."""
    import sqlite3

    from ..store import History
    from ..store.stats import game_stats, player_stats
    from ..store.text import shown
    out = out or sys.stdout
    folder = store_folder(args)
    if folder is None:
        return 2
    folder.mkdir(parents=True, exist_ok=True)
    reconcile_store(folder)
    try:
        with History(folder).index() as index:
            players = player_stats(index, args.game)
            games = [g for g in game_stats(index) if args.game in (None, g["game"])]
    except sqlite3.Error as exc:
        return fail(f"stats: the index in {folder} cannot be read ({exc})")
    if args.json:
        print(json_for(out, json.dumps({"players": players, "games": games}, ensure_ascii=False)),
              file=out)
        return 0
    print(f"{'player':16} {'games':>5} {'wins':>5} {'avg score':>9} {'best':>5} {'7x7':>5} "
          f"{'avg empty':>9} {'avg income':>10}", file=out)
    for p in players:
        print(f"{shown(p['name'])[:16]:16} {p['games']:5d} {p['wins']:5d} {p['avg_score']:9.2f} "
              f"{p['best_score']:5d} {p['bonus_rate'] * 100:4.0f}% {p['avg_empty']:9.2f} "
              f"{p['avg_income']:10.2f}", file=out)
    print("", file=out)
    print(f"{'game':18} {'games':>5} {'avg score':>9} {'best':>5} {'avg winner':>10} "
          f"{'avg minutes':>11}", file=out)
    for g in games:
        minutes = f"{g['avg_duration_s'] / 60:11.1f}" if g["avg_duration_s"] is not None else \
            f"{'?':>11}"
        print(f"{g['game']:18} {g['games']:5d} {g['avg_score']:9.2f} {g['best_score']:5d} "
              f"{g['avg_winning_score']:10.2f} {minutes}", file=out)
    if not players:
        print(f"no finished games in {folder}", file=out)
    return 0
