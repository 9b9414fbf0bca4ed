"""Filing finished games: the record file first (the truth), then its index row.

The API the game service and the commands use:

* :func:`new_game_id` -- a new game's id.
* :meth:`History.save` -- save a finished game's record only (the service's
  loop thread; its row is added by the :class:`~.indexer.Indexer` thread).
* :meth:`History.file` -- save a finished game (record + index row); again
  for the same id replaces both, so a game is in the history once.
* :meth:`History.ensure` -- index the record already saved, or save it now.
* :meth:`History.reconcile` -- rebuild the index when its rows and the
  records disagree (a deleted or emptied index), saying so.
* :meth:`History.rebuild` -- recreate the index from ``records/*.json``.
* :meth:`History.index` -- the open :class:`~.index.Index` for queries.
"""
from __future__ import annotations

import json
import os
import secrets
import sqlite3
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Callable

from ..disk import make_folder, remove_temporaries, write_durably
from ..rules import GameRecord, RecordError, dumps_record, parse_record, replay
from .analyses import restore
from .index import Index
from .dates import clock_set, parse as parse_date, trusted_duration
from .text import shown as _shown
from .wording import duration_text, scores_text, when_text

RECORDS, DATABASE, TEMPORARY = "records", "history.sqlite3", "record.tmp"   # TEMPORARY: older versions
MAX_DURATION_S = 10 ** 9       # a larger meta.duration_s (over 30 years) is not a duration


class StoreError(ValueError):
    """A record that cannot be indexed (not a valid record); says which file and why."""


def new_game_id(now: datetime) -> str:
    """A new game id: local start time and 6 random hex digits, e.g. "20261201-190400-3fa2c1"
    (sorts by start time, safe as a file name)."""
    return f"{now:%Y%m%d-%H%M%S}-{secrets.token_hex(3)}"


def _sort_time(started, ended, mtime: float) -> float:
    """When a game ended for sorting: its end, else its start, if taken by a set clock,
    else the record file's time."""
    for text in (ended, started):
        if clock_set(text):
            return parse_date(text).timestamp()
    return mtime


def summarise(record: GameRecord, game_id: str, name: str, size: int, mtime: float) -> dict:
    """The index row of ``record`` (saved as ``name`` in the records folder, ``size``
    bytes, modified at ``mtime``): the game columns of :data:`.index.GAME_COLUMNS` and
    ``players`` (two dicts). Replays the record; raises :class:`StoreError` when it does
    not replay."""
    try:
        state, result = replay(record)
    except (RecordError, ValueError) as exc:
        raise StoreError(f"{name}: does not replay: {exc}") from exc
    meta = record.meta if isinstance(record.meta, dict) else {}
    started, ended = meta.get("started"), meta.get("ended")
    duration = trusted_duration(meta, MAX_DURATION_S)
    layout = getattr(record, "layout", None) or meta.get("layout") or "dealt"
    players = [{"name": record.players[i], "score": t.score, "buttons": t.buttons,
                "income": state.players[i].income, "empty": t.empty,
                "special": int(state.special == i), "winner": int(result.winner == i)}
               for i, t in enumerate(result.players)]
    return {"id": game_id, "record": name, "started": started if isinstance(started, str) else None,
            "ended": ended if isinstance(ended, str) else None,
            "ended_unix": _sort_time(started, ended, mtime), "duration_s": duration,
            "game": record.game, "time_board": record.time_board, "layout": str(layout),
            "finished": int(result.over), "moves": len(record.moves), "winner": result.winner,
            "tie_break": int(result.tie_break), "app": meta.get("app") if isinstance(
                meta.get("app"), str) else None, "size": size, "players": players}


@dataclass
class RebuildReport:
    """What :meth:`History.rebuild` did: ``games`` indexed, ``skipped`` (file, why) pairs,
    ``set_aside``: where the damaged database went; ``analyses``: post-game analyses
    taken back from their cache."""

    games: int = 0
    skipped: list[tuple[str, str]] = field(default_factory=list)
    set_aside: str = ""       # where a damaged database file was moved, "" when none was
    analyses: int = 0         # analyses taken back from the cache (analysis/<id>.json)


