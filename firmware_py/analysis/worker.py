"""Analyse every game of the history that has no current analysis, at low priority.

``python -m firmware_py.analysis.worker --store DIR`` is what the web process
starts (and pauses with SIGSTOP while a game is played, resumes with SIGCONT);
``patchwork-companion analyse`` calls :func:`analyse_game` itself. Progress is
written to the store after every decision, so the page can say "analysing:
move 18 of 41". The worker lowers its own priority first (``os.nice``), so the
game service and the web page always come first.
"""
from __future__ import annotations

import argparse
import logging
import os
import signal
import sqlite3
import sys
from typing import Callable

from ..rules import RecordError, parse_record
from ..store import History
from ..store import analyses as stored
from .review import VERSION, Settings, analyse, decisions

LOG = logging.getLogger(__name__)
NICE = 19
"""How much the worker lowers its priority (19: the lowest)."""


class Pause:
    """A pause asked for by signal: SIGUSR1 asks, SIGUSR2 takes the request back. The
    worker calls :meth:`point` between decisions (never inside a database write); with
    a request standing it stops its own process (SIGSTOP) until SIGCONT."""

    def __init__(self):
        self.asked = False

    def install(self) -> None:
        """Handle SIGUSR1/SIGUSR2 (main thread only)."""
        signal.signal(signal.SIGUSR1, lambda *_: setattr(self, "asked", True))
        signal.signal(signal.SIGUSR2, lambda *_: setattr(self, "asked", False))

    def point(self) -> None:
        """A safe point: stop here when a pause is asked for."""
        if self.asked:
            self.asked = False
            os.kill(os.getpid(), signal.SIGSTOP)


def analyse_game(history: History, game_id: str, settings: Settings = Settings(),
                 progress: Callable[[int, int], None] | None = None) -> dict:
    """Analyse game ``game_id`` of ``history`` and keep the result (cache file and table);
    returns it. Progress goes to the store and to ``progress(done, total)`` (optional).
    Raises KeyError for a game not in the history, RecordError for a record that
    does not replay, OSError/sqlite3.Error when the store cannot be read or written."""
    with history.index() as index:
        row = index.db.execute("SELECT record FROM games WHERE id = ?", (game_id,)).fetchone()
    if row is None:
        raise KeyError(game_id)
    record = parse_record((history.records / row["record"]).read_bytes())
    total = decisions(record)
    stored.set_progress(history, game_id, 0, total)

    def step(done: int, of: int) -> None:
        """Note one more decision analysed."""
        stored.set_progress(history, game_id, done, of)
        if progress is not None:
            progress(done, of)
    result = analyse(record, settings, step)
    stored.save(history, game_id, result, VERSION)
    return result


def run_pending(history: History, settings: Settings = Settings(),
                pause: Pause | None = None) -> int:
    """Analyse every game without a current analysis, newest first; returns how many were
    analysed. A record that cannot be analysed is logged and kept with an ``error``.
    ``pause``: its safe point is offered after every decision."""
    count = 0
    point = (lambda done, total: pause.point()) if pause is not None else None
    for game_id in stored.pending(history, VERSION):
        try:
            analyse_game(history, game_id, settings, point)
            count += 1
        except (RecordError, ValueError) as exc:
            LOG.warning("game %s cannot be analysed: %s", game_id, exc)
            stored.save(history, game_id, {"digest": _digest(history, game_id), "error": str(exc)},
                        VERSION)
    stored.clear_progress(history)
    return count


def _digest(history: History, game_id: str) -> str:
    try:
        return stored.record_digest(parse_record(history.record_path(game_id).read_bytes()))
    except (OSError, ValueError):
        return ""


def main(argv: list[str] | None = None) -> int:
    """The worker process: ``--store DIR``; exits 0 when nothing is left to analyse,
    1 when the store cannot be used."""
    parser = argparse.ArgumentParser(prog="python -m firmware_py.analysis.worker")
    parser.add_argument("--store", required=True, help="the store folder (records/, history.sqlite3)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="analysis worker: %(message)s")
    os.nice(NICE)
    pause = Pause()
    pause.install()
    try:
        count = run_pending(History(args.store), pause=pause)
    except (OSError, sqlite3.Error) as exc:
        LOG.error("store %s: %s", args.store, exc)
        return 1
    LOG.info("%d games analysed", count)
    return 0


if __name__ == "__main__":
    sys.exit(main())
