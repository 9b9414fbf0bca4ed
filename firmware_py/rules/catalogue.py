"""Patch catalogues and time boards, loaded from the package's JSON data.

The values are facts of the two published games (see ``data/*.json``); they are
kept as data so that a user can correct the low-confidence Express values
(ruling R17) by passing a file of their own to :func:`load_spec`.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from importlib import resources
from pathlib import Path

from .errors import SpecError

GAMES = ("patchwork", "patchwork-express")
DEFAULT_TIME_BOARD = {"patchwork": "2014", "patchwork-express": "standard"}


@dataclass(frozen=True)
class Patch:
    """One patch of the catalogue.

    ``cells`` are (row, col) pairs of the printed shape, 0-based, row 0 at the
    top; ``cost`` is in buttons, ``time`` in time-board spaces, ``income`` is
    the number of buttons printed on it (paid at every income space, R7).
    ``tag`` is ``"round"`` or ``"square (blue)"`` in Express, ``""`` otherwise.
    """

    id: int
    shape: tuple[str, ...]
    cost: int
    time: int
    income: int
    tag: str = ""

    @cached_property
    def cells(self) -> tuple[tuple[int, int], ...]:
        """Covered cells of the printed shape as (row, col) pairs."""
        return tuple((r, c) for r, line in enumerate(self.shape)
                     for c, ch in enumerate(line) if ch != ".")

    @cached_property
    def area(self) -> int:
        """Number of quilt squares the patch covers (1..8)."""
        return len(self.cells)

    @cached_property
    def blue(self) -> bool:
        """True for an Express blue (square-tag) patch (ruling R16)."""
        return self.tag.startswith("square")


@dataclass(frozen=True)
class GameSpec:
    """Everything fixed about one game and time board.

    Spaces are numbered 0 (start) to ``last_space``; ``income_spaces`` and
    ``leather_spaces`` are sorted tuples of space numbers. ``bonus_square`` is
    the side of the special tile's square (7) or 0 when the game has none
    (Express); ``bonus_points`` its value. Quilts are ``rows`` x ``cols``.
    """

    game: str
    time_board: str
    rows: int
    cols: int
    starting_buttons: int
    empty_penalty: int
    bonus_square: int
    bonus_points: int
    last_space: int
    income_spaces: tuple[int, ...]
    leather_spaces: tuple[int, ...]
    blue_enter_when_left: int
    patches: tuple[Patch, ...]
    memo: dict = field(default_factory=dict, init=False, repr=False, compare=False)
    """A per-spec scratch dict where the engine memoises derived tables (a plain
    field, not a property: the engine reads it on every turn)."""

    @cached_property
    def quilt_size(self) -> int:
        """Number of squares on a quilt board (81 or 49)."""
        return self.rows * self.cols

    @cached_property
    def smallest_patch(self) -> int:
        """Id of the smallest non-blue patch (the neutral token starts after it, R3)."""
        pool = [p for p in self.patches if not p.blue]
        return min(pool, key=lambda p: (p.area, p.id)).id

    @cached_property
    def circle_patches(self) -> tuple[int, ...]:
        """Ids of the patches dealt into the starting circle (not the blue ones)."""
        return tuple(p.id for p in self.patches if not p.blue)

    @cached_property
    def blue_patches(self) -> tuple[int, ...]:
        """Ids of Express's blue patches (empty for Patchwork)."""
        return tuple(p.id for p in self.patches if p.blue)


def _require(obj: dict, key: str, kind: type, where: str):
    if key not in obj:
        raise SpecError(f"{where}: missing key {key!r}")
    value = obj[key]
    if kind is int and (isinstance(value, bool) or not isinstance(value, int)):
        raise SpecError(f"{where}.{key}: expected an integer, got {value!r}")
    if not isinstance(value, kind):
        raise SpecError(f"{where}.{key}: expected {kind.__name__}, got {value!r}")
    return value


