"""The SQLite index of finished games (stdlib ``sqlite3``, WAL).

Schema (``PRAGMA user_version`` = :data:`SCHEMA_VERSION`)::

    games   -- one row per game
      id          TEXT PRIMARY KEY   game id, also the record's file name (<id>.json)
      record      TEXT               record path relative to the records folder
      started     TEXT               RFC 3339 with UTC offset ("2026-12-01T19:04:00+01:00") or NULL
      ended       TEXT               RFC 3339 with UTC offset, or NULL
      ended_unix  REAL               seconds since the epoch (sorting; from ended, else started,
                                     else the record file's mtime)
      duration_s  INTEGER            seconds played, or NULL
      game        TEXT               "patchwork" | "patchwork-express"
      time_board  TEXT               "2014" | "revised" | "standard"
      layout      TEXT               "dealt" | "free"
      finished    INTEGER            1: the rules ended the game; 0: ended early from the menu
      moves       INTEGER            number of record moves
      winner      INTEGER            seat (0 = took the first turn, 1) or NULL (not finished)
      tie_break   INTEGER            1 when the scores were equal and the tie-break decided
      app         TEXT               meta.app of the record, or NULL
      size        INTEGER            record file size in bytes (rebuild notices changes)
    players -- two rows per game
      game_id     TEXT  REFERENCES games(id) ON DELETE CASCADE
      seat        INTEGER            0 took the first turn, 1
      name        TEXT               as in the record ("Green", "Yellow" by default)
      score       INTEGER            buttons + special tile - 2 x empty (R13)
      buttons     INTEGER            buttons at the end
      income      INTEGER            button income at the end
      empty       INTEGER            empty squares of the quilt at the end
      special     INTEGER            1 when this player holds the 7x7 special tile
      winner      INTEGER            1 for the winner (0 for both when not finished)
      PRIMARY KEY (game_id, seat)
    game_rows -- a view: one row per game with p0_* and p1_* columns of both players

Indexes: ``games(ended_unix)``, ``games(game)``, ``players(name)``. Rows are
only ever derived from records (:func:`firmware_py.store.summarise`).
"""
from __future__ import annotations

import os
import sqlite3
from pathlib import Path

