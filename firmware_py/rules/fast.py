"""An unchecked fast path of the engine, for search only.

The table never uses this module: every action taken at the table goes
through the checked :func:`~.engine.apply`. Search (the box's opponent) calls
these functions millions of times, so they skip every legality check, build no
events and work on a flat tuple instead of nested NamedTuples:

``(pos0, buttons0, income0, quilt0, empty0, pos1, buttons1, income1, quilt1,
empty1, top, circle, blue, leather, owed, special, finisher)``

with the same meaning as :class:`~.state.GameState` fields (see there), except
that a quilt is ``None`` when that player's quilt is only counted, so one
player may be tracked while the other is not (the box knows its own quilt but
not the human's). ``special`` and ``finisher`` are a player (0/1) or None.

Given a legal action the result equals ``apply()``'s new state (a test plays
many random games both ways); given an illegal one the result is undefined.
"""
from __future__ import annotations

from . import actions as A
from .quilt import has_square
from .state import GameState, PlayerState
from .tables import spec_tables

POS, BUTTONS, INCOME, QUILT, EMPTY = 0, 1, 2, 3, 4
"""Offsets of a player's fields; player 1's are these plus :data:`P1`."""
P1 = 5
TOP, CIRCLE, BLUE, LEATHER, OWED, SPECIAL, FINISHER = range(10, 17)

Flat = tuple
"""The flat state tuple described in the module docstring."""


def flat(state: GameState, quilts: tuple | None = None) -> Flat:
    """The flat tuple of ``state``.

    Tracked states keep both quilt masks; untracked ones get ``None`` unless
    ``quilts`` gives ``(mask or None, mask or None)`` per player (a bitmask
    of covered squares, as in :mod:`.quilt`).
    """
    a, b = state.players
    if quilts is None:
        quilts = (a.quilt, b.quilt) if state.tracked else (None, None)
    return (a.position, a.buttons, a.income, quilts[0], a.empty,
            b.position, b.buttons, b.income, quilts[1], b.empty,
            state.top, state.circle, state.blue, state.leather, state.owed,
            state.special, state.finisher)


def unflat(f: Flat, spec, free: bool = False) -> GameState:
    """The :class:`GameState` of flat tuple ``f`` (tracked when both quilts are masks)."""
    tracked = f[QUILT] is not None and f[P1 + QUILT] is not None
    players = tuple(PlayerState(f[o + POS], f[o + BUTTONS], f[o + INCOME],
                                f[o + QUILT] if tracked else 0, f[o + EMPTY]) for o in (0, P1))
    return GameState(spec, players, f[TOP], f[CIRCLE], f[BLUE], f[LEATHER], f[OWED],
                     f[SPECIAL], f[FINISHER], tracked, free)


def to_move(f: Flat, last: int) -> int | None:
    """Who acts in ``f`` (R4, R9): the leather winner, the one behind, the top token; None at the end."""
    if f[OWED]:
        return f[OWED][0]
    a, b = f[POS], f[P1 + POS]
    if a != b:
        return 0 if a < b else 1
    return None if a == last else f[TOP]


def advance(f: Flat, spec) -> Flat:
    """Action A for the player to move (R5); ``f`` must have no leather owed."""
    mover = 0 if f[POS] < f[P1 + POS] else 1 if f[P1 + POS] < f[POS] else f[TOP]
    o = mover * P1
    end = f[P1 - o + POS] + 1
    if end > spec.last_space:
        end = spec.last_space
    gained = end - f[o + POS]
    return _move(f, spec, mover, end, gained, 0, f[o + QUILT], 0, f[CIRCLE], f[BLUE], f[SPECIAL])


