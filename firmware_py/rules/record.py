"""Game records, format ``patchwork-game-record/1``, and replaying them.

The format is specified in the project's game-record spec: one JSON object with
the setup and every move. :func:`parse_record` validates the top level,
:func:`replay` checks every move with the engine, :func:`dumps_record` writes
a record back (``parse_record(json.loads(dumps_record(r))) == r``).

Text is read with :mod:`.jsonsafe`: hostile nesting is a :class:`RecordError`
like any other malformed record. A free layout (``"layout": "free"``) replays
with any patch left on offer; a correction (``{"adjust": P, "buttons": N}``)
is applied where it stands by :func:`.adjust.adjust_buttons`.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Iterator

from . import actions as A
from . import jsonsafe
from .adjust import Adjust, adjust_buttons
from .catalogue import GAMES, GameSpec, load_spec
from .engine import apply, settle_leather
from .errors import IllegalActionError, SpecError
from .quilt import mask_of
from .state import GameState, new_game
from .tally import Tally, tally

FORMAT = "patchwork-game-record/1"
_KEYS = {"format", "game", "time_board", "players", "layout", "circle", "blue", "moves", "result",
         "meta"}
LAYOUTS = ("dealt", "free")


class RecordError(ValueError):
    """A malformed record or an illegal move.

    ``index`` is the 0-based index of the offending move (None for the setup),
    ``rule`` the rule or format clause broken.
    """

    def __init__(self, message: str, index: int | None = None, rule: str = "game record format"):
        self.index = index
        self.rule = rule
        where = f"move {index}: " if index is not None else ""
        super().__init__(f"{where}{message}")


@dataclass(frozen=True)
class GameRecord:
    """A parsed record: setup, the raw ``moves`` (JSON values), optional result and meta.

    ``layout`` is "dealt" (the circle's order is the table's, R3) or "free"
    (any patch left may be bought; the circle lists the patches in any order).
    """

    game: str
    time_board: str
    players: tuple[str, str]
    circle: tuple[int, ...]
    moves: tuple[Any, ...]
    blue: tuple[int, ...] | None = None
    result: dict | None = None
    meta: dict | None = field(default=None, compare=True)
    layout: str = "dealt"

    @property
    def free(self) -> bool:
        """True for a free layout (any patch left may be bought)."""
        return self.layout == "free"

    @property
    def tracked(self) -> bool:
        """True when the record's purchases carry cells (tracked quilts)."""
        return any(isinstance(m, dict) and "cells" in m for m in self.moves)

    def spec(self) -> GameSpec:
        """The :class:`GameSpec` the record is played with."""
        return load_spec(self.game, self.time_board)

    def to_json(self) -> dict:
        """The record as a JSON-ready dict (keys in the spec's order)."""
        out: dict[str, Any] = {"format": FORMAT, "game": self.game, "time_board": self.time_board,
                               "players": list(self.players)}
        if self.free:
            out["layout"] = self.layout
        out["circle"] = list(self.circle)
        if self.blue is not None:
            out["blue"] = list(self.blue)
        out["moves"] = list(self.moves)
        if self.result is not None:
            out["result"] = self.result
        if self.meta is not None:
            out["meta"] = self.meta
        return out


def _int_list(value, key: str) -> tuple[int, ...]:
    if not isinstance(value, list) or not all(type(v) is int for v in value):
        raise RecordError(f"{key!r} must be a list of patch ids (integers)")
    return tuple(value)


def _check_result(result) -> dict:
    ok = (isinstance(result, dict) and set(result) == {"scores", "winner"}
          and isinstance(result["scores"], list) and len(result["scores"]) == 2
          and all(type(s) is int for s in result["scores"]) and result["winner"] in (0, 1)
          and type(result["winner"]) is int)
    if not ok:
        raise RecordError('"result" must be {"scores": [int, int], "winner": 0 or 1}')
    return result


