"""The box as a player at the table: its turn as plain data, and the record of its quilt.

In a game against the box the rules engine tracks no quilt (the record may
not mix styles), but the box says where each of its patches goes, so it
knows its own quilt exactly. A :class:`BoxMove` is one turn of the box as the
human must carry it out; the search that makes it lives in ``ai/`` (above
this room) and is handed to the table as a function.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..rules import (Advance, Buy, ClaimSpecialTile, DiscardLeather, GameState, PlaceLeather,
                     placement_masks)
from ..rules.catalogue import GameSpec
from ..rules.quilt import has_square
from .intents import target_of

LEVELS = ("easy", "normal", "hard")
"""The levels offered at setup (the search's own table of levels is ``ai.LEVELS``)."""

BOX_NAME = "Box"
"""The name the box plays under (its player row, its record's player name)."""


@dataclass(frozen=True)
class BoxMove:
    """One turn of the box (or a hint: what the box would play for a person).

    - ``group``: the engine actions in order, for the untracked table state:
      ``Advance`` or ``Buy(patch)``, then a ``PlaceLeather()``/``DiscardLeather``
      per leather patch won, then ``ClaimSpecialTile`` when the box's quilt
      now holds a 7x7 square (R11);
    - ``target``: the space (0..last) its time token goes to;
    - ``patch``: the patch id taken, or None (action A); ``place``: 1..3, where it
      lies counting clockwise from the neutral token (R3; in a free layout its
      place among all the patches left), 0 for action A;
    - ``mask``: where the patch goes on the box's quilt (bitmask, bit
      ``row * cols + col``), 0 for action A or a hint;
    - ``leather``: the squares (bit indices) where its leather patches go;
    - ``bonus``: True when this turn completes the box's 7x7 square.
    """

    group: tuple
    target: int
    patch: int | None = None
    place: int = 0
    mask: int = 0
    leather: tuple[int, ...] = ()
    bonus: bool = False

    @property
    def squares(self) -> int:
        """Every square this turn covers on the box's quilt (patch and leather), as a bitmask."""
        out = self.mask
        for square in self.leather:
            out |= 1 << square
        return out

    def to_json(self, spec: GameSpec, moves: list) -> dict:
        """The journal form; ``moves`` is the group in journal form (``Session.group_to_json``)."""
        return {"moves": moves, "target": self.target, "patch": self.patch, "place": self.place,
                "cells": cells_of(spec, self.mask),
                "leather": [[s // spec.cols, s % spec.cols] for s in self.leather],
                "bonus": self.bonus}

    @classmethod
    def from_json(cls, data: dict, group: tuple, spec: GameSpec) -> "BoxMove":
        """Inverse of :meth:`to_json` given the parsed ``group``; raises ValueError naming the
        bad key (the caller checks the move against the game with :func:`check_move`)."""
        if not isinstance(data, dict):
            raise ValueError("the box's move must be an object")
        target, patch, place = data.get("target"), data.get("patch"), data.get("place", 0)
        if type(target) is not int or not 0 <= target <= spec.last_space:
            raise ValueError(f"box move: target must be a space 0..{spec.last_space}")
        if patch is not None and (type(patch) is not int or not 0 <= patch < len(spec.patches)):
            raise ValueError("box move: patch must be a patch id or null")
        if type(place) is not int or not 0 <= place <= len(spec.patches):
            raise ValueError(f"box move: place must be 0..{len(spec.patches)}")
        mask = mask_of(spec, data.get("cells", []), "box move: cells")
        leather = tuple(_square(spec, cell, "box move: leather")
                        for cell in _list(data.get("leather", []), "box move: leather"))
        return cls(group, target, patch, place, mask, leather, data.get("bonus") is True)


def check_move(move: BoxMove, state: GameState, quilt: int, box: int) -> str:
    """Why ``move`` cannot be the box's turn in ``state`` with its quilt ``quilt`` ("" when
    it can). Its group is action A or the patch it buys (R5, R6), then only what that
    brings by itself: a ``PlaceLeather``/``DiscardLeather`` per leather patch won (R9) and
    the box's claim of the 7x7 tile (R11). The rest must say the same as the group: the
    patch is the one bought and lies on offer at ``place`` (R3), placed as the patch's
    shape on empty squares (R8); ``target`` is where the action takes the box's token;
    one leather square per ``PlaceLeather``, on an empty square; ``bonus`` exactly when
    the box claims the 7x7 tile, and only with a 7x7 square on its quilt. The engine
    still checks the group itself (buttons, leather owed, the tile still free)."""
    if state.to_move != box:
        return "it is not the box's turn"
    first = move.group[0] if move.group else None
    if not isinstance(first, (Advance, Buy)):
        return "the box's turn must start with advancing or buying a patch"
    rest = move.group[1:]
    if not all(isinstance(a, (PlaceLeather, DiscardLeather, ClaimSpecialTile)) for a in rest):
        return "the box's turn holds an action that is not its own"
    if move.patch != (first.patch if isinstance(first, Buy) else None):
        return f"the patch shown ({move.patch}) is not the action's"
    if move.target != target_of(state, first):
        return f"its time token goes to {target_of(state, first)}, not {move.target}"
    problem = _placement_problem(move, state, quilt)
    if problem:
        return problem
    if len(move.leather) != sum(isinstance(a, PlaceLeather) for a in rest):
        return "the leather squares shown do not match the leather patches placed"
    claims = [a for a in rest if isinstance(a, ClaimSpecialTile)]
    if any(a.player != box for a in claims):
        return "the box claims the 7x7 tile only for itself"
    if move.bonus != bool(claims):
        return "the 7x7 claim does not match the move"
    spec = state.spec
    if claims and not has_square(quilt | move.squares, spec.bonus_square, spec.rows, spec.cols):
        return "the box's quilt holds no 7x7 square"
    return ""


def _placement_problem(move: BoxMove, state: GameState, quilt: int) -> str:
    """Why the patch and leather squares of ``move`` do not fit ("" when they do)."""
    if move.patch is not None:
        offer = state.offer if state.free else state.offer[:3]     # free layout: any patch left
        if move.patch not in offer or offer.index(move.patch) + 1 != move.place:
            return f"patch {move.patch} is not the patch on offer at place {move.place}"
        if move.mask not in placement_masks(state.spec, move.patch) or move.mask & quilt:
            return f"patch {move.patch} does not fit there on the box's quilt"
    elif move.mask or move.place:
        return "action A places no patch"
    covered = quilt | move.mask
    for square in move.leather:
        if covered >> square & 1:
            return f"the leather patch's square {square} is covered"
        covered |= 1 << square
    return ""


def cells_of(spec: GameSpec, mask: int) -> list[list[int]]:
    """The ``[row, col]`` cells of a quilt bitmask, row by row (the record's cell form)."""
    return [[b // spec.cols, b % spec.cols] for b in range(spec.quilt_size) if mask >> b & 1]


def mask_of(spec: GameSpec, cells, where: str) -> int:
    """The bitmask of ``[row, col]`` ``cells``; raises ValueError saying ``where`` on a cell
    off the quilt or given twice."""
    mask = 0
    for cell in _list(cells, where):
        bit = 1 << _square(spec, cell, where)
        if mask & bit:
            raise ValueError(f"{where}: cell {cell} given twice")
        mask |= bit
    return mask


def quilt_rows(spec: GameSpec, quilt: int) -> list[str]:
    """The quilt as text rows, "#" covered and "." empty, row 0 (the top) first."""
    return ["".join("#" if quilt >> (r * spec.cols + c) & 1 else "." for c in range(spec.cols))
            for r in range(spec.rows)]


def _list(value, where: str) -> list:
    if not isinstance(value, list):
        raise ValueError(f"{where} must be a list of [row, col] cells")
    return value


def _square(spec: GameSpec, cell, where: str) -> int:
    if not (isinstance(cell, list) and len(cell) == 2 and all(type(v) is int for v in cell)
            and 0 <= cell[0] < spec.rows and 0 <= cell[1] < spec.cols):
        raise ValueError(f"{where}: {cell!r} is not a [row, col] cell of the "
                         f"{spec.rows}x{spec.cols} quilt")
    return cell[0] * spec.cols + cell[1]


@dataclass(frozen=True)
class BoxRequest:
    """What the table asks the search: ``key`` (to match the answer to the question
    still open), the ``state`` (untracked), the box's ``quilt`` bitmask (None for a
    hint: the quilt of the person asking is not known), the ``level`` name and a
    ``seed``. The answer is a :class:`BoxMove`."""

    key: int
    state: GameState
    quilt: int | None
    level: str
    seed: int

