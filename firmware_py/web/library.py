"""The web page's read-only view of the store (finished games), in the shapes the pages use.

Each call opens the SQLite index briefly (WAL: the game service can file a game
at the same time) and closes it again, so the web process holds no lock.
"""
from __future__ import annotations

import json
from pathlib import Path

from ..rules import (ButtonsEarned, IncomePaid, LeatherWon, PatchBought, SpecialTileAwarded,
                     TokenMoved, parse_record, score, start_state, steps)
from ..store import History
from ..store.export import bgstats_chunks, csv_chunks, jsonl_chunks
from ..store.stats import count_games, page_of_games, player_names, summary

COLOURS = ("green", "yellow")


def seat_colours(names: tuple[str, str], meta: dict | None = None) -> tuple[str, str]:
    """Colours of the two seats for drawing: ``meta.colours`` when the record has it,
    the names when they are colours, else green for the first player."""
    given = (meta or {}).get("colours")
    if isinstance(given, list) and sorted(map(str, given)) == sorted(COLOURS):
        return tuple(given)  # type: ignore[return-value]
    low = tuple(n.lower() for n in names)
    if set(low) == set(COLOURS):
        return low  # type: ignore[return-value]
    if low[0] in COLOURS:
        return low[0], COLOURS[1 - COLOURS.index(low[0])]
    if low[1] in COLOURS:
        return COLOURS[1 - COLOURS.index(low[1])], low[1]
    return COLOURS


def page_row(row: dict, meta: dict | None = None) -> dict:
    """An index ``game_rows`` row as the pages take it: ``players`` a list of two dicts
    (``meta``, the record's, when at hand: colours and the box's seat and level)."""
    names = (row["p0_name"], row["p1_name"])
    colours = seat_colours(names, meta)
    players = [{"name": row[f"p{s}_name"], "colour": colours[s],
                **{c: row[f"p{s}_{c}"] for c in ("score", "buttons", "income", "empty", "special",
                                                 "winner")}} for s in (0, 1)]
    box = (meta or {}).get("box_quilt")
    box = {"player": box.get("player"), "level": box.get("level")} if isinstance(box, dict) else {}
    return {**{k: v for k, v in row.items() if not k.startswith(("p0_", "p1_"))},
            "players": players, "box": box}


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
        return page_row(dict(rows[0]), record.meta), record

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
        """The replay viewer's frames: the start, then the state after each move.

        Each frame: ``text`` (the move in words, naming who made it), ``who`` (0/1, or
        None at the start), ``patch`` (the id bought, or None), ``offer`` (ids),
        ``leather`` (time-board spaces whose leather patch is still there),
        ``players`` (``colour``, ``position``, ``buttons``, ``income``, ``empty``,
        ``score``) and ``quilts`` (per player: ``covered`` squares as [row, col]
        where known, else None, and ``count`` covered)."""
        return replay_frames(record)

    def export_text(self, fmt: str) -> str:
        """Every game as ``csv``, ``jsonl`` or ``bgstats`` text (all at once)."""
        return "".join(self.export_chunks(fmt))

    def export_chunks(self, fmt: str):
        """Every game as ``csv``, ``jsonl`` or ``bgstats`` text, in pieces (str), the index
        read in batches and kept open only while iterating. Raises ValueError for another
        ``fmt`` (at once), OSError for a record that cannot be read."""
        makers = {"csv": lambda index: csv_chunks(index),
                  "jsonl": lambda index: jsonl_chunks(index, self.history.records),
                  "bgstats": lambda index: bgstats_chunks(index)}
        if fmt not in makers:
            raise ValueError(f"export format must be csv, jsonl or bgstats, got {fmt!r}")
        return self._chunks(makers[fmt])

    def _chunks(self, maker):
        with self._index() as index:
            yield from maker(index)

    def stats(self) -> dict:
        """The statistics page's figures (see ``store.stats.summary``)."""
        with self._index() as index:
            return summary(index)


