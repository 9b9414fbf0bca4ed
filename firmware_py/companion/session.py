"""One game at the table: its setup, the turns accepted so far, undo, and its record.

A turn is a group of engine actions accepted together (a move and the leather
patch it won in Patchwork, say); undo removes the last group. A correction of a
player's buttons is a group of its own, applied by the rules' pure
``adjust_buttons`` and written into the record where it was made, so the
record replays to the tally the table showed. The state is a fold of the
groups, so an undo or a resume from the journal rebuilds it exactly.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from importlib import metadata

from ..rules import (Adjust, GameRecord, GameState, PlaceLeather, action_to_move, adjust_buttons,
                     apply, load_spec, move_to_action, new_game)
from .model import GREEN, YELLOW
from .opponent import BOX_NAME, LEVELS, BoxMove, cells_of, quilt_rows

PACKAGE = "patchwork-companion"


def now_text() -> str:
    """The wall-clock time now as RFC 3339 with the local UTC offset,
    e.g. ``"2026-12-01T19:04:00+01:00"`` (whole seconds)."""
    return datetime.now().astimezone().isoformat(timespec="seconds")


def app_name() -> str:
    """The program and version that writes records, e.g. ``"patchwork-companion 0.1.0"``."""
    try:
        return f"{PACKAGE} {metadata.version(PACKAGE)}"
    except metadata.PackageNotFoundError:
        return PACKAGE


def _seconds_between(started: str, ended: str) -> int | None:
    """Whole seconds from ``started`` to ``ended`` (RFC 3339 texts), or None if either is unusable."""
    try:
        span = datetime.fromisoformat(ended) - datetime.fromisoformat(started)
    except (TypeError, ValueError):
        return None
    seconds = int(span.total_seconds())
    return seconds if seconds >= 0 else None


@dataclass(frozen=True)
class Setup:
    """How the game was set up: ``game`` ("patchwork"/"patchwork-express"),
    ``time_board`` ("2014"/"revised"/"standard"), ``first`` colour ("green" or
    "yellow": that player is player 0, R4), the dealt ``circle`` and Express
    ``blue`` order, ``free`` for a freely laid-out circle (design 2.1),
    ``names``: the players' names as (green's, yellow's), chosen at setup, or ()
    for the defaults "Green" and "Yellow", ``started``: when the game
    started (RFC 3339 with UTC offset, "" unknown); in a game against the box,
    ``box`` is the colour the box plays ("green"/"yellow", "" for two people) and
    ``level`` its level (one of :data:`~.opponent.LEVELS`)."""

    game: str
    time_board: str
    first: str
    circle: tuple[int, ...]
    blue: tuple[int, ...] = ()
    free: bool = False
    names: tuple[str, ...] = ()
    started: str = ""
    box: str = ""
    level: str = ""

    @property
    def box_seat(self) -> int | None:
        """Player 0/1 whom the box plays in a game against the box, else None."""
        return self.colours.index(self.box) if self.box else None

    @property
    def colours(self) -> tuple[str, str]:
        """Colour of player 0 and player 1."""
        return (GREEN, YELLOW) if self.first == GREEN else (YELLOW, GREEN)

    def seat_names(self) -> tuple[str, str]:
        """The names of player 0 and player 1 (who started first), e.g. ("Anna", "Green")."""
        by_colour = dict(zip((GREEN, YELLOW), self.names)) if len(self.names) == 2 else {}
        if self.box:
            by_colour[self.box] = BOX_NAME
        return tuple(by_colour.get(c) or c.capitalize() for c in self.colours)  # type: ignore

    def to_json(self) -> dict:
        """A JSON-ready dict (for the journal)."""
        out = {"game": self.game, "time_board": self.time_board, "first": self.first,
               "circle": list(self.circle), "blue": list(self.blue), "free": self.free}
        if self.names:
            out["names"] = list(self.names)
        if self.started:
            out["started"] = self.started
        if self.box:
            out.update(box=self.box, level=self.level)
        return out

    @classmethod
    def from_json(cls, data: dict) -> "Setup":
        """Inverse of :meth:`to_json`; raises ValueError on a bad value."""
        try:
            setup = cls(data["game"], data["time_board"], data["first"], tuple(data["circle"]),
                        tuple(data.get("blue", ())), bool(data.get("free", False)),
                        tuple(data.get("names", ())), started=data.get("started", ""),
                        box=data.get("box", ""), level=data.get("level", ""))
        except (KeyError, TypeError) as exc:
            raise ValueError(f"bad setup entry: {type(exc).__name__} {exc}") from exc
        for key in ("game", "time_board", "first", "started", "box", "level"):
            if not isinstance(getattr(setup, key), str):
                raise ValueError(f"setup.{key} must be a string")
        if not all(type(p) is int for p in setup.circle + setup.blue):
            raise ValueError("setup.circle and setup.blue must list patch ids (integers)")
        if setup.names and (len(setup.names) != 2 or not all(isinstance(n, str) and n
                                                             for n in setup.names)):
            raise ValueError(f"setup.names must be two names, got {setup.names!r}")
        if setup.first not in (GREEN, YELLOW):
            raise ValueError(f"setup.first must be green or yellow, got {setup.first!r}")
        if setup.box not in ("", GREEN, YELLOW) or (setup.box and setup.level not in LEVELS):
            raise ValueError(f"setup.box must be green or yellow with a level of {LEVELS}, "
                             f"got {setup.box!r} at {setup.level!r}")
        setup.start_state()  # validates the circle against the catalogue
        return setup

    def start_state(self) -> GameState:
        """The engine state before the first turn (untracked quilts)."""
        spec = load_spec(self.game, self.time_board)
        return new_game(spec=spec, circle=self.circle, blue=self.blue, tracked=False,
                        free=self.free)


@dataclass(frozen=True)
class Correction:
    """A manual correction: ``delta`` buttons (non-zero, may be negative) for
    ``player`` (0/1); recorded as ``{"adjust": player, "buttons": delta}``."""

    player: int
    delta: int

    def adjust(self) -> Adjust:
        """The rules' form of this correction."""
        return Adjust(self.player, self.delta)


