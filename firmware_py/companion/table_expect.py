"""Where the table expects the tokens, for the token watcher (:mod:`.tokens`).

Pure: from the table's game, mode, choice and the state before a tentative move, an
:class:`~.tokens.Expectation` (the tokens' spaces, the mover, the spaces the mover may
go to, where the other player may follow for quick hands, and the expectation before
a move still open to revision).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..rules import Advance, Buy
from . import intents
from .tokens import Expectation
from .view import Mode

if TYPE_CHECKING:
    from .table import Table

_REVISABLE = frozenset({Mode.TURN, Mode.CONFIRM, Mode.LEATHER, Mode.BOX})
"""Modes in which the last move, while tentative, may still be revised by its token."""


def expectation(t: Table) -> Expectation | None:
    """Where the tokens must be and where the mover may go, or None outside play."""
    if t.session is None or t.mode == Mode.END:
        return None
    state = t.state
    before = None
    if t.tentative is not None and t.mode in _REVISABLE:
        before = expect_in(t.tentative, None)          # the box's turn: still revisable
    if t.mode == Mode.BOX and t.box.move is not None:
        return expect_in(state, t.box.expected(), before)
    if t.mode not in (Mode.TURN, Mode.CONFIRM) or state.to_move is None:
        return Expectation(positions(state), None, frozenset(), previous=before)
    return expect_in(state, t.intent if t.armed else None, before)


def expect_in(state, chosen, before=None) -> Expectation:
    """The expectation in ``state``: after OK (``chosen``) only its space counts; and
    where the other player could go next after each target (for quick hands)."""
    onward = None
    if chosen is not None and not intents.why_not(state, chosen):
        actions = [chosen]
    else:
        actions = [a for a in intents.legal_set(state) if isinstance(a, (Buy, Advance))]
        onward = Onward(state)
    mover = state.to_move
    follow: dict[int, frozenset[int]] = {}
    for action in actions:
        target = intents.target_of(state, action)
        spaces = follow.get(target, frozenset())
        after = intents.after_move(state, action)
        if not after.over and after.to_move == 1 - mover:
            spaces |= {intents.target_of(after, a) for a in intents.legal_set(after)
                       if isinstance(a, (Buy, Advance))}
        follow[target] = frozenset(spaces)
    return Expectation(positions(state), mover, frozenset(follow),
                       tuple(sorted(follow.items())), before, onward)


class Onward:
    """``Expectation.onward`` for ``state``: whether the player to move may have reached
    a space by several turns of their own through stops on the way (see
    :func:`.intents.readings`). Equal for the same state object, so an unchanged
    expectation still compares equal."""

    __slots__ = ("state",)

    def __init__(self, state):
        self.state = state

    def __call__(self, stops: tuple[int, ...], space: int) -> bool:
        return any(len(r) > 1 for r in intents.readings(self.state, stops, space))

    def __eq__(self, other) -> bool:
        return isinstance(other, Onward) and other.state is self.state

    def __hash__(self) -> int:
        return id(self.state)


def positions(state) -> tuple[int, int]:
    """(player 0's space, player 1's space) in ``state``."""
    return (state.players[0].position, state.players[1].position)
