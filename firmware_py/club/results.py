"""The scoreboard's own store of finished games: one SQLite file in the results folder.

The standings rely on this store only, never on the broker: Mosquitto keeps
messages in memory and writes its persistence file only now and then, so a
broker killed outright forgets what it had acknowledged. Each verified record
is committed here (WAL, ``synchronous=FULL``: on disk when the call returns)
before the scoreboard acknowledges it to the box (the ``ack`` topic), and the
box publishes it again until it sees that ack. The folder is created 0700 and
the file 0600, whatever the umask. The store holds at most :data:`MAX_BYTES` of
records (with the board's cap of games, a forging box cannot fill the disk).
"""
from __future__ import annotations

import json
import os
import sqlite3
import threading
from pathlib import Path

from .board import Board, Finished
from .topics import PayloadError, parse_record

FILE = "scoreboard.sqlite"
MAX_BYTES = 64 * 1024 * 1024     # of records: 3000 real games take about 15 MB

_SCHEMA = """
CREATE TABLE IF NOT EXISTS games (
    tbl TEXT NOT NULL,
    game_id TEXT NOT NULL,
    record TEXT NOT NULL,
    PRIMARY KEY (tbl, game_id)
);
"""


class StoreError(Exception):
    """The store cannot be opened, or a record cannot be kept; the text says why."""


class ResultStore:
    """The finished games of ``folder``/``scoreboard.sqlite`` (created if missing).

    Raises :class:`StoreError` naming the folder when it cannot be created or the
    file cannot be opened or written. Written by the scoreboard's loop; any thread
    may read (one lock)."""

    def __init__(self, folder: str | Path):
        self.folder = Path(folder).expanduser()
        self.path = self.folder / FILE
        self._lock = threading.Lock()
        try:
            self.folder.mkdir(mode=0o700, parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
            os.close(fd)
            self._db = sqlite3.connect(str(self.path), isolation_level=None,
                                       check_same_thread=False)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=FULL")
            self._db.executescript(_SCHEMA)
            self.bytes = self._db.execute("SELECT COALESCE(SUM(LENGTH(record)), 0) FROM games"
                                          ).fetchone()[0]
        except (OSError, sqlite3.Error) as exc:
            raise StoreError(f"cannot keep the results in {self.folder}: "
                             f"{getattr(exc, 'strerror', None) or exc}") from None

    def save(self, game: Finished) -> None:
        """Keep ``game`` (with its record) for good, replacing the same table's game of
        that id. Raises :class:`StoreError` when the store is full or cannot be written."""
        text = json.dumps(game.record, separators=(",", ":"))
        with self._lock:
            self._save(game, text)

    def _save(self, game: Finished, text: str) -> None:
        old = self._db.execute("SELECT LENGTH(record) FROM games WHERE tbl=? AND game_id=?",
                               game.key).fetchone()
        grown = self.bytes - (old[0] if old else 0) + len(text)
        if grown > MAX_BYTES:
            raise StoreError(f"the results store {self.path} holds {MAX_BYTES // 2**20} MB of "
                             f"records already; game {game.game_id[:64]!r} of table "
                             f"{game.table} is not kept")
        try:
            self._db.execute("INSERT OR REPLACE INTO games(tbl, game_id, record) VALUES (?, ?, ?)",
                             (*game.key, text))
        except sqlite3.Error as exc:
            raise StoreError(f"cannot keep game {game.game_id[:64]!r} of table {game.table} in "
                             f"{self.path}: {exc}") from None
        self.bytes = grown

    def remove(self, key: tuple[str, str]) -> None:
        """Forget the game ``(table, game_id)`` (an undo at the table took it back)."""
        with self._lock:
            self._remove(key)

    def _remove(self, key: tuple[str, str]) -> None:
        row = self._db.execute("SELECT LENGTH(record) FROM games WHERE tbl=? AND game_id=?",
                               key).fetchone()
        if row:
            self._db.execute("DELETE FROM games WHERE tbl=? AND game_id=?", key)
            self.bytes -= row[0]

    def keys(self) -> set[tuple[str, str]]:
        """The ``(table, game_id)`` of every game kept."""
        with self._lock:
            return set(self._db.execute("SELECT tbl, game_id FROM games").fetchall())

    def load(self, board: Board) -> list[str]:
        """Put every game kept into ``board`` (each record replayed again); returns a line
        per game skipped (no longer a valid finished record)."""
        problems = []
        with self._lock:
            rows = self._db.execute("SELECT tbl, game_id, record FROM games ORDER BY rowid").fetchall()
        for table, game_id, text in rows:
            try:
                found = parse_record(text.encode("utf-8", "surrogatepass"))
                if found["game_id"] != game_id:
                    raise PayloadError(f"its record says game {found['game_id'][:64]!r}")
                board.take_record(table, found, 0.0, bounded=False)
            except PayloadError as exc:
                problems.append(f"skipped game {game_id[:64]!r} of table {table}: {exc}")
        return problems

    def close(self) -> None:
        """Close the file (the games stay in it)."""
        with self._lock:
            self._db.close()
