"""Exports of the history: game records as JSON Lines, one CSV row per game, and the
BG Stats app's JSON import format (plays with BoardGameGeek's game ids).

Games are exported oldest first. Filters (``player``, ``game``) are those of
``history``. Every function returns text; the callers write it to a file,
standard output or an HTTP answer; the ``*_chunks`` generators give the same text in
pieces, for an answer streamed while the index is read in batches.
"""
from __future__ import annotations

import csv
import io
import json
import sqlite3
import uuid
from datetime import datetime, timezone
from pathlib import Path

from ..rules import RecordError, parse_record
from .analyses import record_digest
from .stats import count_games, page_of_games
from .text import csv_text
from .wording import minutes

#: BoardGameGeek's ids (boardgamegeek.com/boardgame/<id>) and names
BGG = {"patchwork": (163412, "Patchwork"), "patchwork-express": (231326, "Patchwork Express")}
#: a fixed namespace so that the same game always gets the same BG Stats uuid
UUID_NAMESPACE = uuid.UUID("5b0c2a4e-7d1f-4f43-9a3b-3f6f0c1d2e71")

CSV_COLUMNS = ("id", "started", "ended", "duration_s", "game", "time_board", "layout", "finished",
               "moves", "winner", "tie_break",
               "p1_name", "p1_score", "p1_buttons", "p1_income", "p1_empty", "p1_special",
               "p2_name", "p2_score", "p2_buttons", "p2_income", "p2_empty", "p2_special")


BATCH = 500        #: index rows read at a time while exporting


def iter_rows_oldest_first(index, player: str | None = None, game: str | None = None,
                           batch: int = BATCH):
    """Every matching ``game_rows`` row, oldest first, read ``batch`` rows at a time
    (memory stays flat however many games the history holds)."""
    total = count_games(index, player, game)
    end = total
    while end > 0:
        start = max(0, end - batch)
        rows = page_of_games(index, player, game, end - start, start)   # newest-first places
        yield from reversed(rows)
        end = start


def rows_oldest_first(index, player: str | None = None, game: str | None = None) -> list[dict]:
    """Every matching ``game_rows`` row, oldest first."""
    return list(iter_rows_oldest_first(index, player, game))


def jsonl_chunks(index, records: Path, player: str | None = None, game: str | None = None):
    """:func:`to_jsonl` a line at a time (str). Raises OSError as it does."""
    analysed = _analyses(index)
    for row in iter_rows_oldest_first(index, player, game):
        path = Path(records) / row["record"]
        try:
            data = json.loads(path.read_bytes())
        except ValueError as exc:
            raise OSError(f"{path}: not JSON ({exc})") from None
        _attach(data, analysed.get(row["id"]))
        yield json.dumps(data, separators=(",", ":"), ensure_ascii=False) + "\n"


def to_jsonl(index, records: Path, player: str | None = None, game: str | None = None) -> str:
    """The records (as saved, one compact JSON object a line) of the matching games; a
    game's post-game analysis, when there is one of the record as saved, rides along as
    ``meta.analysis`` (readers of the record format ignore ``meta``). Raises OSError when
    a record file cannot be read (the message names it)."""
    return "".join(jsonl_chunks(index, records, player, game))


def _analyses(index) -> dict:
    """{game id: (digest, analysis JSON text)} of the stored analyses (none: no table yet)."""
    try:
        rows = index.db.execute("SELECT game_id, digest, data FROM analyses").fetchall()
    except sqlite3.OperationalError:
        return {}
    return {r[0]: (r[1], r[2]) for r in rows}


def _attach(data, found) -> None:
    """Put an analysis into the exported copy's ``meta`` when it is of exactly this record."""
    if found is None or not isinstance(data, dict):
        return
    try:
        record = parse_record(data)
    except RecordError:
        return
    if record_digest(record) == found[0]:
        meta = data.get("meta") if isinstance(data.get("meta"), dict) else {}
        data["meta"] = {**meta, "analysis": json.loads(found[1])}