def parse_record(data: Any) -> GameRecord:
    """Validate a record's top level (a dict, or JSON text) and return a :class:`GameRecord`.

    Moves are checked later, by :func:`replay`. Raises :class:`RecordError`.
    """
    data = _load(data)
    _check_keys(data)
    _check_header(data)
    layout = data.get("layout", "dealt")
    if layout not in LAYOUTS or not isinstance(layout, str):
        raise RecordError(f'"layout" must be "dealt" or "free", got {_short(layout)}')
    _check_body(data)
    express, meta = data["game"] == "patchwork-express", data.get("meta")
    record = GameRecord(
        game=data["game"], time_board=data["time_board"], players=tuple(data["players"]),
        circle=_int_list(data["circle"], "circle"), moves=tuple(data["moves"]),
        blue=_int_list(data["blue"], "blue") if express else None,
        result=_check_result(data["result"]) if "result" in data else None, meta=meta,
        layout=layout)
    _check_setup(record)
    return record


def _load(data: Any) -> Any:
    """``data`` as a JSON value: JSON text (str or bytes) parsed, a value checked for its
    nesting depth. Raises :class:`RecordError` for text that is not one JSON value or
    a value nested too deep."""
    if isinstance(data, (str, bytes)):
        return _loads(data)
    try:
        jsonsafe.check_depth(data, "the record")
    except jsonsafe.NestingError as exc:
        raise RecordError(str(exc)) from exc
    return data


def _loads(text: str | bytes) -> Any:
    """The JSON value of a record's ``text``; :class:`RecordError` names a second value
    (a JSON Lines file), bad JSON or a value nested too deep."""
    try:
        return jsonsafe.loads(text, "the record")
    except json.JSONDecodeError as exc:
        if exc.msg == "Extra data" and exc.lineno > 1:
            raise RecordError(f"not one record: a second JSON value starts on line {exc.lineno} "
                              "(a JSON Lines file of several records?); a record file "
                              "holds one JSON object, so save one line on its own") from exc
        raise RecordError(f"not JSON: {exc}") from exc
    except jsonsafe.NestingError as exc:
        raise RecordError(str(exc)) from exc
    except ValueError as exc:
        raise RecordError(f"not JSON: {exc}") from exc


def _check_keys(data: Any) -> None:
    """A record is one JSON object with no unknown key and every required key."""
    if not isinstance(data, dict):
        raise RecordError("a record is one JSON object")
    unknown = sorted(set(data) - _KEYS)
    if unknown:
        raise RecordError(f"unknown key {unknown[0]!r}; allowed: {sorted(_KEYS)}")
    for key in ("format", "game", "time_board", "players", "circle", "moves"):
        if key not in data:
            raise RecordError(f"missing key {key!r}")


def _check_header(data: dict) -> None:
    """``format``, ``game`` and ``time_board`` are strings; the format is this one and
    the game one of :data:`GAMES`."""
    for key in ("format", "game", "time_board"):
        if not isinstance(data[key], str):
            raise RecordError(f"{key!r} must be a string, got {_kind(data[key])}")
    if data["format"] != FORMAT:
        raise RecordError(f'"format" must be {FORMAT!r}, got {data["format"]!r}')
    if data["game"] not in GAMES:
        raise RecordError(f'"game" must be one of {list(GAMES)}, got {data["game"]!r}')


def _check_body(data: dict) -> None:
    """``players`` is a list of two names, ``moves`` a list, ``blue`` present exactly for
    Express and ``meta``, when present, a JSON object."""
    players = data["players"]
    if not (isinstance(players, list) and len(players) == 2 and all(isinstance(p, str) for p in players)):
        raise RecordError('"players" must be a list of two names')
    if not isinstance(data["moves"], list):
        raise RecordError('"moves" must be a list')
    if (data["game"] == "patchwork-express") != ("blue" in data):
        raise RecordError('"blue" is required for Express and not allowed for Patchwork')
    meta = data.get("meta")
    if meta is not None and not isinstance(meta, dict):
        raise RecordError('"meta" must be a JSON object')


def _check_setup(record: GameRecord) -> None:
    """The record's time board, circle and blue patches make a game that can start
    (the engine's own checks); a :class:`SpecError` becomes a :class:`RecordError`."""
    try:
        spec = record.spec()
        new_game(spec=spec, circle=record.circle, blue=record.blue or (), free=record.free)
    except SpecError as exc:
        raise RecordError(str(exc)) from exc


def _kind(value) -> str:
    """A JSON value's kind for a message ("a list", "an object", "a number" ...)."""
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    return "a number" if isinstance(value, (int, float)) else "a string"


