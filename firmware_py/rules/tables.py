"""Lookup tables the engine derives once per game spec and reads on every turn.

Everything here follows from the catalogue and the time board alone, so it is
computed on first use and memoised on the :class:`~.catalogue.GameSpec`. The
turn-by-turn code then indexes tuples instead of recomputing the same facts.
"""
from __future__ import annotations

from bisect import bisect_right
from typing import NamedTuple

from . import actions as A
from .catalogue import GameSpec
from .quilt import placements


class SpecTables(NamedTuple):
    """Per-patch facts as tuples indexed by patch id, and the income crossings.

    - ``cost`` (buttons) and ``area`` (squares) of each patch, which decide
      what may be bought (R6);
    - ``patch``: ``(cost, time, income, area)`` of each patch in one row
      (buttons, spaces, buttons, squares);
    - ``buy``: the untracked :class:`~.actions.Buy` of each patch;
    - ``crossed[start][end]``: the income spaces a token passes or lands on
      moving from space ``start`` to ``end`` (0 <= start <= end <= last
      space), in order; R7 and R8 pay one income per entry.
    """

    cost: tuple[int, ...]
    area: tuple[int, ...]
    patch: tuple[tuple[int, int, int, int], ...]
    buy: tuple[A.Buy, ...]
    crossed: tuple[tuple[tuple[int, ...], ...], ...]


def spec_tables(spec: GameSpec) -> SpecTables:
    """The :class:`SpecTables` of ``spec``, built on the first call and then reused."""
    tables = spec.memo.get("tables")
    if tables is None:
        tables = spec.memo["tables"] = _build(spec)
    return tables


def _build(spec: GameSpec) -> SpecTables:
    patches = spec.patches
    spaces = spec.income_spaces
    last = spec.last_space
    passed = [bisect_right(spaces, s) for s in range(last + 1)]
    crossed = tuple(tuple(spaces[passed[start]:passed[end]] if end >= start else ()
                          for end in range(last + 1))
                    for start in range(last + 1))
    return SpecTables(tuple(p.cost for p in patches), tuple(p.area for p in patches),
                      tuple((p.cost, p.time, p.income, p.area) for p in patches),
                      tuple(A.Buy(p.id) for p in patches), crossed)


def buy_table(spec: GameSpec) -> tuple[tuple[tuple[int, A.Buy], ...], ...]:
    """Per patch id: every ``(mask, Buy)`` placement on an empty quilt (R1), memoised.

    Built on first use (a few milliseconds): only tracked quilts need it.
    """
    table = spec.memo.get("buys")
    if table is None:
        table = tuple(tuple((m, A.Buy(p.id, m)) for m in placements(p.cells, spec.rows, spec.cols))
                      for p in spec.patches)
        spec.memo["buys"] = table
        spec.memo["masks"] = tuple(frozenset(m for m, _ in row) for row in table)
    return table


def placement_masks(spec: GameSpec, patch: int) -> frozenset[int]:
    """Every placement mask of ``patch`` (an id) on an empty quilt of ``spec`` (R1).

    Raises IndexError for an id outside the catalogue.
    """
    buy_table(spec)
    return spec.memo["masks"][patch]