def csv_chunks(index, player: str | None = None, game: str | None = None, rows: int = 200):
    """:func:`to_csv` in pieces of about ``rows`` rows (str)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for k, r in enumerate(iter_rows_oldest_first(index, player, game), 1):
        winner = r[f"p{r['winner']}_name"] if r["winner"] is not None else ""
        cells = [r["id"], r["started"] or "", r["ended"] or "", _blank(r["duration_s"]), r["game"],
                 r["time_board"], r["layout"], r["finished"], r["moves"], winner, r["tie_break"]]
        for seat in (0, 1):
            cells += [r[f"p{seat}_{c}"] for c in ("name", "score", "buttons", "income", "empty",
                                                  "special")]
        writer.writerow([csv_text(c) if isinstance(c, str) else c for c in cells])
        if k % rows == 0:
            yield out.getvalue()
            out.seek(0)
            out.truncate()
    yield out.getvalue()


def to_csv(index, player: str | None = None, game: str | None = None) -> str:
    """One CSV row per game (header :data:`CSV_COLUMNS`; p1 took the first turn;
    ``winner`` is the winner's name, empty for a game ended early). Every text cell goes
    through :func:`.text.csv_text`: control characters escaped, a would-be formula
    (``= + - @``, tab, CR first) marked as text with a leading ``'``."""
    return "".join(csv_chunks(index, player, game))


def _blank(value) -> str:
    return "" if value is None else str(value)


def _play_date(row: dict) -> str:
    """BG Stats' "YYYY-MM-DD HH:MM:SS" in the table's local time (from started, else ended)."""
    text = row["started"] or row["ended"]
    if text:
        try:
            return datetime.fromisoformat(text).strftime("%Y-%m-%d %H:%M:%S")
        except ValueError:
            pass
    return datetime.fromtimestamp(row["ended_unix"] or 0, timezone.utc).strftime("%Y-%m-%d %H:%M:%S")


class _BGStats:
    """Builds BG Stats' games, players and plays one history row at a time."""

    def __init__(self, now: datetime | None = None):
        self.entry = (now or datetime.now(timezone.utc)).strftime("%Y-%m-%d %H:%M:%S")
        self.games: dict = {}
        self.players: dict = {}

    def play(self, r: dict) -> dict | None:
        """The play of index row ``r`` (None for a game ended early: no winner)."""
        if not r["finished"]:
            return None
        bgg_id, bgg_name = BGG[r["game"]]
        if r["game"] not in self.games:
            self.games[r["game"]] = {
                "id": len(self.games) + 1, "uuid": str(uuid.uuid5(UUID_NAMESPACE, r["game"])),
                "name": bgg_name, "bggName": bgg_name, "bggId": bgg_id, "highestWins": True,
                "noPoints": False, "cooperative": False, "usesTeams": False}
        scores = []
        for seat in (0, 1):
            name = r[f"p{seat}_name"]
            if name not in self.players:
                self.players[name] = {"id": len(self.players) + 1, "name": name,
                                      "isAnonymous": False,
                                      "uuid": str(uuid.uuid5(UUID_NAMESPACE, "player:" + name))}
            scores.append({"playerRefId": self.players[name]["id"],
                           "score": str(r[f"p{seat}_score"]), "winner": bool(r[f"p{seat}_winner"]),
                           "startPlayer": seat == 0, "seatOrder": seat + 1, "newPlayer": False,
                           "rank": 0})
        return {"uuid": str(uuid.uuid5(UUID_NAMESPACE, "play:" + r["id"])),
                "gameRefId": self.games[r["game"]]["id"], "playDate": _play_date(r),
                "entryDate": self.entry, "durationMin": minutes(r["duration_s"]) or 0,
                "ignored": False, "manualWinner": False, "rounds": 0, "usesTeams": False,
                "board": r["time_board"], "comments": f"patchwork-companion game {r['id']}",
                "playerScores": scores}


def to_bgstats(index, player: str | None = None, game: str | None = None,
               now: datetime | None = None) -> dict:
    """The BG Stats import object: ``games`` (with ``bggId``), ``players``, ``locations``
    (none) and ``plays``, one per finished game (a game ended early has no winner and is
    left out). Ids are stable: the same game gives the same play ``uuid``."""
    build = _BGStats(now)
    plays = [p for p in map(build.play, iter_rows_oldest_first(index, player, game)) if p]
    return {"games": list(build.games.values()), "players": list(build.players.values()),
            "locations": [], "plays": plays}


def bgstats_chunks(index, player: str | None = None, game: str | None = None,
                   now: datetime | None = None):
    """:func:`to_bgstats` as compact JSON text in pieces, a play at a time (the plays come
    first: the games and players are known once every play is written)."""
    build = _BGStats(now)
    yield '{"plays":['
    first = True
    for row in iter_rows_oldest_first(index, player, game):
        play = build.play(row)
        if play is not None:
            yield ("" if first else ",") + json.dumps(play, separators=(",", ":"),
                                                      ensure_ascii=False)
            first = False
    tail = {"games": list(build.games.values()), "players": list(build.players.values()),
            "locations": []}
    yield "]," + json.dumps(tail, separators=(",", ":"), ensure_ascii=False)[1:] + "\n"


def to_bgstats_text(index, player: str | None = None, game: str | None = None) -> str:
    """:func:`to_bgstats` as indented JSON text."""
    return json.dumps(to_bgstats(index, player, game), indent=1, ensure_ascii=False) + "\n"
