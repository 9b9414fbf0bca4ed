"""The club scoreboard's model (pure: messages and times in, tables out).

It is fed every message under ``patchwork/<club>/+/+`` and keeps, per table,
the latest state, whether the box is online, the events counted (each
``(game_id, seq)`` once, whatever the broker repeats), and the finished games
(each game id once, owned by the table that finished it; a state of the same
game older than the one shown, delivered late, is skipped; an undo of a game's
last move takes it out of the finished games until it ends again). A message it
cannot use is counted in ``rejected`` with the reason and changes nothing. The
standings of a tournament round rank the player names by wins, then by the sum
of their score differences. Memory is bounded: at most :data:`MAX_TABLES`
tables, and per table the events of its last :data:`SEEN_GAMES` games.
"""
from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass, field

from ..store.text import csv_text
from . import topics
from .topics import PayloadError

MAX_TABLES = 1000        # a club of 10 to 100 tables; more is a hostile or broken publisher
SEEN_GAMES = 8           # per table, the games whose event numbers are remembered


@dataclass
class Table:
    """One box: ``name``, ``online`` (bool), ``state`` (the last state dict or {}),
    ``last_seen`` (scoreboard clock, seconds), ``events`` counted, ``seen``
    (game id -> the event numbers already counted, the last :data:`SEEN_GAMES` games)."""

    name: str
    online: bool = False
    state: dict = field(default_factory=dict)
    last_seen: float = 0.0
    events: int = 0
    seen: dict = field(default_factory=dict)


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

    def all_offline(self) -> None:
        """Mark every table offline (the scoreboard reconnected: each box's retained
        ``status`` comes again, and a box that died meanwhile has none ``online``)."""
        for table in self.tables.values():
            table.online = False
        self.version += 1

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
            old = table.state
            if (old and state and state["game_id"] == old["game_id"] and state["seq"] is not None
                    and old["seq"] is not None and state["seq"] < old["seq"]):
                return False                       # an older state delivered late
            table.state = state
            return True
        if kind == "event":
            return self._event(self._table(name, now), topics.parse_event(payload))
        found = topics.parse_record(payload)
        old = self.finished.get(found["game_id"])
        if old is not None and old.table != name:
            raise PayloadError(f"record: game {found['game_id'][:64]!r} was finished at table "
                               f"{old.table}, not {name}")
        self.finished[found["game_id"]] = Finished(
            name, found["game_id"], found["game"], tuple(found["players"]), tuple(found["scores"]),
            found["winner"], found["record"])
        self._table(name, now)
        return old is None or old.record != found["record"]

    def _table(self, name: str, now: float) -> Table:
        table = self.tables.get(name)
        if table is None:
            if len(self.tables) >= MAX_TABLES:
                raise PayloadError(f"table {name}: the scoreboard already shows {MAX_TABLES} tables")
            table = self.tables[name] = Table(name)
        table.last_seen = now
        return table

    def _event(self, table: Table, event: dict) -> bool:
        seqs = table.seen.get(event["game_id"])
        if seqs is None:
            seqs = table.seen[event["game_id"]] = set()
            while len(table.seen) > SEEN_GAMES:
                del table.seen[next(iter(table.seen))]
        if event["seq"] in seqs:
            return False
        seqs.add(event["seq"])
        table.events += 1
        done = self.finished.get(event["game_id"])
        if event["kind"] == "undo" and done is not None and done.table == table.name:
            del self.finished[event["game_id"]]         # the last move was taken back
        if event["kind"] == "end" and done is None:
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
        """The finished games as CSV: table, game_id, game, player names, scores, winner.

        Text cells go through :func:`~firmware_py.store.text.csv_text`, as the history's
        export: a cell a spreadsheet would run as a formula (starting with ``= + - @``, a
        tab or a carriage return) gets a leading ``'``, control characters are escaped."""
        out = io.StringIO()
        writer = csv.writer(out)
        writer.writerow(["table", "game_id", "game", "player_1", "player_2", "score_1", "score_2",
                         "winner"])
        for g in sorted(self.finished.values(), key=lambda g: (g.table, g.game_id)):
            writer.writerow([g.table, csv_text(g.game_id), g.game, csv_text(g.players[0]),
                             csv_text(g.players[1]), g.scores[0], g.scores[1],
                             csv_text(g.players[g.winner])])
        return out.getvalue()

    def records_jsonl(self) -> str:
        """The finished games' records, one JSON object a line (games whose record has
        not arrived are left out)."""
        return "".join(json.dumps(g.record, separators=(",", ":")) + "\n"
                       for g in sorted(self.finished.values(), key=lambda g: g.game_id) if g.record)

    def finished_rows(self) -> list[dict]:
        """The finished games, by table then game id: ``table``, ``game``, ``players``
        ([name, score] twice), ``winner`` (a name) and ``record`` (whether it arrived)."""
        return [{"table": g.table, "game": g.game, "winner": g.players[g.winner],
                 "players": [[g.players[i], g.scores[i]] for i in (0, 1)],
                 "record": g.record is not None}
                for g in sorted(self.finished.values(), key=lambda g: (g.table, g.game_id))]

    def snapshot(self) -> dict:
        """Everything the page shows, as one JSON-ready dict."""
        return {"club": self.club, "version": self.version, "tables": self.rows(),
                "standings": self.standings(), "finished": len(self.finished),
                "finished_games": self.finished_rows(),
                "rejected": self.rejected, "last_rejection": self.last_rejection}
