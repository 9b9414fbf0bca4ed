"""The box as a player: levels, a per-move budget and one decision per call."""
from __future__ import annotations

import random
import time
from dataclasses import dataclass

from ..rules import actions as A
from ..rules import fast
from ..rules.state import GameState
from .placement import leather_square
from .search import Context, Node, search


@dataclass(frozen=True)
class Level:
    """How hard the box plays.

    ``iterations``: most search iterations per move (None: only the time
    budget stops it); ``seconds``: the default time budget per move on the
    table's Raspberry Pi; ``temperature``: 0 plays the most searched move,
    above 0 draws a move with odds visits ** (1 / temperature), so it errs.
    """

    name: str
    iterations: int | None
    seconds: float
    temperature: float


LEVELS = {
    "easy": Level("easy", 300, 1.0, 0.5),
    "normal": Level("normal", 2000, 4.0, 0.0),
    "hard": Level("hard", None, 8.0, 0.0),
}
"""The three levels offered at setup, by name."""


@dataclass(frozen=True)
class Decision:
    """The box's move in ``state`` (the mover's).

    - ``action``: the engine action to apply to the same state (checked by
      ``apply()``): Advance, Buy (mask only when the state tracks quilts) or
      PlaceLeather (square only when tracked);
    - ``patch``: patch id bought, else None; ``offer_index``: 0..2 where it
      lies in front of the neutral token (R3), else None;
    - ``mask``: where the patch goes on the mover's quilt (bitmask), or the
      leather patch's square as a one-bit mask; None when the mover's quilt
      is not known (a hint in an untracked game) or for action A;
    - ``iterations``: search iterations run; ``win_chance``: the searched
      move's mean reward (0..1, about the chance of winning).
    """

    action: A.Action
    patch: int | None
    offer_index: int | None
    mask: int | None
    iterations: int
    win_chance: float


def choose(state: GameState, *, level: str = "hard", seed: int = 0, seconds: float | None = None,
           iterations: int | None = None, quilt: int | None = None, clock=time.perf_counter
           ) -> Decision:
    """The box's decision for the player to move in ``state``.

    ``level`` names one of :data:`LEVELS`; ``seconds`` overrides its time
    budget, ``iterations`` its iteration cap. The same state, seed and
    number of iterations always give the same decision (a fixed ``iterations``
    with a generous ``seconds`` is fully reproducible). ``quilt`` is the
    mover's quilt bitmask when ``state`` does not track quilts (the box's own
    quilt at the table); without it an untracked mover gets a counted-quilt
    decision with no placement (a hint). Raises ValueError for an unknown
    level or a finished game.
    """
    if level not in LEVELS:
        raise ValueError(f"level must be one of {sorted(LEVELS)}, got {level!r}")
    mover = state.to_move
    if mover is None:
        raise ValueError("the game is over: the box has no move")
    spec = state.spec
    quilts = None
    if not state.tracked:
        quilts = (quilt, None) if mover == 0 else (None, quilt)
    f = fast.flat(state, quilts)
    if state.owed:
        return _leather(state, f, mover)
    lv = LEVELS[level]
    budget = lv.seconds if seconds is None else seconds
    cap = iterations if iterations is not None else lv.iterations
    ctx = Context(spec, state.free)
    root = Node(f, ctx)
    if len(root.untried) == 1:
        return _decision(state, f, root.untried[0], 0, 0.5)
    rng = random.Random(seed)
    deadline = clock() + budget

    def stop(done: int) -> bool:
        """True once ``done`` iterations reach the cap, or (after at least 8) the time is up."""
        return (cap is not None and done >= cap) or (done >= 8 and clock() >= deadline)

    done = search(root, ctx, rng, stop)
    child = _pick(root.children, lv.temperature, rng)
    return _decision(state, f, child.move, done, child.wins / max(child.visits, 1))


def _pick(children, temperature: float, rng: random.Random):
    """The most visited child, or one drawn with odds visits ** (1 / temperature)."""
    if temperature <= 0:
        return max(children, key=lambda c: (c.visits, c.wins))
    weights = [c.visits ** (1 / temperature) for c in children]
    return rng.choices(children, weights)[0]


def _decision(state: GameState, f, move, done: int, chance: float) -> Decision:
    k, mask = move
    if k < 0:
        return Decision(A.ADVANCE, None, None, None, done, chance)
    pid = f[fast.CIRCLE][k]
    return Decision(A.Buy(pid, mask if state.tracked else None), pid, k, mask, done, chance)


def _leather(state: GameState, f, mover: int) -> Decision:
    """Where the leather patch the mover won goes (R9), or set aside on a full quilt (R10)."""
    o = mover * fast.P1
    quilt = f[o + fast.QUILT]
    if not f[o + fast.EMPTY]:
        return Decision(A.DISCARD, None, None, None, 0, 0.5)
    square = None if quilt is None else leather_square(state.spec, quilt)
    mask = None if square is None else 1 << square
    return Decision(A.PlaceLeather(square if state.tracked else None), None, None, mask, 0, 0.5)
