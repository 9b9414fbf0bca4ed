"""Exports of the history: game records as JSON Lines, one CSV row per game, and the
BG Stats app's JSON import format (plays with BoardGameGeek's game ids).

Games are exported oldest first. Filters (``player``, ``game``) are those of
``history``. Every function returns text; the callers write it to a file,
standard output or an HTTP answer.
"""
from __future__ import annotations

import csv
import io
import json
import uuid
from datetime import datetime, timezone
from pathlib import Path

from .stats import count_games, page_of_games
from .text import csv_text

#: BoardGameGeek's ids (boardgamegeek.com/boardgame/<id>) and names
BGG = {"patchwork": (163412, "Patchwork"), "patchwork-express": (231326, "Patchwork Express")}
#: a fixed namespace so that the same game always gets the same BG Stats uuid
UUID_NAMESPACE = uuid.UUID("5b0c2a4e-7d1f-4f43-9a3b-3f6f0c1d2e71")

CSV_COLUMNS = ("id", "started", "ended", "duration_s", "game", "time_board", "layout", "finished",
               "moves", "winner", "tie_break",
               "p1_name", "p1_score", "p1_buttons", "p1_income", "p1_empty", "p1_special",
               "p2_name", "p2_score", "p2_buttons", "p2_income", "p2_empty", "p2_special")


def rows_oldest_first(index, player: str | None = None, game: str | None = None) -> list[dict]:
    """Every matching ``game_rows`` row, oldest first."""
    total = count_games(index, player, game)
    rows = page_of_games(index, player, game, max(total, 1), 0)
    return list(reversed(rows))


def to_jsonl(index, records: Path, player: str | None = None, game: str | None = None) -> str:
    """The records (as saved, one compact JSON object a line) of the matching games.
    Raises OSError when a record file cannot be read (the message names it)."""
    lines = []
    for row in rows_oldest_first(index, player, game):
        path = Path(records) / row["record"]
        try:
            data = json.loads(path.read_bytes())
        except ValueError as exc:
            raise OSError(f"{path}: not JSON ({exc})") from None
        lines.append(json.dumps(data, separators=(",", ":"), ensure_ascii=False))
    return "".join(line + "\n" for line in lines)


def to_csv(index, player: str | None = None, game: str | None = None) -> str:
    """One CSV row per game (header :data:`CSV_COLUMNS`; p1 took the first turn;
    ``winner`` is the winner's name, empty for a game ended early). Every text cell goes
    through :func:`.text.csv_text`: control characters escaped, a would-be formula
    (``= + - @``, tab, CR first) marked as text with a leading ``'``."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for r in rows_oldest_first(index, player, game):
        winner = r[f"p{r['winner']}_name"] if r["winner"] is not None else ""
        cells = [r["id"], r["started"] or "", r["ended"] or "", _blank(r["duration_s"]), r["game"],
                 r["time_board"], r["layout"], r["finished"], r["moves"], winner, r["tie_break"]]
        for seat in (0, 1):
            cells += [r[f"p{seat}_{c}"] for c in ("name", "score", "buttons", "income", "empty",
                                                  "special")]
        writer.writerow([csv_text(c) if isinstance(c, str) else c for c in cells])
    return out.getvalue()


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


def to_bgstats(index, player: str | None = None, game: str | None = None,
               now: datetime | None = None) -> dict:
    """The BG Stats import object: ``games`` (with ``bggId``), ``players``, ``locations``
    (none) and ``plays``, one per finished game (a game ended early has no winner and is
    left out). Ids are stable: the same game gives the same play ``uuid``."""
    entry = (now or datetime.now(timezone.utc)).strftime("%Y-%m-%d %H:%M:%S")
    games, players, plays = {}, {}, []
    for r in rows_oldest_first(index, player, game):
        if not r["finished"]:
            continue
        bgg_id, bgg_name = BGG[r["game"]]
        if r["game"] not in games:
            games[r["game"]] = {"id": len(games) + 1, "uuid": str(uuid.uuid5(UUID_NAMESPACE, r["game"])),
                                "name": bgg_name, "bggName": bgg_name, "bggId": bgg_id,
                                "highestWins": True, "noPoints": False, "cooperative": False,
                                "usesTeams": False}
        scores = []
        for seat in (0, 1):
            name = r[f"p{seat}_name"]
            if name not in players:
                players[name] = {"id": len(players) + 1, "name": name, "isAnonymous": False,
                                 "uuid": str(uuid.uuid5(UUID_NAMESPACE, "player:" + name))}
            scores.append({"playerRefId": players[name]["id"], "score": str(r[f"p{seat}_score"]),
                           "winner": bool(r[f"p{seat}_winner"]), "startPlayer": seat == 0,
                           "seatOrder": seat + 1, "newPlayer": False, "rank": 0})
        plays.append({"uuid": str(uuid.uuid5(UUID_NAMESPACE, "play:" + r["id"])),
                      "gameRefId": games[r["game"]]["id"], "playDate": _play_date(r),
                      "entryDate": entry, "durationMin": round((r["duration_s"] or 0) / 60),
                      "ignored": False, "manualWinner": False, "rounds": 0, "usesTeams": False,
                      "board": r["time_board"], "comments": f"patchwork-companion game {r['id']}",
                      "playerScores": scores})
    return {"games": list(games.values()), "players": list(players.values()), "locations": [],
            "plays": plays}


def to_bgstats_text(index, player: str | None = None, game: str | None = None) -> str:
    """:func:`to_bgstats` as indented JSON text."""
    return json.dumps(to_bgstats(index, player, game), indent=1, ensure_ascii=False) + "\n"