def _short(value) -> str:
    """A JSON value for a message: short scalars as they are, lists and objects by kind."""
    if isinstance(value, (dict, list)):
        return _kind(value)
    text = json.dumps(value)
    return text if len(text) <= 40 else text[:37] + "..."


def dumps_record(record: GameRecord) -> str:
    """The record as compact one-line JSON text."""
    return json.dumps(record.to_json(), separators=(",", ":"))


def _cells_mask(spec: GameSpec, pid: int, cells, index: int) -> int:
    pairs = []
    for cell in cells if isinstance(cells, list) else [None]:
        if not (isinstance(cell, list) and len(cell) == 2 and all(type(v) is int for v in cell)):
            raise RecordError('"cells" must be a list of [row, col] integer pairs', index)
        pairs.append(tuple(cell))
    for r, c in pairs:
        if not (0 <= r < spec.rows and 0 <= c < spec.cols):
            raise RecordError(f"cell [{r}, {c}] is outside the {spec.rows}x{spec.cols} quilt", index,
                              "R1: fully inside the quilt")
    return mask_of(pairs, spec.cols)


def move_to_action(spec: GameSpec, move: Any, index: int, tracked: bool) -> A.Action:
    """Translate one record move into an engine action, or an
    :class:`~.adjust.Adjust` for a correction (shape checks only).

    Raises :class:`RecordError` naming ``index`` for a move of unknown form,
    an unknown patch id, cells off the quilt, or a move of the other record
    style. The shape of the cells is the engine's check (after the offer's).
    """
    if move == "advance":
        return A.ADVANCE
    if not isinstance(move, dict) or len(move) not in (1, 2):
        raise RecordError(f"unknown move {_short(move)}", index)
    if "adjust" in move:
        return _adjust_action(move, index)
    if "buy" in move:
        pid = move["buy"]
        if type(pid) is not int or not 0 <= pid < len(spec.patches) or set(move) - {"buy", "cells"}:
            raise RecordError(f"bad purchase {_short(pid)}: patch ids are "
                              f"0..{len(spec.patches) - 1} (keys: buy, cells)", index)
        if ("cells" in move) != tracked:
            raise RecordError("tracked and untracked purchases are mixed", index,
                              "game record: mixing the two styles is an error")
        return A.Buy(pid, _cells_mask(spec, pid, move["cells"], index) if tracked else None)
    if len(move) != 1:
        raise RecordError(f"unknown move with keys {sorted(map(str, move))}", index)
    if "leather" in move:
        return _leather_action(spec, move["leather"], index, tracked)
    if "bonus" in move:
        if type(move["bonus"]) is not int or move["bonus"] not in (0, 1):
            raise RecordError(f'"bonus" names player 0 or 1, got {_short(move["bonus"])}', index)
        return A.ClaimSpecialTile(move["bonus"])
    raise RecordError(f"unknown move with key {next(iter(move))!r}", index)


def _adjust_action(move: dict, index: int) -> Adjust:
    """``{"adjust": P, "buttons": N}`` -> :class:`~.adjust.Adjust` (shape checks only)."""
    if set(move) != {"adjust", "buttons"}:
        raise RecordError('a correction is {"adjust": P, "buttons": N}', index)
    player, buttons = move["adjust"], move["buttons"]
    if type(player) is not int or player not in (0, 1):
        raise RecordError(f'"adjust" names player 0 or 1, got {_short(player)}', index)
    if type(buttons) is not int or buttons == 0:
        raise RecordError(f'"buttons" of a correction is a non-zero integer, got {_short(buttons)}',
                          index)
    return Adjust(player, buttons)


def _leather_action(spec: GameSpec, where, index: int, tracked: bool) -> A.Action:
    if where == "discard":
        return A.DISCARD
    if not (isinstance(where, list) and len(where) == 2 and all(type(v) is int for v in where)):
        raise RecordError(f'"leather" takes [row, col] or "discard", got {_short(where)}', index)
    r, c = where
    if not (0 <= r < spec.rows and 0 <= c < spec.cols):
        raise RecordError(f"leather square [{r}, {c}] is outside the quilt", index, "R1")
    return A.PlaceLeather(r * spec.cols + c if tracked else None)


