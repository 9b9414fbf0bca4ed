"""One game at the table: its setup, the turns accepted so far, undo, and its record.

A turn is a group of engine actions accepted together (a move and the leather
patch it won in Patchwork, say); undo removes the last group. Corrections of a
player's buttons are kept beside the actions. The state is a fold of the groups,
so an undo or a resume from the journal rebuilds it exactly.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..rules import (GameRecord, GameState, PlaceLeather, action_to_move, apply, load_spec,
                     move_to_action, new_game)
from .model import GREEN, YELLOW


@dataclass(frozen=True)
class Setup:
    """How the game was set up: ``game`` ("patchwork"/"patchwork-express"),
    ``time_board`` ("2014"/"revised"/"standard"), ``first`` colour ("green" or
    "yellow": that player is player 0, R4), the dealt ``circle`` and Express
    ``blue`` order, and ``free`` for a freely laid-out circle (design 2.1);
    ``names``: the players' names as (green's, yellow's), chosen at setup, or ()
    for the defaults "Green" and "Yellow"."""

    game: str
    time_board: str
    first: str
    circle: tuple[int, ...]
    blue: tuple[int, ...] = ()
    free: bool = False
    names: tuple[str, ...] = ()

    @property
    def colours(self) -> tuple[str, str]:
        """Colour of player 0 and player 1."""
        return (GREEN, YELLOW) if self.first == GREEN else (YELLOW, GREEN)

    def seat_names(self) -> tuple[str, str]:
        """The names of player 0 and player 1 (who started first), e.g. ("Anna", "Green")."""
        by_colour = dict(zip((GREEN, YELLOW), self.names)) if len(self.names) == 2 else {}
        return tuple(by_colour.get(c) or c.capitalize() for c in self.colours)  # type: ignore

    def to_json(self) -> dict:
        """A JSON-ready dict (for the journal)."""
        out = {"game": self.game, "time_board": self.time_board, "first": self.first,
               "circle": list(self.circle), "blue": list(self.blue), "free": self.free}
        if self.names:
            out["names"] = list(self.names)
        return out

    @classmethod
    def from_json(cls, data: dict) -> "Setup":
        """Inverse of :meth:`to_json`; raises ValueError on a bad value."""
        try:
            setup = cls(data["game"], data["time_board"], data["first"], tuple(data["circle"]),
                        tuple(data.get("blue", ())), bool(data.get("free", False)),
                        tuple(data.get("names", ())))
        except (KeyError, TypeError) as exc:
            raise ValueError(f"bad setup entry: {exc!r}") from exc
        if setup.names and (len(setup.names) != 2 or not all(isinstance(n, str) and n
                                                             for n in setup.names)):
            raise ValueError(f"setup.names must be two names, got {setup.names!r}")
        if setup.first not in (GREEN, YELLOW):
            raise ValueError(f"setup.first must be green or yellow, got {setup.first!r}")
        setup.start_state()  # validates the circle against the catalogue
        return setup

    def start_state(self) -> GameState:
        """The engine state before the first turn (untracked quilts)."""
        spec = load_spec(self.game, self.time_board)
        return new_game(spec=spec, circle=self.circle, blue=self.blue, tracked=False,
                        free=self.free)


@dataclass(frozen=True)
class Correction:
    """A manual correction: ``delta`` buttons (may be negative) for ``player`` (0/1)."""

    player: int
    delta: int


class Session:
    """The game in progress: ``setup``, ``groups`` of accepted actions, and the state.

    Not thread-safe: the service's event-loop thread owns it.
    """

    def __init__(self, setup: Setup):
        self.setup = setup
        self.groups: list[tuple] = []
        self._states: list[GameState] = [setup.start_state()]

    @classmethod
    def restored(cls, setup: Setup, groups, state: GameState) -> "Session":
        """A session holding ``groups`` (already applied, ending in ``state``) without
        replaying them: for reading (``record()``, ``state``) off the loop thread, e.g. by
        the live feed; its ``undo`` cannot go back further than ``state``."""
        session = cls.__new__(cls)
        session.setup = setup
        session.groups = list(groups)
        session._states = [state]
        return session

    @property
    def state(self) -> GameState:
        """The current engine state."""
        return self._states[-1]

    def check(self, group) -> tuple[GameState, tuple]:
        """Apply ``group`` to a copy and return (new state, events) without keeping it.

        Raises the engine's IllegalActionError; the session is unchanged.
        """
        state, events = self.state, []
        for item in group:
            if isinstance(item, Correction):
                state = _corrected(state, item)
            else:
                state, new = apply(state, item)
                events.extend(new)
        return state, tuple(events)

    def commit(self, group) -> tuple:
        """Apply ``group`` (a sequence of actions/corrections) and keep it; returns its events."""
        state, events = self.check(group)
        self.groups.append(tuple(group))
        self._states.append(state)
        return events

    def undo(self) -> tuple | None:
        """Remove the last group; returns it, or None when there is nothing to undo."""
        if not self.groups:
            return None
        self._states.pop()
        return self.groups.pop()

    def group_to_json(self, group) -> list:
        """The journal form of a group: record moves, and corrections as objects."""
        spec = self.state.spec
        out = []
        for item in group:
            if isinstance(item, Correction):
                out.append({"correct": item.player, "delta": item.delta})
            else:
                out.append(action_to_move(spec, item) or {"leather": "place"})
        return out

    def group_from_json(self, items: list) -> tuple:
        """Inverse of :meth:`group_to_json`; raises ValueError on a bad item."""
        spec = self.state.spec
        group = []
        for i, item in enumerate(items):
            if isinstance(item, dict) and "correct" in item:
                group.append(Correction(int(item["correct"]), int(item["delta"])))
            elif item == {"leather": "place"}:
                group.append(PlaceLeather())
            else:
                group.append(move_to_action(spec, item, i, tracked=False))
        return tuple(group)

    def record(self, players: tuple[str, str] | None = None, meta: dict | None = None) -> GameRecord:
        """The game record (untracked style) of the turns so far."""
        spec = self.state.spec
        moves, corrections = [], []
        for group in self.groups:
            for item in group:
                if isinstance(item, Correction):
                    corrections.append({"player": item.player, "delta": item.delta,
                                        "after_move": len(moves)})
                    continue
                move = action_to_move(spec, item)
                if move is not None:
                    moves.append(move)
        names = players or self.setup.seat_names()
        meta = dict(meta or {})
        if corrections:
            meta["corrections"] = corrections
        circle, blue = self.setup.circle, self.setup.blue
        if self.setup.free:
            meta["layout"] = "free"
            circle, blue = _purchase_order(spec, moves, circle, blue)
        return GameRecord(self.setup.game, self.setup.time_board, names, circle, tuple(moves),
                          blue if spec.blue_patches else None, None, meta or None)


def _purchase_order(spec, moves, circle, blue):
    """A free layout has no dealt order: write the circle (and blue order) as the
    patches were bought, so each purchase stands first on offer when replayed (R3).

    The smallest patch must stay last (R3), so a free-layout game in which it
    was bought before other patches cannot be replayed with the neutral-token rule.
    """
    bought = [m["buy"] for m in moves if isinstance(m, dict) and "buy" in m]
    smallest = spec.smallest_patch
    first = [p for p in bought if p in circle and p != smallest]
    rest = [p for p in circle if p not in first and p != smallest]
    blue_first = [p for p in bought if p in blue]
    return (tuple(first + rest + [smallest]),
            tuple(blue_first + [p for p in blue if p not in blue_first]))


def _corrected(state: GameState, c: Correction) -> GameState:
    players = list(state.players)
    p = players[c.player]
    players[c.player] = p._replace(buttons=max(0, p.buttons + c.delta))
    return state._replace(players=tuple(players))

