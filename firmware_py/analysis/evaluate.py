"""One decision, evaluated: the box's searcher picks its move, playouts price both.

Everything is counted in iterations and playouts, never in seconds, so the
same record and :class:`Settings` give the same figures on any machine and
under any load. Random numbers come from a seed per decision; the played and
the suggested move are priced with the same seed (common random numbers), so
their difference is less noisy than either figure, and the search that picks
the suggestion draws from another stream (a move it favoured by luck is not
priced with that same luck).
"""
from __future__ import annotations

import math
import random
from dataclasses import dataclass

from ..ai.playout import playout
from ..ai.search import GREEDY, Context, Node, play, search, settle
from ..rules import fast
from . import calibration


@dataclass(frozen=True)
class Settings:
    """How hard the analysis looks (fixed work, so results do not depend on load).

    ``iterations``: the box's search iterations per decision (picks the
    suggested move; 1..10**6); ``playouts``: playouts per priced position
    (2..10**6); ``seed``: base of the per-decision seeds.
    """

    iterations: int = 500
    playouts: int = 300
    seed: int = 0

    def __post_init__(self):
        for name, lo in (("iterations", 1), ("playouts", 2)):
            value = getattr(self, name)
            if type(value) is not int or not lo <= value <= 10 ** 6:
                raise ValueError(f"analysis {name} must be a whole number {lo}..1000000, got {value!r}")


@dataclass(frozen=True)
class Price:
    """Playout statistics of one position: player 0's final ``margins`` (points, one per
    playout, +-0.5 naming the tie-break winner), their ``mean`` and ``sd``, and the
    calibrated ``chance`` (0..1) that player 0 wins with its 95% half-width ``pm``."""

    margins: tuple[float, ...]
    mean: float
    sd: float
    chance: float
    pm: float


def price(f: fast.Flat, ctx: Context, seed: int, n: int) -> Price:
    """Price flat state ``f`` (no leather owed) with ``n`` playouts seeded by ``seed``."""
    rng = random.Random(seed * 2)
    margins = tuple(float(playout(f, ctx.tables, rng.random, GREEDY)) for _ in range(n))
    mean = sum(margins) / n
    sd = math.sqrt(sum((m - mean) ** 2 for m in margins) / (n - 1))
    half = 1.96 * sd / math.sqrt(n) * calibration.slope(mean, sd)
    return Price(margins, mean, sd, calibration.chance(mean, sd), min(half, 0.5))


@dataclass(frozen=True)
class Verdict:
    """One decision priced: ``played`` and ``best`` are moves as :func:`~..ai.search.moves`
    gives them (``(-1, None)`` = action A, ``(k, mask)`` = the patch k-th in front of the
    neutral token); ``after`` the price of the played move's position; ``cost`` the
    mover's win chance lost (0..1, below 0 when the played move priced better), ``pm``
    its 95% half-width; ``points`` the mover's expected margin lost; ``forced`` True when
    there was only one legal choice (then ``best`` = ``played``, cost 0)."""

    played: tuple
    best: tuple
    after: Price
    cost: float
    pm: float
    points: float
    forced: bool


def judge(f: fast.Flat, played: tuple, ctx: Context, settings: Settings, seed: int) -> Verdict:
    """The verdict on ``played`` in flat state ``f`` (the mover to act, no leather owed)."""
    f = settle(f, ctx.spec)
    mover = fast.to_move(f, ctx.spec.last_space)
    after = price(play(f, played, ctx), ctx, seed, settings.playouts)
    root = Node(f, ctx)
    if len(root.untried) <= 1:
        return Verdict(played, played, after, 0.0, 0.0, 0.0, True)
    search(root, ctx, random.Random(seed * 2 + 1), lambda done: done >= settings.iterations)
    best = max(root.children, key=lambda c: (c.visits, c.wins)).move
    if _same(best, played):
        return Verdict(played, best, after, 0.0, 0.0, 0.0, False)
    alt = price(play(f, best, ctx), ctx, seed, settings.playouts)
    sign = 1 if mover == 0 else -1
    diffs = [b - a for a, b in zip(after.margins, alt.margins)]
    n = len(diffs)
    mean = sum(diffs) / n
    se = math.sqrt(sum((d - mean) ** 2 for d in diffs) / (n - 1) / n)
    # the steeper of the two slopes: a decided position (sd 0) has none of its own
    steep = max(calibration.slope(after.mean, after.sd), calibration.slope(alt.mean, alt.sd))
    cost = sign * (alt.chance - after.chance)
    return Verdict(played, best, after, cost, min(1.96 * se * steep, 1.0), sign * mean, False)


def _same(a: tuple, b: tuple) -> bool:
    """The same choice: the same patch (or both action A), and the same placement when
    the quilt is tracked."""
    return a[0] == b[0] and (a[1] is None or b[1] is None or a[1] == b[1])
