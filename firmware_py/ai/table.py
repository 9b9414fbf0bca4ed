"""The box's search as the table asks for it: a request in, a :class:`BoxMove` out.

``companion`` (below this room) describes the box's turn as plain data; this
module fills it in from :func:`~.turn.plan_turn` (the box's own turn, its quilt
known) or :func:`~.turn.hint` (a hint for a person, whose quilt is not known).
"""
from __future__ import annotations

import time
from typing import Callable

from ..companion.intents import target_of
from ..companion.opponent import BoxMove, BoxRequest
from .turn import hint, plan_turn

HINT_SECONDS = 2.0      #: the most a hint searches (the normal level's iteration cap ends it sooner)


def answer(request: BoxRequest, *, seconds: float | None = None, iterations: int | None = None,
           clock: Callable[[], float] = time.perf_counter) -> BoxMove:
    """The box's move for ``request`` (its own turn when ``request.quilt`` is a bitmask, a
    hint when it is None). ``seconds``/``iterations`` override the level's budget (tests,
    simulations); ``clock`` (seconds) times it, and one that jumps past the budget ends
    the search early. Raises ValueError for a finished game or an unknown level."""
    state = request.state
    if request.quilt is None:
        decision = hint(state, level=request.level, seed=request.seed,
                        seconds=HINT_SECONDS if seconds is None else seconds, clock=clock)
        return BoxMove((decision.action,), target_of(state, decision.action), decision.patch,
                       (decision.offer_index or 0) + 1 if decision.patch is not None else 0)
    turn = plan_turn(state, request.quilt, level=request.level, seed=request.seed,
                     seconds=seconds, iterations=iterations, clock=clock)
    place = turn.offer_index + 1 if turn.offer_index is not None else 0
    return BoxMove(turn.group, turn.target, turn.patch, place, turn.mask or 0, turn.leather, turn.bonus)


def planner(seconds: float | None = None, iterations: int | None = None
            ) -> Callable[..., BoxMove]:
    """A function answering requests with the given budget (None: each level's own, see
    :data:`~.box.LEVELS`)."""
    def plan(request: BoxRequest, clock: Callable[[], float] = time.perf_counter) -> BoxMove:
        """The box's move for ``request`` within the budget, timed by ``clock``."""
        return answer(request, seconds=seconds, iterations=iterations, clock=clock)
    return plan