def replay_frames(record) -> list[dict]:
    """See :meth:`Library.replay_steps`."""
    colours = seat_colours(tuple(record.players), record.meta)
    quilts = QuiltBook(record)

    def frame(state, text, who=None, patch=None, index=-1):
        """One viewer frame: the text of the move and the state after it."""
        return {"text": text, "who": who, "patch": patch, "offer": list(state.offer[:3]),
                "leather": sorted(state.leather), "quilts": quilts.after(state, index),
                "players": [{"colour": colours[i], "position": p.position, "buttons": p.buttons,
                             "income": p.income, "empty": p.empty, "score": score(state, i)}
                            for i, p in enumerate(state.players)]}
    before = start_state(record)
    out = [frame(before, "the start: both time tokens on space 0, 5 buttons each")]
    for step in steps(record):
        move = record.moves[step.index]
        who = step.player if step.player in (0, 1) else None
        name = record.players[who] if who is not None else ""
        words = _move_words(before, step, move)
        patch = move.get("buy") if isinstance(move, dict) else None
        out.append(frame(step.state, f"move {step.index + 1}: {name} {words}", who, patch,
                         step.index))
        before = step.state
    return out


def _move_words(before, step, move) -> str:
    """What a move did, from its events: "buys patch 12 (price 5, time 3, +1 income):
    pays 5 buttons, moves 14 to 17; income: takes 3 buttons; wins the leather patch on 20"."""
    spec, mover = before.spec, step.player
    parts, extra = [], []
    for e in step.events:
        kind = type(e)
        if kind is PatchBought:
            p = spec.patches[e.patch]
            parts.append(f"buys patch {e.patch} (price {p.cost}, time {p.time}, "
                         f"+{p.income} income): pays {e.cost} button{'s' if e.cost != 1 else ''}")
        elif kind is ButtonsEarned:
            parts.append(f"advances, takes {e.buttons} button{'s' if e.buttons != 1 else ''}")
        elif kind is TokenMoved and e.player == mover:
            parts.append(f"moves {e.start} to {e.end}")
        elif kind is IncomePaid:
            extra.append(f"crosses income: takes {e.buttons} button{'s' if e.buttons != 1 else ''}")
        elif kind is LeatherWon:
            extra.append(f"wins the leather patch on {e.space}")
        elif kind is SpecialTileAwarded:
            extra.append("takes the 7x7 special tile")
    if not parts:
        return _describe(move)
    return "; ".join([", ".join(parts)] + extra)


class QuiltBook:
    """Each player's quilt during a replay, where the record tells it: the cells of a
    tracked record, the box's placements from ``meta.box_quilt``; for other players
    only the count of squares covered."""

    def __init__(self, record):
        self.spec = record.spec()
        self.cells: dict[int, list[tuple[int, list]]] = {0: [], 1: []}   # (move index, cells)
        self.known = {0: record.tracked, 1: record.tracked}
        for index, move in enumerate(record.moves):
            if isinstance(move, dict) and isinstance(move.get("cells"), list):
                self.cells.setdefault(-1, []).append((index, move["cells"]))
        box = (record.meta or {}).get("box_quilt")
        if isinstance(box, dict) and box.get("player") in (0, 1):
            self.known[box["player"]] = True
            for placed in box.get("placements") or []:
                cells = placed.get("cells") if "buy" in placed else [placed.get("leather")]
                if isinstance(placed.get("move"), int) and isinstance(cells, list):
                    self.cells[box["player"]].append((placed["move"], cells))
        self.owner: dict[int, int] = {}

    def after(self, state, index: int) -> list[dict]:
        """Both quilts after move ``index`` (-1: the start)."""
        size = self.spec.rows * self.spec.cols
        out = []
        for i, p in enumerate(state.players):
            covered = None
            if self.known[i]:
                if state.tracked:
                    q = p.quilt
                    covered = [[b // self.spec.cols, b % self.spec.cols] for b in range(size)
                               if q >> b & 1]
                else:
                    covered = [c for at, cells in self.cells[i] if at <= index for c in cells
                               if isinstance(c, list)]
            out.append({"covered": covered, "count": size - p.empty,
                        "rows": self.spec.rows, "cols": self.spec.cols})
        return out


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
