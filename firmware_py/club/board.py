"""The club scoreboard's model (pure: messages and times in, tables out).

It is fed every message under ``patchwork/<club>/+/+`` and keeps, per table,
the latest state, whether the box is online, the events counted (each
``(game_id, seq)`` once, whatever the broker repeats), and the finished games.

Only a box's own topics speak for its table (the broker's per-table ACL
authenticates that), so a finished game is known by ``(table, game id)``: a box
can neither claim nor shadow a game of another table. A game counts in the
standings only once its record has arrived and replays, with the rules engine,
to the result it claims; an ``end`` event alone shows the game as
*unverified*. The same moves (the same players, deal and moves, whatever the
game id or the table) count once: the first record to arrive (a copy from
another table is listed with ``same_as``, a copy from the same table
refused). An event or a
record the broker delivers as *retained* is refused (a box could otherwise have
the broker replay a forged result to every scoreboard that subscribes); the
standings rely only on records delivered live, which the scoreboard keeps in
its own store.

A state of the same game older than the one shown, delivered late, is skipped;
an undo of a game's last move takes it out of the finished games until it ends
again. A message it cannot use is counted in ``rejected`` with the reason and
changes nothing. The standings of a tournament round rank the player names by
wins, then by the sum of their score differences.

Bounds (a hostile box can send anything its ACL allows): at most
:data:`MAX_TABLES` tables, per table the events of its last :data:`SEEN_GAMES`
games, at most :data:`GAMES_PER_HOUR` new finished games per table in any hour,
and :data:`MAX_GAMES` finished games in all; what goes over is refused and said
in ``last_rejection``.
"""
from __future__ import annotations

import csv
import hashlib
import io
import json
from collections import deque
from dataclasses import dataclass, field

from ..store.text import csv_text
from . import topics
from .topics import PayloadError

MAX_TABLES = 1000        # a club of 10 to 100 tables; more is a hostile or broken publisher
SEEN_GAMES = 8           # per table, the games whose event numbers are remembered
GAMES_PER_HOUR = 12      # per table: a game of Patchwork takes 15 minutes or more
MAX_GAMES = 3000         # finished games in all: 100 tables playing 30 games each
HOUR_S = 3600.0


@dataclass
class Table:
    """One box: ``name``, ``online`` (bool), ``state`` (the last state dict or {}),
    ``last_seen`` (scoreboard clock, seconds), ``events`` counted, ``seen``
    (game id -> the event numbers already counted, the last :data:`SEEN_GAMES` games),
    ``recent`` (scoreboard clock times of its new finished games in the last hour)."""

    name: str
    online: bool = False
    state: dict = field(default_factory=dict)
    last_seen: float = 0.0
    offline_since: float | None = None    # scoreboard clock, when it went offline
    events: int = 0
    seen: dict = field(default_factory=dict)
    recent: deque = field(default_factory=deque)


@dataclass(frozen=True)
class Finished:
    """A finished game: its ``table``, ``game_id``, ``game``, the two ``players``'
    names, their ``scores`` and the ``winner`` (0/1); ``record`` once it arrived
    (None: only an ``end`` event claims the result, which is *unverified*);
    ``same_as``: the key of the game of another table with the very same moves,
    which counts instead of this one."""

    table: str
    game_id: str
    game: str
    players: tuple[str, str]
    scores: tuple[int, int]
    winner: int
    record: dict | None = None
    same_as: tuple[str, str] | None = None

    @property
    def key(self) -> tuple[str, str]:
        """``(table, game_id)``: a game id means something only at its own table."""
        return (self.table, self.game_id)


def fingerprint(record: dict) -> str:
    """The hex SHA-256 of what makes a game that game: its kind, time board, players,
    deal (circle, blue) and moves, whatever its game id, result or other meta."""
    core = {k: record.get(k) for k in ("game", "time_board", "players", "circle", "blue", "moves")}
    return hashlib.sha256(json.dumps(core, sort_keys=True, separators=(",", ":"))
                          .encode("utf-8", "surrogatepass")).hexdigest()