class History:
    """The store in ``folder`` (the journal folder): ``records/`` and ``history.sqlite3``.

    Nothing is read or opened until a method needs it (the service creates one
    at start-up for free).
    """

    def __init__(self, folder: str | Path):
        self.folder = Path(folder)
        self.records = self.folder / RECORDS
        self.db_path = self.folder / DATABASE
        self._unindexable: set[str] = set()    # game ids whose record the last rebuild skipped

    def record_path(self, game_id: str) -> Path:
        """Where the record of ``game_id`` is (or will be) saved."""
        return self.records / f"{game_id}.json"

    def index(self) -> Index:
        """The index, opened (and created with its schema when missing)."""
        return Index(self.db_path)

    def remove_temporary(self) -> None:
        """Remove record writes cut short by a crash (the temporary files of
        :func:`firmware_py.disk.write_durably` in ``records/``, and ``record.tmp`` of older
        versions); a no-op otherwise. At start-up only: a writer's file in flight goes too."""
        try:
            os.unlink(self.folder / TEMPORARY)
        except OSError:
            pass
        remove_temporaries(self.records)

    def save(self, game_id: str, record: GameRecord) -> Path:
        """Save ``record`` as ``records/<game_id>.json`` (durable: see ``firmware_py.disk``);
        returns the path. No index work (the service's loop thread saves, the
        :class:`~.indexer.Indexer` thread indexes). Raises OSError (nothing written, no
        temporary file left)."""
        path = self.record_path(game_id)
        data = (dumps_record(record) + "\n").encode()
        make_folder(self.folder)
        make_folder(self.records, shared=True)     # the group's too where the folder is
        write_durably(path, data, 0o644)
        return path

    def file(self, game_id: str, record: GameRecord) -> Path:
        """Save ``record`` (:meth:`save`), then index it (:meth:`index_record`).

        Raises OSError when the record cannot be written (nothing indexed, no
        temporary file left), ``sqlite3.Error`` when only the index failed (the
        record is saved: the next check or ``history --rebuild`` indexes it),
        :class:`StoreError` when the record does not replay (it is saved anyway).
        """
        path = self.save(game_id, record)
        self.index_record(game_id, record, path)
        return path

    def ensure(self, game_id: str, make_record: Callable[[], GameRecord]) -> Path:
        """The game ``game_id`` is in the history once: index its saved record if the index
        lacks it, or save ``make_record()`` when no readable record is saved. Errors as
        :meth:`file`."""
        path = self.record_path(game_id)
        try:
            record = parse_record(path.read_bytes())
        except (OSError, RecordError, ValueError, RecursionError):
            return self.file(game_id, make_record())
        with self.index() as index:
            if index.has(game_id):
                return path
        self.index_record(game_id, record, path)
        return path

    def index_record(self, game_id: str, record: GameRecord, path: Path | None = None) -> None:
        """Add or replace the index row of ``record`` saved at ``path`` (default: its place
        in ``records/``). Raises :class:`StoreError` (does not replay), ``sqlite3.Error``
        (locked past the 10 s busy wait, disk full), OSError (the record file is gone)."""
        path = path or self.record_path(game_id)
        row = self._row(game_id, record, path)
        with self.index() as index:
            index.upsert(row)

    def refile(self, game_id: str, record: GameRecord) -> Path:
        """Rewrite a saved game's record and its index row as one change (a correction of
        its names on the web page): the index's write lock is taken first, then the record
        saved, then its row replaced. Raises ``sqlite3.OperationalError`` when another
        process holds the index past the 10 s busy wait, OSError when the disk refuses
        the record: in both cases nothing changed (the record and its row still agree;
        :meth:`file` would leave a renamed record under a row no check finds stale).
        :class:`StoreError` as :meth:`index_record`."""
        path = self.record_path(game_id)
        with self.index() as index:
            with index.transaction():
                self.save(game_id, record)
                index.put(self._row(game_id, record, path))
        return path

    @staticmethod
    def _row(game_id: str, record: GameRecord, path: Path) -> dict:
        st = path.stat()
        return summarise(record, game_id, path.name, st.st_size, st.st_mtime)

    def disagreement(self) -> str:
        """"" when the index holds exactly one row per record file of ``records/``; else
        what differs, e.g. "the index holds 1 of 4 saved games" or "2 rows have no record".
        Record files that could not be indexed at the last :meth:`rebuild` of this object
        (not a valid record) are not counted, nor are record files without a row that are
        not valid records (read until the first valid one: an invalid record must not make
        every command rebuild the index). Raises sqlite3.Error, OSError."""
        files = {p.stem for p in self.records.glob("*.json")} if self.records.is_dir() else set()
        files -= self._unindexable
        if not self.db_path.exists():               # not made here when nothing is to go in
            return f"the index is missing, with {_games(len(files))} saved" if files else ""
        with self.index() as index:
            rows = {r[0] for r in index.db.execute("SELECT id FROM games")}
        unrowed = sorted(files - rows)
        while unrowed and not self._indexable(unrowed[0]):  # no rebuild would add its row
            self._unindexable.add(unrowed.pop(0))
        files -= self._unindexable
        missing, extra = len(unrowed), len(rows - files)
        parts = []
        if missing:
            parts.append(f"the index holds {len(files & rows)} of {len(files)} saved games")
        if extra:
            parts.append(f"{extra} row{'s have' if extra != 1 else ' has'} no record file")
        return "; ".join(parts)

    def reconcile(self) -> str:
        """Rebuild the index from the records when they disagree (see :meth:`disagreement`);
        returns what was found and done for the log ("" when they agreed). Raises
        sqlite3.Error, OSError as :meth:`rebuild`."""
        why = self.disagreement()
        if not why:
            return ""
        report = self.rebuild()
        text = (f"{self.db_path}: {why} (deleted, emptied or restored from an old copy?); "
                f"rebuilt from {self.records}: {_games(report.games)} indexed")
        if report.skipped:
            text += f", {len(report.skipped)} records skipped ({report.skipped[0][0]}: " \
                    f"{report.skipped[0][1]})"
        if report.set_aside:
            text += f"; the damaged database is kept as {report.set_aside}"
        return text

    def rebuild(self) -> RebuildReport:
        """Recreate the index from ``records/*.json`` in one transaction (readers see the
        old or the new index). A database file that is not one is moved aside as
        ``history.sqlite3.corrupt`` first. Unreadable records are listed, not indexed.

        The records are listed and read while the index's write lock is held, one at a
        time (memory: one record, whatever the number of games). A game filed at the
        same time (by this process or another) saves its record before it takes that
        lock for its row, so its row is either in the rebuilt index or written after
        it; it is never dropped."""
        report = RebuildReport()
        make_folder(self.folder)
        index = self._sound_index(report)
        with index:
            with index.transaction():
                index.db.execute("DELETE FROM players")
                index.db.execute("DELETE FROM games")
                for path in sorted(self.records.glob("*.json")) if self.records.is_dir() else []:
                    why = self._index_one(index, path)
                    if why:
                        report.skipped.append((str(path), why))
                    else:
                        report.games += 1
        self._unindexable = {Path(path).stem for path, _ in report.skipped}
        report.analyses = restore(self)
        return report

    def _index_one(self, index: Index, path: Path) -> str:
        """Read, replay and insert the record at ``path`` inside the rebuild's transaction;
        "" or why it is not indexed."""
        try:
            row = self._row_of(path)
        except _UNREADABLE as exc:
            return str(exc)
        return self._put_or_skip(index, row)

    @staticmethod
    def _row_of(path: Path) -> dict:
        """The index row of the record file at ``path``; raises one of ``_UNREADABLE``."""
        st = path.stat()
        return summarise(parse_record(path.read_bytes()), path.stem, path.name, st.st_size,
                         st.st_mtime)

    def _indexable(self, game_id: str) -> bool:
        """True when the record of ``game_id`` reads and replays (a rebuild would index it)."""
        try:
            self._row_of(self.record_path(game_id))
        except _UNREADABLE:
            return False
        return True

    @staticmethod
    def _put_or_skip(index: Index, row: dict) -> str:
        """Insert one row inside the rebuild's transaction; a row the database refuses
        (a number too large for SQLite, text that is not UTF-8) is rolled back alone and its reason returned."""
        index.db.execute("SAVEPOINT one_game")
        try:
            index._put(row)
        except (sqlite3.Error, OverflowError, ValueError) as exc:   # ValueError: a lone
            index.db.execute("ROLLBACK TO one_game")                # surrogate in a text
            return f"the index refuses it ({exc})"
        finally:
            index.db.execute("RELEASE one_game")
        return ""

    def _sound_index(self, report: RebuildReport) -> Index:
        """The index for a rebuild: a file that is not a database, or one whose pages are
        damaged (``PRAGMA quick_check`` not "ok"), is set aside first and a new one made.
        Raises sqlite3.Error for anything else (locked, disk full, not writable)."""
        index = None
        try:
            index = self.index()
            if [tuple(r) for r in index.db.execute("PRAGMA quick_check")] == [("ok",)]:
                return index
        except sqlite3.DatabaseError as exc:
            if not _damaged(exc):
                if index is not None:
                    index.close()
                raise
        if index is not None:
            index.close()
        self._set_aside()
        report.set_aside = str(self.db_path.with_name(self.db_path.name + ".corrupt"))
        return self.index()

    def _set_aside(self) -> None:
        for suffix in ("", "-wal", "-shm"):
            path = self.db_path.with_name(self.db_path.name + suffix)
            if path.exists():
                os.replace(path, path.with_name(path.name + ".corrupt"))