def quilt_of(boxes) -> int:
    """The squares covered by the box's moves among ``boxes`` (per turn group, a
    :class:`~.opponent.BoxMove` or None), as a bitmask."""
    quilt = 0
    for move in boxes:
        if move is not None:
            quilt |= move.squares
    return quilt


class Session:
    """The game in progress: ``setup``, ``groups`` of accepted actions, and the state.

    ``ended`` is when the game ended (RFC 3339, "" while it goes on); the
    table sets it. ``boxes`` holds, per group, the box's :class:`~.opponent.BoxMove`
    when the box played that group, else None. Not thread-safe: the service's
    event-loop thread owns it.
    """

    def __init__(self, setup: Setup):
        self.setup = setup
        self.ended = ""
        self.groups: list[tuple] = []
        self.boxes: list[BoxMove | None] = []
        self._states: list[GameState] = [setup.start_state()]

    @classmethod
    def restored(cls, setup: Setup, groups, state: GameState, boxes=()) -> "Session":
        """A session holding ``groups`` (already applied, ending in ``state``; ``boxes``: the
        box's move per group, see :attr:`boxes`, or () for none) without
        replaying them: for reading (``record()``, ``state``) off the loop thread, e.g. by
        the live feed; its ``undo`` cannot go back further than ``state``."""
        session = cls.__new__(cls)
        session.setup = setup
        session.ended = ""
        session.groups = list(groups)
        session.boxes = list(boxes) if len(boxes) == len(session.groups) \
            else [None] * len(session.groups)
        session._states = [state]
        return session

    @property
    def state(self) -> GameState:
        """The current engine state."""
        return self._states[-1]

    def previous_state(self) -> GameState | None:
        """The engine state before the last group, or None when there is none kept."""
        return self._states[-2] if len(self._states) > 1 else None

    def check(self, group) -> tuple[GameState, tuple]:
        """Apply ``group`` to a copy and return (new state, events) without keeping it.

        Raises the engine's IllegalActionError (AdjustError for a correction
        that would leave fewer than 0 buttons); the session is unchanged.
        """
        state, events = self.state, []
        for item in group:
            if isinstance(item, Correction):
                state, new = adjust_buttons(state, item.adjust())
            else:
                state, new = apply(state, item)
            events.extend(new)
        return state, tuple(events)

    def commit(self, group, box: BoxMove | None = None) -> tuple:
        """Apply ``group`` (a sequence of actions/corrections) and keep it, with the box's
        move when the box played it; returns its events."""
        state, events = self.check(group)
        self.groups.append(tuple(group))
        self.boxes.append(box)
        self._states.append(state)
        return events

    def undo(self) -> tuple | None:
        """Remove the last group; returns it, or None when there is nothing to undo."""
        if not self.groups:
            return None
        self._states.pop()
        self.boxes.pop()
        return self.groups.pop()

    def box_quilt(self) -> int:
        """The box's quilt now: every square its moves so far covered (bitmask; 0 in a
        game of two people)."""
        return quilt_of(self.boxes)

    def box_record(self) -> dict | None:
        """The ``meta.box_quilt`` of a game against the box (None otherwise): ``player``
        (0/1, whom the box played), ``level``, ``placements`` in the order made (each
        ``{"move": M, "buy": ID, "cells": [[row, col], ...]}`` or ``{"move": M, "leather":
        [row, col]}``, M the index in the record's ``moves`` of the box's move that bought
        the patch or won the leather patch) and the final ``quilt`` as text rows ("#"
        covered, "." empty, the top row first)."""
        if not self.setup.box:
            return None
        spec = self.state.spec
        placements = []
        at = 0                                  # record moves before this group
        for group, move in zip(self.groups, self.boxes):
            if move is not None:
                if move.patch is not None:
                    placements.append({"move": at, "buy": move.patch,
                                       "cells": cells_of(spec, move.mask)})
                placements += [{"move": at, "leather": cells_of(spec, 1 << s)[0]}
                               for s in move.leather]
            at += sum(1 for item in group if self._recorded(spec, item))
        return {"player": self.setup.box_seat, "level": self.setup.level,
                "placements": placements, "quilt": quilt_rows(spec, self.box_quilt())}

    def group_to_json(self, group) -> list:
        """The journal form of a group: record moves (a correction as
        ``{"adjust": P, "buttons": N}``; an untracked leather placement as
        ``{"leather": "place"}``)."""
        spec = self.state.spec
        out = []
        for item in group:
            if isinstance(item, Correction):
                out.append(action_to_move(spec, item.adjust()))
            else:
                out.append(action_to_move(spec, item) or {"leather": "place"})
        return out

    def group_from_json(self, items: list) -> tuple:
        """Inverse of :meth:`group_to_json` (also reads the older correction form
        ``{"correct": P, "delta": N}``); raises ValueError on a bad item."""
        if not isinstance(items, list):
            raise ValueError("a turn's moves must be a list")
        spec = self.state.spec
        group = []
        for i, item in enumerate(items):
            if isinstance(item, dict) and "correct" in item:
                item = {"adjust": item["correct"], "buttons": item.get("delta")}
            if item == {"leather": "place"}:
                group.append(PlaceLeather())
                continue
            action = move_to_action(spec, item, i, tracked=False)
            group.append(Correction(*action) if isinstance(action, Adjust) else action)
        return tuple(group)

    @staticmethod
    def _recorded(spec, item) -> bool:
        """True when ``item`` of a group is written as a move of the record."""
        return action_to_move(spec, item.adjust() if isinstance(item, Correction) else item) \
            is not None

    def record(self, players: tuple[str, str] | None = None, meta: dict | None = None) -> GameRecord:
        """The game record (untracked style) of the turns so far.

        Moves in the order they were accepted, each correction where it was
        made; ``"layout": "free"`` with the setup's circle for a free layout.
        ``meta`` holds ``started``, ``ended`` (RFC 3339, when known),
        ``duration_s`` (whole seconds, when both are known), ``app`` and
        ``colours`` (the time token of player 0 and 1, e.g. ["yellow",
        "green"]), plus any ``meta`` given (which wins).
        """
        spec = self.state.spec
        moves = []
        for group in self.groups:
            moves += [action_to_move(spec, item.adjust() if isinstance(item, Correction) else item)
                      for item in group if self._recorded(spec, item)]
        names = players or self.setup.seat_names()
        info: dict = {}
        if self.setup.started:
            info["started"] = self.setup.started
        if self.ended:
            info["ended"] = self.ended
            duration = _seconds_between(self.setup.started, self.ended)
            if duration is not None:
                info["duration_s"] = duration
        info["app"] = app_name()
        info["colours"] = list(self.setup.colours)       # each seat's time token
        box = self.box_record()
        if box is not None:
            info["box_quilt"] = box
        info.update(meta or {})
        return GameRecord(self.setup.game, self.setup.time_board, names, self.setup.circle,
                          tuple(moves), self.setup.blue if spec.blue_patches else None, None, info,
                          "free" if self.setup.free else "dealt")

