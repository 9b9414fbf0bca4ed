"""Keeping the game on disk: the journal of the game in progress, its snapshot, and
the history of finished games, whatever the disk does.

The :class:`Keeper` belongs to the service's loop thread. The loop writes each
journal entry the table asks for through :meth:`Keeper.write` before it shows the
turn and files a finished game through :meth:`Keeper.save_record`; it calls
:meth:`Keeper.tick` after every refresh (the snapshot, the retries) and wakes at
:attr:`Keeper.retry_at`. The keeper never touches the table: what the loop must know
(a warning to show or take away, where a record went) it hands back as outcomes
(:class:`Warn`, :class:`Saved`) from :meth:`Keeper.outcomes`, in the order they came.

- A new game gets its id and start time in its setup entry, an end its end
  time; the record's ``meta`` gets ``started``, ``ended`` and ``app`` from them
  where the session gave none.
- Every entry carries ``t``: the game's play seconds so far by the monotonic
  clock. After a restart the count goes on from the last entry's ``t``, so the
  time the box was off (and the moments between the last entry and the cut) is
  not counted. The end's ``t`` is the record's ``duration_s``; the dates are
  reconciled with it by :func:`.store.dates.reconcile` (a clock set or stepped
  mid-game never makes a game last 56 years or end before it started).
- A write the disk refuses (journal, snapshot, record) is kept in memory and
  tried again every :data:`RETRY_S` seconds, without any input; the OLED
  says "not saving: <why> (<folder>)" meanwhile.
- The loop thread never touches the SQLite index: a finished game's record is
  saved here, its index row is added by the :class:`~.store.indexer.Indexer`
  thread (which waits out a lock held by another process, and rebuilds an
  index that lost rows).
- A new game replaces the journal only once the last game's record is saved:
  until then its entries wait in memory.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import re
from datetime import datetime
from pathlib import Path
from typing import Callable

from ..companion.journal import Journal, JournalError, Loaded, reason_of, writable_error
from ..rules import RecordError, parse_record, replay
from ..store import History, new_game_id
from ..store.backup import finish_pending
from ..store.dates import reconcile
from ..store.indexer import Indexer

LOG = logging.getLogger(__name__)


@dataclasses.dataclass(frozen=True)
class Warn:
    """Show the warning ``text`` under ``key`` ("journal", "journal damage", "record",
    "history"), or take it away (``text`` None)."""

    key: str
    text: str | None


@dataclasses.dataclass(frozen=True)
class Saved:
    """The record of the game the table holds was filed at ``path``."""

    path: str


Outcome = Warn | Saved

_SAFE_ID = re.compile(r"[0-9A-Za-z][0-9A-Za-z_-]{0,63}")   # a record file name, as new_game_id
RETRY_S = 2.0          # a refused write (journal, snapshot, record) is tried again this often


class Keeper:
    """The journal and the history in ``folder``; ``clock``: monotonic seconds; ``wall``:
    the wall clock (an aware ``datetime``); ``wake()``: wake the loop (from the index
    thread) so that it calls :meth:`tick`. What the loop must know (a warning to show
    or take away, where a record went) comes back from :meth:`outcomes`."""

    def __init__(self, folder: Path, clock: Callable[[], float], wall: Callable[[], datetime],
                 wake: Callable[[], None] = lambda: None):
        self.folder = folder
        self.clock, self.wall = clock, wall
        self.journal = Journal(folder)
        self.history = History(folder)
        self.indexer = Indexer(self.history, wake, RETRY_S)
        self._out: list[Outcome] = []
        self.retry_at: float | None = None
        self.failing = False                       # the disk refuses writes (told once)
        self._unsaved: dict[str, object] = {}      # game id -> record not yet on disk
        self._play_from = (0.0, clock())           # (play seconds, monotonic seconds) then
        self._one_run = False                      # the game was set up in this run
        self._history_said = ""                    # the index thread's trouble last said

    # ----- start-up -------------------------------------------------------------------------
    def load(self, problem: Callable[[str], None]) -> Loaded:
        """Say when the folder is not writable, remove writes cut short, finish a restore cut
        short, start the index thread (its first work: check the index against the records)
        and load the journal; each finding goes to ``problem(text)``. This thread reads
        nothing of the history's index."""
        refused = writable_error(self.folder)
        if refused is not None:
            problem(f"the journal folder {self.folder} is not writable ({reason_of(refused)}: "
                    f"{refused.strerror or refused}); games are kept in memory only until it is")
            self.failing = True
        self.history.remove_temporary()
        self._finish_restore(problem)
        self.indexer.start()                       # first: index and records agree?
        loaded = self.journal.load()
        self._play_from = (_played(loaded.entries), self.clock())    # goes on after a restart
        for text in loaded.problems:
            problem(text)
        if loaded.notice:
            self._out.append(Warn("journal damage", loaded.notice))
        return loaded

    def outcomes(self) -> list[Outcome]:
        """What happened since the last call that the loop must know (oldest first)."""
        out, self._out = self._out, []
        return out

    def _finish_restore(self, problem: Callable[[str], None]) -> None:
        """A ``restore`` cut short by a power cut: finished (or undone) before anything
        else reads the store."""
        try:
            for text in finish_pending(self.folder, rebuild=False):   # the index thread's
                LOG.warning("%s", text)
        except OSError as exc:
            problem(f"a restore cut short in {self.folder} could not be completed ({exc}); "
                    f"run 'patchwork-companion restore' again")

    def resumed(self, view) -> None:
        """After the table resumed (``view``: its ``TableView``): file a game that ended
        before the restart (once), and write what the load found to repair."""
        if view.mode == "end" and view.session is not None and not view.saved_to:
            self._ensure_record(view.session)
        self.catch_up(self.clock())

    # ----- the journal ----------------------------------------------------------------------
    def write(self, body: dict) -> int:
        """Journal one entry (the loop calls this before it shows a turn). Raises JournalError
        when the disk refuses (the entry is kept in memory and written when the disk takes
        writes); a new game waits in memory until the last game's record is saved."""
        body = self._stamped(body)
        if self._unsaved and self._waits(body):
            self.catch_up(self.clock())
        if self._unsaved and self._waits(body):
            self.journal.hold(body)
            self.retry_at = self.clock() + RETRY_S
            raise JournalError("the last game's record is not saved yet; the new game waits "
                               "in memory", "record not saved", self.folder)
        try:
            seq = self.journal.append(body)
        except JournalError as exc:
            self._refused(exc)
            raise
        finally:
            for moved in self.journal.take_moved():
                LOG.warning("%s", moved)
        if body.get("kind") == "setup":
            self._out.append(Warn("journal damage", None))   # said for the game it concerned
        if self.failing:
            # the line went in; caught up only once the snapshot (refused before) does too
            try:
                self.journal.flush_snapshot()
            except JournalError as exc:
                self._refused(exc)
                raise
            LOG.warning("journal in %s writable again: caught up", self.folder)
            self.failing = False
        return seq

    def _waits(self, body: dict) -> bool:
        """True when ``body`` belongs to a game after the one whose record is not saved yet
        (it must wait in memory: the journal keeps the last game until its record is saved)."""
        return body.get("kind") == "setup" or self.game_id() not in self._unsaved

    def _stamped(self, body: dict) -> dict:
        kind = body.get("kind")
        if kind == "setup":
            self._play_from, self._one_run = (0.0, self.clock()), True
        played, since = self._play_from
        body = {**body, "t": round(played + self.clock() - since, 1)}
        if kind == "setup" and "id" not in body:
            now = self.wall()
            return {**body, "id": new_game_id(now), "started": now.isoformat(timespec="seconds")}
        if kind == "end" and "ended" not in body:
            return {**body, "ended": self.wall().isoformat(timespec="seconds")}
        return body

    def _refused(self, exc: JournalError) -> None:
        """The disk refused a write: log it once, retry by itself later."""
        if not self.failing:
            LOG.error("%s; the game goes on in memory until the disk takes writes again", exc)
        self.failing = True
        if self.retry_at is None:
            self.retry_at = self.clock() + RETRY_S

    def stop(self) -> None:
        """Stop the index thread (a row it could not add yet is added at the next start)."""
        self.indexer.stop()

    def tick(self, now: float) -> None:
        """After the outputs are updated: the snapshot (the second copy of the game) if an
        entry came, the retries when due, and the index thread's warning."""
        self._history_warning()
        if self.journal.snapshot_due and not self.failing:
            try:
                self.journal.flush_snapshot()
            except JournalError as exc:
                self._refused(exc)
                self._out.append(Warn("journal", exc.notice))   # "not saving: disk full (/folder)"
        if self.retry_at is not None and now >= self.retry_at:
            self.catch_up(now)

    def catch_up(self, now: float) -> None:
        """Write what the disk refused before: records first (the next game may replace the
        journal only then), then the journal and its snapshot. Clears the warnings it can;
        tries again in :data:`RETRY_S` seconds while something is still refused."""
        self.retry_at = None
        self._save_pending()
        try:
            if self._unsaved and self.game_id() not in self._unsaved:
                # a new game waits in memory: the journal still holds the last game, whose
                # record is not saved yet, and must keep it until it is
                raise JournalError("the last game's record is not saved yet", "record not saved",
                                   self.folder)
            for moved in self.journal.catch_up():
                LOG.warning("%s", moved)
            self.journal.flush_snapshot()
            refused = writable_error(self.folder) if self.failing else None
            if refused is not None:
                raise self.journal.error(refused)
        except JournalError as exc:
            self._refused(exc)
            self._out.append(Warn("journal", exc.notice))
        else:
            if self.failing:
                LOG.warning("journal in %s writable again: caught up", self.folder)
            self.failing = False
            self._out.append(Warn("journal", None))
        if self._unsaved or self.journal.pending or self.failing:
            self.retry_at = now + RETRY_S

    # ----- records --------------------------------------------------------------------------
    def game_id(self, entries: list[dict] | None = None) -> str:
        """The id of the game the journal holds (a game journaled before ids were given, or
        whose id is not a safe file name, gets one derived from its setup, the same after
        every restart); it names the record file, so it never holds "/" or ".."."""
        entries = self.journal.entries if entries is None else entries
        setup = entries[0] if entries and entries[0].get("kind") == "setup" else {}
        if isinstance(setup.get("id"), str) and _SAFE_ID.fullmatch(setup["id"]):
            return setup["id"]
        digest = hashlib.sha1(json.dumps(setup, sort_keys=True).encode()).hexdigest()[:12]
        return f"game-{digest}"

    def record(self, session):
        """The finished game's record as the session makes it, with its result, and the
        start and end times (and app) from the journal where the session gave none."""
        record = session.record()
        entries = self.journal.entries
        meta = dict(record.meta or {})
        started = entries[0].get("started") if entries else None
        ended = next((e.get("ended") for e in reversed(entries) if e.get("kind") == "end"), None)
        for key, value in (("started", started), ("ended", ended), ("app", _app())):
            if value and key not in meta:
                meta[key] = value
        end = next((e for e in reversed(entries) if e.get("kind") == "end"), None)
        play = _played([end]) if end is not None and "t" in end else None
        meta.pop("duration_s", None)              # the session's is the dates' difference
        meta.update(reconcile(meta.get("started"), meta.get("ended"), play, self._one_run))
        changes = {"meta": meta or None}
        _, result = replay(record)
        if result.over and record.result is None:
            changes["result"] = {"scores": result.scores, "winner": result.winner}
        return dataclasses.replace(record, **changes)

    def _ensure_record(self, session) -> None:
        """After a restart on the end screen: the game is in the history once (power was
        cut between journaling the end and filing it, or after). Its record is saved
        when no readable one is; its row is the index thread's."""
        game_id = self.game_id()
        path = self.history.record_path(game_id)
        try:
            record = parse_record(path.read_bytes())
        except (OSError, RecordError, ValueError, RecursionError):
            self._out.append(Saved(self.save_record(session)))
            return
        self.indexer.add(game_id, record)
        self._out.append(Saved(str(path)))

    def save_record(self, session) -> str:
        """File the finished game into the history: its record now (a plain durable file
        write), its index row by the index thread; returns where the record is, or ""
        when the disk refused the record: the OLED then says "record not saved: <why>
        (<records folder>)" and the game is kept and filed by itself once the disk
        takes writes."""
        game_id = self.game_id()
        record = self.record(session)
        try:
            path = self.history.save(game_id, record)
        except OSError as exc:
            self._unsaved[game_id] = record
            self.retry_at = self.clock() + RETRY_S
            LOG.error("cannot save the record of game %s in %s: %s; kept in memory, tried again "
                      "every %.0f s", game_id, self.history.records, exc, RETRY_S)
            self._out.append(Warn("record", self._record_notice(exc)))
            return ""
        self.indexer.add(game_id, record)
        return str(path)

    def _record_notice(self, exc: OSError) -> str:
        """The OLED text for a refused record, e.g. "record not saved: disk full
        (/var/lib/patchwork-companion/records)"."""
        return f"record not saved: {reason_of(exc)} ({self.history.records})"

    def _history_warning(self) -> None:
        """The index thread's trouble on the OLED ("history index: waiting" while another
        process holds the index), gone once it is over."""
        problem = self.indexer.problem
        if problem != self._history_said:
            self._history_said = problem
            self._out.append(Warn("history", problem or None))

    def _save_pending(self) -> None:
        """Try the records the disk refused before (oldest first)."""
        for game_id, record in list(self._unsaved.items()):
            try:
                path = self.history.save(game_id, record)
            except OSError:
                return
            self.indexer.add(game_id, record)
            del self._unsaved[game_id]
            LOG.warning("record of game %s saved: %s", game_id, path)
            if self.game_id() == game_id:
                self._out.append(Saved(str(path)))      # the table's game, if it still has one
            if not self._unsaved:
                self._out.append(Warn("record", None))


def _played(entries: list[dict]) -> float:
    """The play seconds of the latest stamped entry of ``entries`` (0.0 when none is)."""
    stamps = [e["t"] for e in entries if isinstance(e.get("t"), (int, float))
              and not isinstance(e.get("t"), bool) and 0 <= e["t"] < 1e9]
    return float(max(stamps, default=0.0))


def _app() -> str:
    """The program and version that write the records, e.g. "patchwork-companion 0.1.0"."""
    from importlib import metadata
    try:
        return f"patchwork-companion {metadata.version('patchwork-companion')}"
    except metadata.PackageNotFoundError:
        return "patchwork-companion"