def buy(f: Flat, index: int, mask: int | None, spec) -> Flat:
    """Action B: the player to move takes ``circle[index]`` and places it at ``mask``
    (None for a counted quilt) (R6); no check that it is on offer, affordable or fits."""
    mover = 0 if f[POS] < f[P1 + POS] else 1 if f[P1 + POS] < f[POS] else f[TOP]
    o = mover * P1
    circle = f[CIRCLE]
    pid = circle[index]
    cost, time, income, area = spec_tables(spec).patch[pid]
    quilt = f[o + QUILT]
    if quilt is not None:
        quilt |= mask
    circle = circle[index + 1:] + circle[:index]
    blue = f[BLUE]
    if blue and len(circle) <= spec.blue_enter_when_left:
        circle, blue = circle + blue, ()
    special = f[SPECIAL]
    if special is None and quilt is not None and spec.bonus_square \
            and has_square(quilt, spec.bonus_square, spec.rows, spec.cols):
        special = mover
    end = f[o + POS] + time
    if end > spec.last_space:
        end = spec.last_space
    return _move(f, spec, mover, end, -cost, income, quilt, area, circle, blue, special)


def _move(f, spec, mover, end, paid, income, quilt, area, circle, blue, special) -> Flat:
    """The mover's token to ``end``: income (R7, R8), leather (R9), top (R4), finisher (R14)."""
    o = mover * P1
    start = f[o + POS]
    income += f[o + INCOME]
    buttons = f[o + BUTTONS] + paid
    if income:
        buttons += income * len(spec_tables(spec).crossed[start][end])
    leather, owed = f[LEATHER], f[OWED]
    if leather and leather[0] <= end:
        won = [s for s in leather if start < s <= end]
        if won:
            leather = tuple(s for s in leather if s not in won)
            owed = owed + (mover,) * len(won)
    other = f[P1 - o:P1 - o + P1]
    top = mover if end == other[POS] else f[TOP]
    finisher = f[FINISHER]
    if finisher is None and end == spec.last_space:
        finisher = mover
    me = (end, buttons, income, quilt, f[o + EMPTY] - area)
    both = me + other if mover == 0 else other + me
    return both + (top, circle, blue, leather, owed, special, finisher)


def place_leather(f: Flat, square: int | None, spec) -> Flat:
    """The first owed leather patch onto ``square`` (None on a counted quilt), R9;
    awards the special tile when it completes the square (R11)."""
    mover = f[OWED][0]
    o = mover * P1
    quilt = f[o + QUILT]
    special = f[SPECIAL]
    if quilt is not None:
        quilt |= 1 << square
        if special is None and spec.bonus_square \
                and has_square(quilt, spec.bonus_square, spec.rows, spec.cols):
            special = mover
    out = list(f)
    out[o + QUILT] = quilt
    out[o + EMPTY] -= 1
    out[OWED] = f[OWED][1:]
    out[SPECIAL] = special
    return tuple(out)


def discard_leather(f: Flat) -> Flat:
    """The first owed leather patch set aside (R10, or by choice in Express)."""
    return f[:OWED] + (f[OWED][1:],) + f[OWED + 1:]


def fast_apply(f: Flat, action: A.Action, spec) -> Flat:
    """Flat ``f`` after ``action`` (Advance, Buy, PlaceLeather or DiscardLeather), unchecked.

    Equals ``flat(apply(state, action)[0])`` for a legal action. Raises
    TypeError for any other value (the 7x7 claim is untracked-only and
    not used by search).
    """
    kind = type(action)
    if kind is A.Advance:
        return advance(f, spec)
    if kind is A.Buy:
        return buy(f, f[CIRCLE].index(action.patch), action.mask, spec)
    if kind is A.PlaceLeather:
        return place_leather(f, action.square, spec)
    if kind is A.DiscardLeather:
        return discard_leather(f)
    raise TypeError(f"not a search action: {action!r}")


def score(f: Flat, player: int, spec) -> int:
    """Buttons + special tile - penalty x empty squares for ``player`` (R13)."""
    o = player * P1
    bonus = spec.bonus_points if f[SPECIAL] == player else 0
    return f[o + BUTTONS] + bonus - spec.empty_penalty * f[o + EMPTY]