def action_to_move(spec: GameSpec, action: A.Action) -> Any:
    """The record form of an engine action or an :class:`~.adjust.Adjust`
    (inverse of :func:`move_to_action`).

    Returns None for an untracked leather placement: such records omit it,
    and the patch then counts as placed.
    """
    kind = type(action)
    if kind is Adjust:
        return {"adjust": action.player, "buttons": action.buttons}
    if kind is A.Advance:
        return "advance"
    if kind is A.Buy:
        if action.mask is None:
            return {"buy": action.patch}
        cells = [[b // spec.cols, b % spec.cols] for b in range(spec.quilt_size) if action.mask >> b & 1]
        return {"buy": action.patch, "cells": cells}
    if kind is A.PlaceLeather:
        sq = action.square
        return None if sq is None else {"leather": [sq // spec.cols, sq % spec.cols]}
    if kind is A.DiscardLeather:
        return {"leather": "discard"}
    return {"bonus": action.player}


@dataclass(frozen=True)
class Step:
    """One replayed move: its ``index``, the ``player`` who made it, the state
    after it, its events.

    ``player`` is whose token moved for action A or B (also when an untracked
    record leaves a leather patch owed, which the engine settles for its
    winner at the start of this move, R9), the leather's winner for a
    ``leather`` move, the player named by a correction or a 7x7 claim, and -1
    when nobody is to move.
    """

    index: int
    player: int
    state: GameState
    events: tuple


def start_state(record: GameRecord) -> GameState:
    """The state before the first move of ``record``."""
    return new_game(spec=record.spec(), circle=record.circle, blue=record.blue or (),
                    tracked=record.tracked, free=record.free)


def steps(record: GameRecord) -> Iterator[Step]:
    """Replay ``record`` move by move, yielding a :class:`Step` after each.

    A correction (``{"adjust": P, "buttons": N}``) is applied by
    :func:`~.adjust.adjust_buttons`, every other move by the engine's
    ``apply()``. Raises :class:`RecordError` naming the move's index and the
    rule broken.
    """
    state = start_state(record)
    spec, tracked = state.spec, state.tracked
    for index, move in enumerate(record.moves):
        action = move_to_action(spec, move, index, tracked)
        kind = type(action)
        player = _actor(state, action, kind)
        try:
            if kind is Adjust:
                state, events = adjust_buttons(state, action)
            else:
                state, events = apply(state, action)
        except IllegalActionError as exc:
            raise RecordError(str(exc), index, exc.rule) from exc
        yield Step(index, player if player is not None else -1, state, events)


def _actor(state: GameState, action, kind: type) -> int | None:
    """Who makes ``action`` in ``state``: for action A or B in an untracked game
    with a leather patch owed, the player whose token moves once the owed
    patch counts as placed (R9: placing it changes no position), not its winner."""
    if kind is A.ClaimSpecialTile or kind is Adjust:
        return action.player
    if state.owed and not state.tracked and (kind is A.Buy or kind is A.Advance):
        return state._replace(owed=()).to_move
    return state.to_move


def replay(record: GameRecord, on_step=None) -> tuple[GameState, Tally]:
    """Replay the whole record; return the final state and its tally.

    ``on_step`` (optional) is called with each :class:`Step`. Leather patches
    an untracked record leaves owed at its end count as placed (R9). Raises
    :class:`RecordError` naming the move's index and the rule broken.
    """
    state = start_state(record)
    for step in steps(record):
        state = step.state
        if on_step is not None:
            on_step(step)
    if state.owed and not state.tracked:
        state, _ = settle_leather(state)
    return state, tally(state)


def untracked_copy(record: GameRecord) -> GameRecord:
    """The same game in the untracked style: cells and leather placements
    dropped (set-asides kept), each 7x7 special tile declared with
    ``{"bonus": P}`` where it was awarded.

    This is what a companion without a quilt camera records (design 2.8).
    Raises :class:`RecordError` if ``record`` itself does not replay.
    """
    if not record.tracked:
        return record
    moves: list[Any] = []
    for step in steps(record):
        move = record.moves[step.index]
        if isinstance(move, dict) and "buy" in move:
            moves.append({"buy": move["buy"]})
        elif not (isinstance(move, dict) and "leather" in move and move["leather"] != "discard"):
            moves.append(move)
        moves.extend({"bonus": e.player} for e in step.events if type(e) is A.SpecialTileAwarded)
    return GameRecord(record.game, record.time_board, record.players, record.circle, tuple(moves),
                      record.blue, record.result, record.meta, record.layout)
