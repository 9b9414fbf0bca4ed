"""The box's on-disk queue of club messages that must reach the broker.

Events and finished records go here first (one SQLite file, WAL, a durable
commit per message), and leave only when the broker has acknowledged them
(PUBACK at QoS 1). So nothing is lost while the broker is away or when the
networked process restarts: the rows go out in order afterwards. The queue
also remembers, per game, the moves it has queued events for and the last
event number, so the same turn is never queued twice however often the live
state is offered again, and an undo is seen as one. A finished game's record
is also kept until the scoreboard confirms it (its ``ack``), since a broker
killed outright may lose a message it had acknowledged.
"""
from __future__ import annotations

import json
import logging
import sqlite3
import threading
import time
from pathlib import Path

LOG = logging.getLogger(__name__)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS outbox (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    topic TEXT NOT NULL,
    payload BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS progress (
    game_id TEXT PRIMARY KEY,
    seq INTEGER NOT NULL,
    moves TEXT NOT NULL,
    ended INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS unconfirmed (
    game_id TEXT PRIMARY KEY,
    topic TEXT NOT NULL,
    payload BLOB NOT NULL
);
"""


class Outbox:
    """A durable FIFO of ``(seq, topic, payload)`` rows in ``path`` (SQLite).

    Thread-safe: the feed thread adds, the MQTT network thread removes.
    A file that is not an SQLite database (a damaged SD card) is moved aside to
    ``<name>.damaged-<unix time>`` (kept, with its ``-wal``/``-shm``) and a new queue
    is started. Raises ``OSError`` or ``sqlite3.Error`` when the folder or file
    cannot be created, opened or written.
    """

    def __init__(self, path: str | Path):
        self.path = Path(path).expanduser()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        try:
            self._db = self._open()
        except sqlite3.DatabaseError as exc:
            if isinstance(exc, sqlite3.OperationalError):
                raise
            aside = self._move_aside()
            LOG.warning("club outbox %s is damaged (%s); kept as %s, starting a new queue",
                        self.path, exc, aside)
            self._db = self._open()

    def _open(self) -> sqlite3.Connection:
        db = sqlite3.connect(str(self.path), check_same_thread=False, isolation_level=None)
        try:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=FULL")
            db.executescript(_SCHEMA)
            db.execute("BEGIN IMMEDIATE")        # the file must be writable, not only readable
            db.execute("ROLLBACK")
        except BaseException:
            db.close()
            raise
        return db

    def _move_aside(self) -> Path:
        aside = self.path.with_name(f"{self.path.name}.damaged-{int(time.time())}")
        for suffix in ("-wal", "-shm"):
            side = self.path.with_name(self.path.name + suffix)
            if side.exists():
                side.replace(aside.with_name(aside.name + suffix))
        self.path.replace(aside)
        return aside

    def progress(self, game_id: str) -> tuple[int, list, bool]:
        """``(last event number, moves queued, end queued)`` for ``game_id``;
        ``(0, [], False)`` for a game not seen yet."""
        with self._lock:
            row = self._db.execute("SELECT seq, moves, ended FROM progress WHERE game_id=?",
                                   (game_id,)).fetchone()
        return (row[0], json.loads(row[1]), bool(row[2])) if row else (0, [], False)

    def add(self, game_id: str, seq: int, moves: list, ended: bool,
            messages: list[tuple[str, bytes]], record: tuple[str, bytes] | None = None) -> None:
        """Queue ``messages`` (topic, payload) in order and record ``game_id``'s progress
        (last event number ``seq``, the ``moves`` covered, ``ended``), in one durable
        transaction; ``record`` (topic, payload) is kept until :meth:`confirmed`."""
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                self._db.executemany("INSERT INTO outbox(topic, payload) VALUES (?, ?)", messages)
                self._db.execute("INSERT INTO progress(game_id, seq, moves, ended) VALUES (?, ?, ?, ?) "
                                 "ON CONFLICT(game_id) DO UPDATE SET seq=excluded.seq, "
                                 "moves=excluded.moves, ended=excluded.ended",
                                 (game_id, seq, json.dumps(moves), int(ended)))
                if record is not None:
                    self._db.execute("INSERT OR REPLACE INTO unconfirmed(game_id, topic, payload) "
                                     "VALUES (?, ?, ?)", (game_id, *record))
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise

    def pending(self, after: int = 0, limit: int = 200) -> list[tuple[int, str, bytes]]:
        """Up to ``limit`` queued rows with ``seq > after``, oldest first."""
        with self._lock:
            return self._db.execute("SELECT seq, topic, payload FROM outbox WHERE seq > ? "
                                    "ORDER BY seq LIMIT ?", (after, limit)).fetchall()

    def done(self, seq: int) -> None:
        """Forget row ``seq`` (the broker acknowledged it)."""
        with self._lock:
            self._db.execute("DELETE FROM outbox WHERE seq=?", (seq,))

    def unconfirmed(self) -> list[tuple[str, bytes]]:
        """The ``(topic, payload)`` of every finished record the scoreboard has not
        confirmed yet, oldest first."""
        with self._lock:
            return self._db.execute("SELECT topic, payload FROM unconfirmed ORDER BY rowid").fetchall()

    def confirmed(self, game_id: str) -> bool:
        """Forget the record of ``game_id`` (the scoreboard kept or refused it for good);
        True when one was waiting."""
        with self._lock:
            return self._db.execute("DELETE FROM unconfirmed WHERE game_id=?",
                                    (game_id,)).rowcount > 0

    def __len__(self) -> int:
        with self._lock:
            return self._db.execute("SELECT COUNT(*) FROM outbox").fetchone()[0]

    def close(self) -> None:
        """Close the database (the rows stay on disk)."""
        with self._lock:
            self._db.close()