class Board:
    """Every table of one ``club``. :meth:`message` takes each MQTT message.

    ``finished`` maps ``(table, game_id)`` to :class:`Finished`; ``prints`` maps a
    record's :func:`fingerprint` to the key of the game it counts for."""

    def __init__(self, club: str):
        self.club = topics.check_name(club, "club")
        self.tables: dict[str, Table] = {}
        self.finished: dict[tuple[str, str], Finished] = {}
        self.prints: dict[str, tuple[str, str]] = {}
        self.rejected = 0
        self.last_rejection = ""
        self.version = 0                         # bumped on every change

    def message(self, topic: str, payload: bytes, now: float, retained: bool = False) -> bool:
        """Apply one message; returns True when something visible changed.
        ``retained``: the broker delivered it as a retained message.

        A message that cannot be used (foreign topic, bad payload, a retained event
        or record, over a bound) is counted in ``rejected`` with its reason in
        ``last_rejection``; it changes nothing else."""
        try:
            changed = self._apply(topic, payload, now, retained)
        except PayloadError as exc:
            self.reject(f"{topic[:80]}: {exc}")
            return True
        if changed:
            self.version += 1
        return changed

    def reject(self, why: str) -> None:
        """Count a refused message, ``why`` saying which and why."""
        self.rejected += 1
        self.last_rejection = why
        self.version += 1

    def all_offline(self) -> None:
        """Mark every table offline (the scoreboard reconnected: each box's retained
        ``status`` comes again, and a box that died meanwhile has none ``online``)."""
        for table in self.tables.values():
            table.online = False
        self.version += 1

    def _apply(self, topic: str, payload: bytes, now: float, retained: bool) -> bool:
        name, kind = topics.split_topic(topic, self.club)
        if kind == "ack":
            return False                           # the scoreboard's own word to a box
        if retained and kind in ("event", "record"):
            raise PayloadError(f"a retained {kind} is never counted (only live ones are)")
        if kind == "status":
            status = topics.parse_status(payload)
            table = self._table(name, now)
            was, table.online = table.online, status == "online"
            if not table.online and (was or table.offline_since is None):
                table.offline_since = now
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
            return self._event(self._table(name, now), topics.parse_event(payload), now)
        return self.take_record(name, topics.parse_record(payload), now) is not None

    def take_record(self, table: str, found: dict, now: float, bounded: bool = True
                    ) -> Finished | None:
        """Count a record of ``table`` (as :func:`.topics.parse_record` returns it);
        ``bounded=False`` (games the scoreboard kept itself) skips the per-hour bound.

        Returns the :class:`Finished` game now kept, or None when the very same record
        was kept already. The same moves from another table are kept with ``same_as``
        naming the game that counts instead. Raises PayloadError when the same moves
        count for another game of this table, or the table or the scoreboard is over
        its bound."""
        key = (table, found["game_id"])
        fp = fingerprint(found["record"])
        owner = self.prints.get(fp)
        if owner is not None and owner != key and owner[0] == table:
            raise PayloadError(f"record: the same moves as game {owner[1][:64]!r} of table "
                               f"{owner[0]}, which counts already (a game counts once)")
        same_as = owner if owner is not None and owner != key else None
        old = self.finished.get(key)
        if old is not None and old.record == found["record"]:
            return None
        where = self._table(table, now)
        if old is None and bounded:
            self._room_for_a_game(where, now)
        elif old is not None:
            self._forget_print(old)
        game = Finished(table, found["game_id"], found["game"], tuple(found["players"]),
                        tuple(found["scores"]), found["winner"], found["record"], same_as)
        self.finished[key] = game
        self.prints.setdefault(fp, key)
        return game

    def _forget_print(self, game: Finished) -> None:
        if game.record is not None and self.prints.get(fingerprint(game.record)) == game.key:
            del self.prints[fingerprint(game.record)]

    def _room_for_a_game(self, table: Table, now: float) -> None:
        while table.recent and now - table.recent[0] >= HOUR_S:
            table.recent.popleft()
        if len(table.recent) >= GAMES_PER_HOUR:
            raise PayloadError(f"table {table.name} finished {GAMES_PER_HOUR} games within the "
                               f"hour already; this one is dropped")
        if len(self.finished) >= MAX_GAMES:
            raise PayloadError(f"the scoreboard holds {MAX_GAMES} finished games already; "
                               f"this one of table {table.name} is dropped")
        table.recent.append(now)

    def _table(self, name: str, now: float) -> Table:
        table = self.tables.get(name)
        if table is None:
            if len(self.tables) >= MAX_TABLES:
                raise PayloadError(f"table {name}: the scoreboard already shows {MAX_TABLES} tables")
            table = self.tables[name] = Table(name)
        table.last_seen = now
        return table

    def _event(self, table: Table, event: dict, now: float) -> bool:
        seqs = table.seen.get(event["game_id"])
        if seqs is None:
            seqs = table.seen[event["game_id"]] = set()
            while len(table.seen) > SEEN_GAMES:
                del table.seen[next(iter(table.seen))]
        if event["seq"] in seqs:
            return False
        key = (table.name, event["game_id"])
        done = self.finished.get(key)
        if event["kind"] == "end" and done is None:
            self._room_for_a_game(table, now)
            names = tuple(p["name"] for p in table.state.get("players", ())) or ("?", "?")
            if table.state.get("game_id") != event["game_id"]:
                names = ("?", "?")
            self.finished[key] = Finished(table.name, event["game_id"],
                                          table.state.get("game", "patchwork"), names,
                                          tuple(event["scores"]), event["winner"])
        if event["kind"] == "undo" and done is not None:
            del self.finished[key]                   # the last move was taken back
            self._forget_print(done)
        seqs.add(event["seq"])
        table.events += 1
        return True

    def counted(self) -> list[Finished]:
        """The finished games whose record arrived and replays (they alone count), each
        game once: not the copies another table sent of the same moves."""
        return [g for g in self.finished.values() if g.record is not None and g.same_as is None]

    # ----- views ------------------------------------------------------------------------
    def rows(self, now: float | None = None) -> list[dict]:
        """One row per table, by name: ``table``, ``online``, ``game``, ``turn``,
        ``to_move`` (a name or ''), ``players`` ([name, score] twice), ``over``, ``winner``,
        ``events`` counted, ``ts`` (when the box accepted its last move, seconds since 1970)
        and ``offline_s`` (seconds it has been offline at ``now``, the scoreboard clock;
        None when online or unknown)."""
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
                        "players": players, "events": t.events, "ts": s.get("ts", 0.0),
                        "offline_s": None if t.online or t.offline_since is None or now is None
                        else round(max(0.0, now - t.offline_since))})
        return out

    def standings(self) -> list[dict]:
        """Per player name over the finished games with a verified record: ``name``, ``played``, ``wins``,
        ``diff`` (own score minus the opponent's, summed); best first (wins, then diff)."""
        rows: dict[str, dict] = {}
        for game in self.counted():
            for i, name in enumerate(game.players):
                row = rows.setdefault(name, {"name": name, "played": 0, "wins": 0, "diff": 0})
                row["played"] += 1
                row["wins"] += game.winner == i
                row["diff"] += game.scores[i] - game.scores[1 - i]
        return sorted(rows.values(), key=lambda r: (-r["wins"], -r["diff"], r["name"]))

    def results_csv(self) -> str:
        """The counted games (verified records) as CSV: table, game_id, game, player
        names, scores, winner.

        Text cells go through :func:`~firmware_py.store.text.csv_text`, as the history's
        export: a cell a spreadsheet would run as a formula (starting with ``= + - @``, a
        tab or a carriage return) gets a leading ``'``, control characters are escaped."""
        out = io.StringIO()
        writer = csv.writer(out)
        writer.writerow(["table", "game_id", "game", "player_1", "player_2", "score_1", "score_2",
                         "winner"])
        for g in sorted(self.counted(), key=lambda g: g.key):
            writer.writerow([g.table, csv_text(g.game_id), g.game, csv_text(g.players[0]),
                             csv_text(g.players[1]), g.scores[0], g.scores[1],
                             csv_text(g.players[g.winner])])
        return out.getvalue()

    def records_jsonl(self) -> str:
        """The finished games' records, one JSON object a line (games whose record has
        not arrived are left out)."""
        return "".join(json.dumps(g.record, separators=(",", ":")) + "\n"
                       for g in sorted(self.counted(), key=lambda g: g.key))

    def finished_rows(self) -> list[dict]:
        """The finished games, by table then game id: ``table``, ``game``, ``players``
        ([name, score] twice), ``winner`` (a name) and ``verified`` (its record arrived
        and replays to that result; an unverified game does not count) and ``same_as``
        (the table whose game of the very same moves counts instead, or '')."""
        return [{"table": g.table, "game": g.game, "winner": g.players[g.winner],
                 "players": [[g.players[i], g.scores[i]] for i in (0, 1)],
                 "verified": g.record is not None,
                 "same_as": g.same_as[0] if g.same_as else ""}
                for g in sorted(self.finished.values(), key=lambda g: g.key)]

    def snapshot(self, now: float | None = None) -> dict:
        """Everything the page shows, as one JSON-ready dict (``now``: the scoreboard
        clock, for how long tables have been offline)."""
        return {"club": self.club, "version": self.version, "tables": self.rows(now),
                "standings": self.standings(), "finished": len(self.counted()),
                "unverified": sum(g.record is None for g in self.finished.values()),
                "finished_games": self.finished_rows(),
                "rejected": self.rejected, "last_rejection": self.last_rejection}