_UNREADABLE = (OSError, RecordError, StoreError, ValueError, RecursionError)


def _games(n: int) -> str:
    """"1 game", "4 games"."""
    return f"{n} game{'s' if n != 1 else ''}"


def _damaged(exc: sqlite3.Error) -> bool:
    """True when SQLite says the file is damaged or not a database at all."""
    code = getattr(exc, "sqlite_errorcode", None)
    if code is None:
        return type(exc) is sqlite3.DatabaseError
    return code & 0xFF in (sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB)


def row_text(row: dict) -> str:
    """One history line: start time, game, time board, players with scores (the winner
    first), winner, duration in the wording every reader uses (:mod:`.wording`; any
    control character of a record's text shown escaped)."""
    when = _shown(when_text(row["started"], row["ended"]))
    names = [_shown(row[f"p{i}_name"]) for i in (0, 1)]
    scores = scores_text(names, [row["p0_score"], row["p1_score"]], row["winner"])
    winner = names[row["winner"]] if row["winner"] is not None else "-"
    length = duration_text(row["duration_s"]) or "?"
    return (f"{_shown(row['id'])}  {when:16}  {row['game']:17} {row['time_board']:8} "
            f"{scores}  winner {winner}  {length}")


def dumps_row(row: dict) -> str:
    """One history row as JSON text."""
    return json.dumps(row, sort_keys=True)
