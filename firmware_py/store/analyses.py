"""Post-game analyses beside the history: a SQLite table, a cache of files, progress.

An analysis (made by ``firmware_py.analysis``; here only stored) is a JSON
object that belongs to exactly one record text: its ``digest`` is
:func:`record_digest` of the record it was made from. Nothing is written into
the record itself.

Kept twice, like the history itself:

``analysis/<id>.json``
    The cache (the truth for analyses): ``{"digest", "version", "analysis"}``,
    written with :func:`firmware_py.disk.write_durably`.
``history.sqlite3``, tables::

    analyses  -- one row per analysed game
      game_id TEXT PRIMARY KEY, digest TEXT (the record's), version INTEGER,
      made REAL (Unix time), data TEXT (the analysis JSON)
    analysis_progress -- the game being analysed now (at most one row in practice)
      game_id TEXT PRIMARY KEY, done INTEGER, total INTEGER (decisions), updated REAL

``history --rebuild`` refills ``analyses`` from the cache (:func:`restore`),
keeping only analyses whose digest matches the record as saved now.
"""
from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path

from ..disk import write_text_durably
from ..rules import GameRecord, RecordError, parse_record

CACHE = "analysis"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS analyses (
  game_id TEXT PRIMARY KEY, digest TEXT NOT NULL, version INTEGER NOT NULL, made REAL NOT NULL,
  data TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS analysis_progress (
  game_id TEXT PRIMARY KEY, done INTEGER NOT NULL, total INTEGER NOT NULL, updated REAL NOT NULL);
"""


def record_digest(record: GameRecord) -> str:
    """SHA-256 (64 hex digits) of what an analysis depends on: game, time board, layout,
    circle, blue patches and moves (not the names, ``result`` or ``meta``, so correcting
    the players' names keeps the analysis)."""
    game = record.to_json()
    text = json.dumps({k: game.get(k) for k in ("game", "time_board", "layout", "circle",
                                                 "blue", "moves")}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()


def _db(history):
    index = history.index()
    index.db.executescript(_SCHEMA)
    return index


def cache_path(history, game_id: str) -> Path:
    """Where the cached analysis of ``game_id`` is kept."""
    return history.folder / CACHE / f"{game_id}.json"


def save(history, game_id: str, analysis: dict, version: int) -> None:
    """Keep ``analysis`` (with its ``digest``) of game ``game_id``: the cache file first,
    then the table row. Raises OSError or sqlite3.Error."""
    entry = {"digest": analysis["digest"], "version": version, "analysis": analysis}
    path = cache_path(history, game_id)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_text_durably(path, json.dumps(entry, separators=(",", ":")) + "\n")
    with _db(history) as index:
        with index.transaction():
            _put(index, game_id, entry)
            index.db.execute("DELETE FROM analysis_progress WHERE game_id = ?", (game_id,))


def _put(index, game_id: str, entry: dict) -> None:
    index.db.execute("INSERT OR REPLACE INTO analyses VALUES (?, ?, ?, ?, ?)",
                     (game_id, entry["digest"], entry["version"], time.time(),
                      json.dumps(entry["analysis"], separators=(",", ":"))))


def load(history, game_id: str, version: int | None = None) -> dict | None:
    """The stored analysis of ``game_id`` if it is of the record as saved now (and of
    ``version`` when given), else None."""
    with _db(history) as index:
        row = index.db.execute("SELECT a.digest, a.version, a.data, g.record FROM analyses a "
                               "JOIN games g ON g.id = a.game_id WHERE a.game_id = ?",
                               (game_id,)).fetchone()
    if row is None or (version is not None and row["version"] != version):
        return None
    if _digest_of(history.records / row["record"]) != row["digest"]:
        return None
    return json.loads(row["data"])


def _digest_of(path: Path) -> str | None:
    try:
        return record_digest(parse_record(path.read_bytes()))
    except (OSError, RecordError, ValueError, RecursionError):
        return None


def pending(history, version: int) -> list[str]:
    """Ids of indexed games (newest first) with no analysis of ``version`` for the record
    as saved now."""
    with _db(history) as index:
        rows = index.db.execute("SELECT g.id, g.record, a.digest, a.version FROM games g "
                                "LEFT JOIN analyses a ON a.game_id = g.id "
                                "ORDER BY g.ended_unix DESC, g.id DESC").fetchall()
    return [r["id"] for r in rows if r["version"] != version
            or _digest_of(history.records / r["record"]) != r["digest"]]


def unanalysed(history) -> int:
    """How many indexed games have no stored analysis at all (a cheap check: a stale
    analysis is found by :func:`pending`)."""
    with _db(history) as index:
        return index.db.execute("SELECT count(*) FROM games g LEFT JOIN analyses a "
                                "ON a.game_id = g.id WHERE a.game_id IS NULL").fetchone()[0]


def set_progress(history, game_id: str, done: int, total: int) -> None:
    """Record that ``done`` of ``total`` decisions of ``game_id`` are analysed."""
    with _db(history) as index:
        index.db.execute("INSERT OR REPLACE INTO analysis_progress VALUES (?, ?, ?, ?)",
                         (game_id, done, total, time.time()))


def progress(history, game_id: str | None = None) -> dict | None:
    """``{"game_id", "done", "total", "updated"}`` of ``game_id`` (any game when None)
    being analysed, or None."""
    with _db(history) as index:
        sql = "SELECT * FROM analysis_progress" + (" WHERE game_id = ?" if game_id else "")
        row = index.db.execute(sql + " ORDER BY updated DESC LIMIT 1",
                               (game_id,) if game_id else ()).fetchone()
    return dict(row) if row is not None else None


def clear_progress(history) -> None:
    """Forget any progress rows (a worker that stops or starts over)."""
    with _db(history) as index:
        index.db.execute("DELETE FROM analysis_progress")


def restore(history) -> int:
    """Refill the ``analyses`` table from the cache files after a rebuild: every cached
    analysis whose digest matches its game's record as saved now. Returns how many."""
    count = 0
    with _db(history) as index:
        games = {r["id"]: r["record"] for r in index.db.execute("SELECT id, record FROM games")}
        with index.transaction():
            index.db.execute("DELETE FROM analyses")
            index.db.execute("DELETE FROM analysis_progress")
            for game_id, name in games.items():
                entry = _cached(history, game_id)
                if entry and entry["digest"] == _digest_of(history.records / name):
                    _put(index, game_id, entry)
                    count += 1
    return count


def _cached(history, game_id: str) -> dict | None:
    try:
        entry = json.loads(cache_path(history, game_id).read_bytes())
    except (OSError, ValueError, RecursionError):
        return None
    ok = isinstance(entry, dict) and isinstance(entry.get("digest"), str) \
        and isinstance(entry.get("version"), int) and isinstance(entry.get("analysis"), dict)
    return entry if ok else None
