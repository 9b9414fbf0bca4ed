"""``patchwork-companion analyse ID`` (or ``--all``): what each decision of a saved game
cost, by the box's searcher, with a progress bar.

The analysis is kept beside the history (``history show ID --analysis`` prints
it, the page draws it); ``--all`` analyses every game without a current
analysis, newest first. The web page's worker does the same in the background.
"""
from __future__ import annotations

import sqlite3
import sys

from .common import add_store_options, fail, store_folder
from .history import player_names

BAR = 30


def add_parser(sub) -> None:
    """Register ``analyse``."""
    p = sub.add_parser("analyse", help="analyse a saved game (what each decision cost); "
                       "--all: every game not analysed yet")
    p.add_argument("game_id", nargs="?", metavar="ID", help="the game ('history' lists the ids)")
    p.add_argument("--all", action="store_true", help="every game without a current analysis")
    add_store_options(p)
    p.set_defaults(func=run)


def bar(label: str, done: int, total: int) -> str:
    """One progress-bar line, e.g. ``20261201-1904-ab12cd [#####.....] move 18 of 41``."""
    filled = BAR * done // max(total, 1)
    return f"\r{label} [{'#' * filled}{'.' * (BAR - filled)}] move {done} of {total}"


def run(args, out=None) -> int:
    """The command; returns the exit status (2: bad arguments, unknown game, unusable store)."""
    from ..analysis import VERSION
    from ..analysis.describe import report_lines
    from ..analysis.worker import analyse_game
    from ..rules import RecordError
    from ..store import History
    from ..store import analyses as stored
    out = out or sys.stdout
    if bool(args.all) == bool(args.game_id):
        return fail("analyse: give one game ID, or --all")
    folder = store_folder(args)
    if folder is None:
        return 2
    history = History(folder)
    if not history.db_path.exists():
        return fail(f"analyse: no history in {folder} ('patchwork-companion history --rebuild' "
                    "indexes saved records)")
    try:
        ids = stored.pending(history, VERSION) if args.all else [args.game_id]
        for game_id in ids:
            def show(done: int, total: int, label=game_id) -> None:
                """Redraw the progress bar on standard error (a terminal; else only the end)."""
                if done == total or sys.stderr.isatty():
                    print(bar(label, done, total), end="", file=sys.stderr, flush=True)
            result = analyse_game(history, game_id, progress=show)
            print(file=sys.stderr)
            if not args.all:
                names = player_names(history, game_id)
                print("\n".join(report_lines(result, names)), file=out)
        if args.all:
            print(f"{len(ids)} games analysed", file=out)
    except KeyError:
        return fail(f"analyse: no game {args.game_id!r} in {folder} "
                    "('patchwork-companion history' lists the ids)")
    except RecordError as exc:
        return fail(f"analyse: the record does not replay: {exc}")
    except (OSError, sqlite3.Error) as exc:
        return fail(f"analyse: {exc}")
    finally:
        try:
            stored.clear_progress(history)
        except (OSError, sqlite3.Error):
            pass
    return 0
