"""The history index, kept off the game loop: one thread does every SQLite write of the service.

Another process may hold the index's write lock for a long time (a ``sqlite3``
shell, a backup tool, ``restore``, ``history --rebuild``); SQLite then makes
a writer wait (10 s per attempt here). The game loop never waits for that:
it saves a finished game's record (a plain file, the truth) and hands the
game to the :class:`Indexer`, whose thread adds the row, tries again every
``retry_s`` seconds while the index is locked or the disk refuses, and checks
that the index and the records agree, at start and after every filing,
rebuilding it from the records when they do not (see
:meth:`~.history.History.reconcile`), said in the log.

Nothing here touches the game: the loop reads :attr:`Indexer.problem` (for
the OLED) and is woken through ``wake()`` when it changes.
"""
from __future__ import annotations

import logging
import sqlite3
import threading
from typing import Callable

from ..rules import GameRecord
from .history import History, StoreError

LOG = logging.getLogger(__name__)


class Indexer:
    """The thread that writes ``history``'s index for the game service.

    ``wake()``: called (from the indexer's thread) when :attr:`problem` changed;
    ``retry_s``: seconds between two attempts while the index refuses a write.
    Thread-safe: :meth:`add`, :meth:`check`, :meth:`idle`, :meth:`wait_idle` and
    :meth:`stop` may be called from any thread.
    """

    def __init__(self, history: History, wake: Callable[[], None] = lambda: None,
                 retry_s: float = 2.0):
        self.history = history
        self.wake = wake
        self.retry_s = retry_s
        self.problem = ""                      # "" or a short text for the OLED
        self._pending: dict[str, GameRecord] = {}
        self._check = False
        self._busy = False
        self._stop = False
        self._cond = threading.Condition()
        self._thread: threading.Thread | None = None

    def start(self) -> "Indexer":
        """Start the thread with a check of index against records; returns self."""
        with self._cond:
            self._check = True
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="history-index",
                                                daemon=True)
                self._thread.start()
        return self

    def add(self, game_id: str, record: GameRecord) -> None:
        """Index ``record``, already saved as ``records/<game_id>.json`` (replacing an
        earlier row of the same game); returns at once."""
        with self._cond:
            self._pending[game_id] = record
            self._check = True
            self._cond.notify()

    def check(self) -> None:
        """Check index against records (and rebuild when they disagree); returns at once."""
        with self._cond:
            self._check = True
            self._cond.notify()

    @property
    def waiting(self) -> int:
        """How many games wait for their index row."""
        with self._cond:
            return len(self._pending)

    def idle(self) -> bool:
        """True when nothing waits and the thread is not working."""
        with self._cond:
            return not (self._pending or self._check or self._busy)

    def wait_idle(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for :meth:`idle`; returns it."""
        with self._cond:
            return self._cond.wait_for(
                lambda: not (self._pending or self._check or self._busy), timeout)

    def stop(self, timeout: float = 1.0) -> None:
        """Stop the thread, waiting up to ``timeout`` seconds for the work in hand. Rows
        still missing are added by the next start's check (the records are saved)."""
        self.wait_idle(timeout)
        with self._cond:
            self._stop = True
            self._cond.notify_all()
        if self._thread is not None:
            self._thread.join(timeout)

    # ----- the thread -----------------------------------------------------------------
    def _run(self) -> None:
        while True:
            with self._cond:
                self._cond.wait_for(lambda: self._stop or self._pending or self._check)
                if self._stop:
                    return
                jobs, check = dict(self._pending), self._check
                self._check, self._busy = False, True
            try:
                failed = self._work(jobs, check)
            finally:
                with self._cond:
                    self._busy = False
                    self._cond.notify_all()
            if failed:
                with self._cond:
                    self._check = self._check or check
                    self._cond.wait_for(lambda: self._stop, self.retry_s)

    def _work(self, jobs: dict[str, GameRecord], check: bool) -> bool:
        """Index ``jobs`` and check; True when the index refused (tried again later)."""
        try:
            for game_id, record in jobs.items():
                try:
                    self.history.index_record(game_id, record)
                except (StoreError, FileNotFoundError) as exc:
                    # not a valid record, or its file removed since: nothing to wait for
                    LOG.error("game %s: record saved, but it cannot be indexed: %s", game_id, exc)
                    self._set_problem("history index: see log")
                self._done(game_id, record)
            if check:
                said = self.history.reconcile()
                if said:
                    LOG.warning("history index: %s", said)
        except (sqlite3.Error, OSError) as exc:
            if self.problem != "history index: waiting":
                LOG.error("history index %s refuses a write (%s: %s); the game goes on, the "
                          "row is added when it takes writes again (tried every %.0f s)",
                          self.history.db_path, type(exc).__name__, exc, self.retry_s)
            self._set_problem("history index: waiting")
            return True
        if self.problem == "history index: waiting":
            LOG.warning("history index %s takes writes again: caught up", self.history.db_path)
            self._set_problem("")
        return False

    def _done(self, game_id: str, record: GameRecord) -> None:
        with self._cond:
            if self._pending.get(game_id) is record:
                del self._pending[game_id]

    def _set_problem(self, text: str) -> None:
        if text != self.problem:
            self.problem = text
            self.wake()
