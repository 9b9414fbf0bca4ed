"""The web page's read-only view of the store (finished games), in the shapes the pages use.

Each call opens the SQLite index briefly (WAL: the game service can file a game
at the same time) and closes it again, so the web process holds no lock.
"""
from __future__ import annotations

import json
from pathlib import Path

from ..rules import parse_record, score, start_state, steps
from ..store import History
from ..store.export import to_bgstats_text, to_csv, to_jsonl
from ..store.stats import count_games, page_of_games, player_names, summary

COLOURS = ("green", "yellow")


def seat_colours(names: tuple[str, str]) -> tuple[str, str]:
    """Colours of the two seats for drawing: the names when they are colours, else
    green for the first player."""
    low = tuple(n.lower() for n in names)
    if set(low) == set(COLOURS):
        return low  # type: ignore[return-value]
    if low[0] in COLOURS:
        return low[0], COLOURS[1 - COLOURS.index(low[0])]
    if low[1] in COLOURS:
        return COLOURS[1 - COLOURS.index(low[1])], low[1]
    return COLOURS


def page_row(row: dict) -> dict:
    """An index ``game_rows`` row as the pages take it: ``players`` a list of two dicts."""
    names = (row["p0_name"], row["p1_name"])
    colours = seat_colours(names)
    players = [{"name": row[f"p{s}_name"], "colour": colours[s],
                **{c: row[f"p{s}_{c}"] for c in ("score", "buttons", "income", "empty", "special",
                                                 "winner")}} for s in (0, 1)]
    return {**{k: v for k, v in row.items() if not k.startswith(("p0_", "p1_"))},
            "players": players}


class Library:
    """The store in ``folder`` (``records/`` and ``history.sqlite3``)."""

    def __init__(self, folder: str | Path):
        self.history = History(folder)

    @classmethod
    def open(cls, folder: str | Path) -> "Library":
        """A library over ``folder`` (the index is created on first use when missing)."""
        return cls(folder)

    def _index(self):
        self.history.folder.mkdir(parents=True, exist_ok=True)
        return self.history.index()

    def games(self, player: str | None, game: str | None, limit: int, offset: int):
        """(rows of one page, newest first; total matching)."""
        with self._index() as index:
            rows = page_of_games(index, player, game, limit, offset)
            return [page_row(r) for r in rows], count_games(index, player, game)

    def count(self) -> int:
        """How many games the history holds."""
        with self._index() as index:
            return index.count()

    def player_names(self) -> list[str]:
        """Every player name in the history, most games first."""
        with self._index() as index:
            return player_names(index)

    def game(self, game_id: str):
        """(page row, parsed record) of one game, or None when there is no such game."""
        with self._index() as index:
            rows = index.db.execute("SELECT * FROM game_rows WHERE id = ?", (game_id,)).fetchall()
        if not rows:
            return None
        try:
            record = parse_record((self.history.records / rows[0]["record"]).read_bytes())
        except (OSError, ValueError):
            return None
        return page_row(dict(rows[0])), record

    def record_text(self, game_id: str) -> str | None:
        """The saved record of ``game_id`` as text, or None."""
        found = self.game(game_id)
        if found is None:
            return None
        return (self.history.records / found[0]["record"]).read_text("utf-8")

    def rename(self, game_id: str, names) -> None:
        """Set the two players' names of game ``game_id`` (first player first): the record
        (the truth) is rewritten with them, then its index row. Raises KeyError for an
        unknown game, NamesError for bad names (see ``companion.names``), OSError,
        ``sqlite3.OperationalError`` (another process holds the index): nothing changed."""
        from dataclasses import replace

        from ..companion.names import NamesError, check_name
        found = self.game(game_id)
        if found is None:
            raise KeyError(game_id)
        names = tuple(check_name(n) for n in names)
        if len(names) != 2 or names[0].lower() == names[1].lower():
            raise NamesError("a game needs two different names")
        self.history.refile(game_id, replace(found[1], players=names))

    @staticmethod
    def replay_steps(record) -> list[dict]:
        """The replay viewer's frames: the start, then the state after each move."""
        colours = seat_colours(tuple(record.players))

        def frame(state, text):
            """One viewer frame: the text of the move and the state after it."""
            return {"text": text, "offer": list(state.offer[:3]),
                    "players": [{"colour": colours[i], "position": p.position, "buttons": p.buttons,
                                 "income": p.income, "empty": p.empty, "score": score(state, i)}
                                for i, p in enumerate(state.players)]}
        out = [frame(start_state(record), "the start")]
        for step in steps(record):
            who = record.players[step.player] if step.player in (0, 1) else ""
            out.append(frame(step.state, f"move {step.index + 1}: {who} "
                             f"{_describe(record.moves[step.index])}"))
        return out

    def export_text(self, fmt: str) -> str:
        """Every game as ``csv``, ``jsonl`` or ``bgstats`` text."""
        with self._index() as index:
            if fmt == "csv":
                return to_csv(index)
            if fmt == "jsonl":
                return to_jsonl(index, self.history.records)
            if fmt == "bgstats":
                return to_bgstats_text(index)
        raise ValueError(f"export format must be csv, jsonl or bgstats, got {fmt!r}")

    def stats(self) -> dict:
        """The statistics page's figures (see ``store.stats.summary``)."""
        with self._index() as index:
            return summary(index)


def _describe(move) -> str:
    if move == "advance":
        return "advances (action A)"
    if isinstance(move, dict):
        if "buy" in move:
            return f"buys patch #{move['buy']}"
        if "leather" in move:
            return "sets the leather patch aside" if move["leather"] == "discard" else \
                "places a leather patch"
        if "bonus" in move:
            return "claims the 7x7 special tile"
        if "adjust" in move:
            return f"buttons corrected by {move['buttons']:+d}"
    return json.dumps(move)