def _patch_from_json(obj: dict, index: int) -> Patch:
    where = f"patches[{index}]"
    shape = tuple(_require(obj, "shape", list, where))
    if not shape or any(not isinstance(s, str) or set(s) - set(".#O") for s in shape):
        raise SpecError(f"{where}.shape: rows of '.', '#' and 'O' expected, got {shape!r}")
    patch = Patch(id=_require(obj, "id", int, where), shape=shape,
                  cost=_require(obj, "cost", int, where), time=_require(obj, "time", int, where),
                  income=_require(obj, "income", int, where), tag=obj.get("tag", ""))
    if patch.area == 0 or patch.cost < 0 or patch.time < 0 or patch.income < 0:
        raise SpecError(f"{where}: area must be >= 1 and cost, time, income >= 0")
    return patch


def spec_from_json(data: dict, time_board: str | None = None, source: str = "catalogue") -> GameSpec:
    """Build a :class:`GameSpec` from a catalogue object (the ``data/*.json`` shape).

    Raises :class:`SpecError` naming the key that is missing or wrong.
    """
    game = _require(data, "game", str, source)
    if game not in GAMES:
        raise SpecError(f"{source}.game: {game!r} is not one of {GAMES}")
    board = _require(data, "time_board", dict, source)
    leather = _require(board, "leather_spaces", dict, f"{source}.time_board")
    time_board = time_board or DEFAULT_TIME_BOARD[game]
    if time_board not in leather:
        raise SpecError(f"time board {time_board!r} is not one of {sorted(leather)} for {game}")
    quilt = _require(data, "quilt", dict, source)
    bonus = data.get("bonus_tile")
    patches = tuple(_patch_from_json(p, i) for i, p in enumerate(_require(data, "patches", list, source)))
    if [p.id for p in patches] != list(range(len(patches))):
        raise SpecError(f"{source}.patches: ids must be 0..{len(patches) - 1} in order")
    return GameSpec(
        game=game, time_board=time_board,
        rows=_require(quilt, "rows", int, f"{source}.quilt"),
        cols=_require(quilt, "cols", int, f"{source}.quilt"),
        starting_buttons=_require(data, "starting_buttons", int, source),
        empty_penalty=_require(data, "empty_square_penalty", int, source),
        bonus_square=bonus["square"] if bonus else 0,
        bonus_points=bonus["points"] if bonus else 0,
        last_space=_require(board, "last_space", int, f"{source}.time_board"),
        income_spaces=tuple(sorted(_require(board, "income_spaces", list, f"{source}.time_board"))),
        leather_spaces=tuple(sorted(leather[time_board])),
        blue_enter_when_left=data.get("blue_patches_enter_when_left", 0),
        patches=patches,
    )


@lru_cache(maxsize=None)
def _packaged(game: str) -> dict:
    text = resources.files(__package__).joinpath("data", f"{game}.json").read_text("utf-8")
    return json.loads(text)


@lru_cache(maxsize=None)
def _cached_spec(game: str, time_board: str | None) -> GameSpec:
    if game not in GAMES:
        raise SpecError(f"game {game!r} is not one of {GAMES}")
    return spec_from_json(_packaged(game), time_board, f"{game}.json")


def load_spec(game: str = "patchwork", time_board: str | None = None,
              catalogue: str | Path | None = None) -> GameSpec:
    """The :class:`GameSpec` for ``game`` ("patchwork" or "patchwork-express").

    ``time_board`` is "2014" (default) or "revised" for Patchwork (R15) and
    "standard" for Express. ``catalogue`` is an optional JSON file of the same
    shape as the packaged data, to correct values (R17). The packaged specs are
    cached, so equal arguments give the same object. Raises :class:`SpecError`.
    """
    if catalogue is None:
        return _cached_spec(game, time_board)
    path = Path(catalogue)
    try:
        data = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError) as exc:
        raise SpecError(f"{path}: cannot read catalogue: {exc}") from exc
    spec = spec_from_json(data, time_board, str(path))
    if spec.game != game:
        raise SpecError(f"{path}: catalogue is for {spec.game!r}, not {game!r}")
    return spec