SCHEMA_VERSION = 1
PLAYER_COLUMNS = ("name", "score", "buttons", "income", "empty", "special", "winner")
GAME_COLUMNS = ("id", "record", "started", "ended", "ended_unix", "duration_s", "game",
                "time_board", "layout", "finished", "moves", "winner", "tie_break", "app", "size")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS games (
  id TEXT PRIMARY KEY, record TEXT NOT NULL, started TEXT, ended TEXT, ended_unix REAL,
  duration_s INTEGER, game TEXT NOT NULL, time_board TEXT NOT NULL, layout TEXT NOT NULL,
  finished INTEGER NOT NULL, moves INTEGER NOT NULL, winner INTEGER, tie_break INTEGER NOT NULL,
  app TEXT, size INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS players (
  game_id TEXT NOT NULL REFERENCES games(id) ON DELETE CASCADE, seat INTEGER NOT NULL,
  name TEXT NOT NULL, score INTEGER NOT NULL, buttons INTEGER NOT NULL, income INTEGER NOT NULL,
  empty INTEGER NOT NULL, special INTEGER NOT NULL, winner INTEGER NOT NULL,
  PRIMARY KEY (game_id, seat));
CREATE INDEX IF NOT EXISTS games_ended ON games(ended_unix);
CREATE INDEX IF NOT EXISTS games_game ON games(game);
CREATE INDEX IF NOT EXISTS players_name ON players(name);
CREATE VIEW IF NOT EXISTS game_rows AS
  SELECT g.*, {p0}, {p1} FROM games g
  JOIN players a ON a.game_id = g.id AND a.seat = 0
  JOIN players b ON b.game_id = g.id AND b.seat = 1;
""".format(p0=", ".join(f"a.{c} AS p0_{c}" for c in PLAYER_COLUMNS),
           p1=", ".join(f"b.{c} AS p1_{c}" for c in PLAYER_COLUMNS))


def _create_shared(path: Path) -> None:
    """Create the database file if missing, readable and writable by its owner and by the
    group of its folder when that folder grants the group access (the web page's user
    corrects names in the index); SQLite gives its -wal and -shm files the same mode."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
    except OSError:
        return                         # there already, or SQLite says why it cannot be

    try:
        os.fchmod(fd, 0o600 | (path.parent.stat().st_mode & 0o060))
    finally:
        os.close(fd)


class Index:
    """An open index database at ``path`` (created with the schema if missing).

    Raises ``sqlite3.DatabaseError`` when the file is not a usable database
    (``History.rebuild`` recreates it). Use as a context manager or :meth:`close`.
    """

    def __init__(self, path: str | Path):
        self.path = Path(path)
        _create_shared(self.path)
        self.db = sqlite3.connect(self.path, timeout=10, isolation_level=None)
        try:
            self.db.row_factory = sqlite3.Row
            self.db.execute("PRAGMA foreign_keys = ON")
            self.db.execute("PRAGMA journal_mode = WAL")
            self.db.execute("PRAGMA synchronous = FULL")
            if self.db.execute("PRAGMA user_version").fetchone()[0] != SCHEMA_VERSION:
                self.db.executescript(_SCHEMA + f"PRAGMA user_version = {SCHEMA_VERSION};")
        except BaseException:
            # closed now, not when the garbage collector breaks the traceback's cycle: the
            # service retries every few seconds while the disk is full or the file damaged
            self.db.close()
            raise

    def __enter__(self) -> "Index":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        """Close the connection."""
        self.db.close()

    def upsert(self, row: dict, rows: list[dict] | None = None) -> None:
        """Insert or replace one game (``row``: :data:`GAME_COLUMNS` plus ``players``, two
        dicts of :data:`PLAYER_COLUMNS`) in one transaction; several with ``rows``."""
        with self.transaction():
            for one in rows if rows is not None else [row]:
                self._put(one)

    def put(self, row: dict) -> None:
        """Insert or replace one game (``row`` as :meth:`upsert`) inside a
        :meth:`transaction` the caller holds."""
        self._put(row)

    def _put(self, row: dict) -> None:
        self.db.execute("DELETE FROM games WHERE id = ?", (row["id"],))
        self.db.execute(f"INSERT INTO games ({', '.join(GAME_COLUMNS)}) VALUES "
                        f"({', '.join('?' * len(GAME_COLUMNS))})", [row[c] for c in GAME_COLUMNS])
        for seat, p in enumerate(row["players"]):
            self.db.execute(f"INSERT INTO players (game_id, seat, {', '.join(PLAYER_COLUMNS)}) "
                            f"VALUES (?, ?, {', '.join('?' * len(PLAYER_COLUMNS))})",
                            [row["id"], seat] + [p[c] for c in PLAYER_COLUMNS])

    def transaction(self):
        """A context manager: BEGIN IMMEDIATE ... COMMIT (ROLLBACK on an exception)."""
        db = self.db

        class _Tx:
            def __enter__(self):
                db.execute("BEGIN IMMEDIATE")

            def __exit__(self, kind, *_):
                db.execute("COMMIT" if kind is None else "ROLLBACK")
        return _Tx()

    def has(self, game_id: str) -> bool:
        """True when the game ``game_id`` is indexed."""
        return self.db.execute("SELECT 1 FROM games WHERE id = ?", (game_id,)).fetchone() is not None

    def count(self) -> int:
        """How many games are indexed."""
        return self.db.execute("SELECT count(*) FROM games").fetchone()[0]

    def delete_all(self) -> None:
        """Remove every row (before a rebuild)."""
        with self.transaction():
            self.db.execute("DELETE FROM players")
            self.db.execute("DELETE FROM games")

    def games(self, *, player: str | None = None, game: str | None = None,
              limit: int = 50, offset: int = 0) -> list[dict]:
        """Games newest first as ``game_rows`` dicts; ``player``: only games with a player of
        that name (exact); ``game``: only that game kind."""
        where, args = [], []
        if player is not None:
            where.append("(p0_name = ? OR p1_name = ?)")
            args += [player, player]
        if game is not None:
            where.append("game = ?")
            args.append(game)
        sql = "SELECT * FROM game_rows" + (" WHERE " + " AND ".join(where) if where else "")
        sql += " ORDER BY ended_unix DESC, id DESC LIMIT ? OFFSET ?"
        return [dict(r) for r in self.db.execute(sql, args + [limit, offset])]
