"""The club scoreboard's model (pure: messages and times in, tables out).

It is fed every message under ``patchwork/<club>/+/+`` and keeps, per table,
the latest state, whether the box is online, the events counted (each
``(game_id, seq)`` once, whatever the broker repeats), and the finished games
(each game id once). A message it cannot use is counted in ``rejected`` with
the reason and changes nothing. The standings of a tournament round rank the
player names by wins, then by the sum of their score differences.
"""
from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass, field

from . import topics
from .topics import PayloadError


@dataclass
class Table:
    """One box: ``name``, ``online`` (bool), ``state`` (the last state dict or {}),
    ``last_seen`` (scoreboard clock, seconds), ``events`` counted, ``seen``
    (the ``(game_id, seq)`` pairs already counted)."""

    name: str
    online: bool = False
    state: dict = field(default_factory=dict)
    last_seen: float = 0.0
    events: int = 0
    seen: set = field(default_factory=set)


@dataclass(frozen=True)
class Finished:
    """A finished game: its ``table``, ``game_id``, ``game``, the two ``players``'
    names, their ``scores`` and the ``winner`` (0/1); ``record`` once it arrived."""

    table: str
    game_id: str
    game: str
    players: tuple[str, str]
    scores: tuple[int, int]
    winner: int
    record: dict | None = None


class Board:
    """Every table of one ``club``. :meth:`message` takes each MQTT message."""

    def __init__(self, club: str):
        self.club = topics.check_name(club, "club")
        self.tables: dict[str, Table] = {}
        self.finished: dict[str, Finished] = {}
        self.rejected = 0
        self.last_rejection = ""
        self.version = 0                         # bumped on every change

    def message(self, topic: str, payload: bytes, now: float) -> bool:
        """Apply one message; returns True when something visible changed.

        A message that cannot be used (foreign topic, bad payload) is counted in
        ``rejected`` with its reason in ``last_rejection``; it changes nothing else."""
        try:
            changed = self._apply(topic, payload, now)
        except PayloadError as exc:
            self.rejected += 1
            self.last_rejection = f"{topic[:80]}: {exc}"
            self.version += 1
            return True
        if changed:
            self.version += 1
        return changed

    def _apply(self, topic: str, payload: bytes, now: float) -> bool:
        name, kind = topics.split_topic(topic, self.club)
        if kind == "status":
            status = topics.parse_status(payload)
            table = self._table(name, now)
            table.online = status == "online"
            return True
        if kind == "state":
            state = topics.parse_state(payload)
            table = self._table(name, now)
            table.state = state
            return True
        if kind == "event":
            return self._event(self._table(name, now), topics.parse_event(payload))
        found = topics.parse_record(payload)
        old = self.finished.get(found["game_id"])
        self.finished[found["game_id"]] = Finished(
            name, found["game_id"], found["game"], tuple(found["players"]), tuple(found["scores"]),
            found["winner"], found["record"])
        self._table(name, now)
        return old is None or old.record is None

    def _table(self, name: str, now: float) -> Table:
        table = self.tables.get(name)
        if table is None:
            table = self.tables[name] = Table(name)
        table.last_seen = now
        return table

    def _event(self, table: Table, event: dict) -> bool:
        key = (event["game_id"], event["seq"])
        if key in table.seen:
            return False
        table.seen.add(key)
        table.events += 1
        if event["kind"] == "end" and event["game_id"] not in self.finished:
            names = tuple(p["name"] for p in table.state.get("players", ())) or ("?", "?")
            if table.state.get("game_id") != event["game_id"]:
                names = ("?", "?")
            self.finished[event["game_id"]] = Finished(
                table.name, event["game_id"], table.state.get("game", "patchwork"), names,
                tuple(event["scores"]), event["winner"])
        return True

    # ----- views ------------------------------------------------------------------------
    def rows(self) -> list[dict]:
        """One row per table, by name: ``table``, ``online``, ``game``, ``turn``,
        ``to_move`` (a name or ''), ``players`` ([name, score] twice), ``over``, ``winner``,
        ``events`` counted and ``ts`` (when the box accepted its last move, seconds since 1970)."""
        out = []
        for name in sorted(self.tables):
            t = self.tables[name]
            s = t.state
            players = [[p["name"], p["score"]] for p in s.get("players", [])]
            to_move = s.get("to_move")
            out.append({"table": name, "online": t.online, "game": s.get("game", ""),
                        "turn": s.get("turn", 0), "over": s.get("over", False),
                        "to_move": players[to_move][0] if players and to_move is not None else "",
                        "winner": players[s["winner"]][0] if players and s.get("winner") is not None
                        and s.get("over") else "",
                        "players": players, "events": t.events, "ts": s.get("ts", 0.0)})
        return out

    def standings(self) -> list[dict]:
        """Per player name over the finished games: ``name``, ``played``, ``wins``,
        ``diff`` (own score minus the opponent's, summed); best first (wins, then diff)."""
        rows: dict[str, dict] = {}
        for game in self.finished.values():
            for i, name in enumerate(game.players):
                row = rows.setdefault(name, {"name": name, "played": 0, "wins": 0, "diff": 0})
                row["played"] += 1
                row["wins"] += game.winner == i
                row["diff"] += game.scores[i] - game.scores[1 - i]
        return sorted(rows.values(), key=lambda r: (-r["wins"], -r["diff"], r["name"]))

    def results_csv(self) -> str:
        """The finished games as CSV: table, game_id, game, player names, scores, winner."""
        out = io.StringIO()
        writer = csv.writer(out)
        writer.writerow(["table", "game_id", "game", "player_1", "player_2", "score_1", "score_2",
                         "winner"])
        for g in sorted(self.finished.values(), key=lambda g: (g.table, g.game_id)):
            writer.writerow([g.table, g.game_id, g.game, g.players[0], g.players[1], g.scores[0],
                             g.scores[1], g.players[g.winner]])
        return out.getvalue()

    def records_jsonl(self) -> str:
        """The finished games' records, one JSON object a line (games whose record has
        not arrived are left out)."""
        return "".join(json.dumps(g.record, separators=(",", ":")) + "\n"
                       for g in sorted(self.finished.values(), key=lambda g: g.game_id) if g.record)

    def snapshot(self) -> dict:
        """Everything the page shows, as one JSON-ready dict."""
        return {"club": self.club, "version": self.version, "tables": self.rows(),
                "standings": self.standings(), "finished": len(self.finished),
                "rejected": self.rejected, "last_rejection": self.last_rejection}
