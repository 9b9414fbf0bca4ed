"""The box's whole turn at the table, ready to show and to commit.

At the table quilts are untracked (the record may not mix styles), but the
box knows its own quilt exactly because it says where each patch goes. A
:class:`BoxTurn` is everything the human carries out for it: the action, any
leather patches it won and where they go, the 7x7 it completes (declared with
``ClaimSpecialTile``, recorded as ``bonus``), its time token's target space,
and its quilt afterwards.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable

from ..rules import actions as A
from ..rules.engine import apply
from ..rules.quilt import has_square
from ..rules.state import GameState
from .box import Decision, choose
from .placement import leather_square


@dataclass(frozen=True)
class BoxTurn:
    """One turn of the box.

    - ``group``: the engine actions in order, for the untracked table state
      (Advance or Buy, then PlaceLeather/DiscardLeather per leather patch
      won, then ClaimSpecialTile when its quilt now holds a 7x7 square);
    - ``decision``: the search's :class:`~.box.Decision`;
    - ``patch``, ``offer_index``, ``mask``: the patch taken, where it lies in
      front of the neutral token (0..2) and its placement bitmask, or None;
    - ``leather``: the squares (bit indices) of leather patches placed;
    - ``target``: the space its time token goes to; ``buttons``: buttons it
      takes from the bank (action A, R5) or pays (negative, action B) before
      income; ``income``: buttons paid by income spaces crossed (R7);
    - ``quilt``: its quilt bitmask after the turn; ``bonus``: True when this
      turn completed its 7x7 and the special tile is now its (R11).
    """

    group: tuple[A.Action, ...]
    decision: Decision
    patch: int | None
    offer_index: int | None
    mask: int | None
    leather: tuple[int, ...]
    target: int
    buttons: int
    income: int
    quilt: int
    bonus: bool


def plan_turn(state: GameState, quilt: int, *, level: str = "hard", seed: int = 0,
              seconds: float | None = None, iterations: int | None = None,
              clock: Callable[[], float] = time.perf_counter) -> BoxTurn:
    """The box's turn in untracked ``state`` (the box is to move, no leather owed)
    with its quilt bitmask ``quilt``. The group is checked with ``apply()``.

    ``clock`` (seconds) times the budget, as for :func:`~.box.choose`: one that jumps
    past the budget ends the search early (a search the table no longer needs).
    Raises ValueError when the game is over or a leather patch is still
    owed (the table places the human's leather first).
    """
    if state.owed:
        raise ValueError("a leather patch is owed: place it before the box plays")
    box = state.to_move
    decision = choose(state, level=level, seed=seed, seconds=seconds, iterations=iterations,
                      quilt=quilt, clock=clock)
    group = [decision.action]
    after, events = apply(state, decision.action)
    if decision.mask is not None:
        quilt |= decision.mask
    leather = []
    while after.owed:
        if after.players[after.owed[0]].empty == 0:
            action: A.Action = A.DISCARD
        else:
            square = leather_square(state.spec, quilt)
            quilt |= 1 << square
            leather.append(square)
            action = A.PlaceLeather()
        group.append(action)
        after, more = apply(after, action)
        events += more
    spec = state.spec
    bonus = bool(spec.bonus_square) and after.special is None \
        and has_square(quilt, spec.bonus_square, spec.rows, spec.cols)
    if bonus:
        group.append(A.ClaimSpecialTile(box))
        after, _ = apply(after, group[-1])
    paid = sum(e.buttons for e in events if isinstance(e, A.IncomePaid))
    gained = sum(e.buttons for e in events if isinstance(e, A.ButtonsEarned))
    cost = sum(e.cost for e in events if isinstance(e, A.PatchBought))
    return BoxTurn(tuple(group), decision, decision.patch, decision.offer_index, decision.mask,
                   tuple(leather), after.players[box].position, gained - cost, paid, quilt, bonus)


def hint(state: GameState, *, level: str = "normal", seed: int = 0,
         seconds: float | None = None, clock: Callable[[], float] = time.perf_counter
         ) -> Decision:
    """What the box would play for the player to move in a two-human game
    (quilts counted, so the hint names a patch but no placement). ``clock``: seconds,
    as for :func:`~.box.choose` (one that jumps past the budget ends the search)."""
    return choose(state, level=level, seed=seed, seconds=seconds, clock=clock)
