"""From playout statistics to a calibrated win chance, and the fit that sets it.

A position is summed up by ``z = mean / (sd + 1)``: the mean and the standard
deviation of player 0's final margin (score 0 - score 1, points) over the
playouts from it. The win chance of player 0 is ``logistic(SCALE * z + BIAS)``.
At the end of a game the playouts all give the final margin (sd 0), so ``z``
is the margin itself and the chance is (almost) 0 or 1.

:data:`SCALE` and :data:`BIAS` were fitted with :func:`fit` on games of the
box against itself other than those ``benchmarks/analysis.py`` measures
(``benchmarks/analysis.py --fit`` prints them again).
"""
from __future__ import annotations

import math

SCALE = 1.124
"""Logistic slope per unit of ``z`` (fitted, see the module docstring)."""
BIAS = -0.002
"""Logistic offset (fitted): above 0 favours player 0 beyond what the playouts say."""


def logistic(x: float) -> float:
    """1 / (1 + e^-x), safe for any float (0..1)."""
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)
    return e / (1.0 + e)


def feature(mean: float, sd: float) -> float:
    """``z`` of a position: player 0's mean margin over (playout standard deviation + 1)."""
    return mean / (sd + 1.0)


def chance(mean: float, sd: float, scale: float = SCALE, bias: float = BIAS) -> float:
    """Calibrated chance (0..1) that player 0 wins, from the playouts' margin statistics
    (points); ``scale``/``bias`` default to the fitted :data:`SCALE`/:data:`BIAS`. When
    every playout gave the same margin (``sd`` 0: the game is decided) the chance is
    1 or 0 by its sign."""
    if sd == 0:
        return 1.0 if mean > 0 else 0.0
    return logistic(scale * feature(mean, sd) + bias)


def slope(mean: float, sd: float, scale: float = SCALE, bias: float = BIAS) -> float:
    """d chance / d mean margin (per point) at ``mean``, ``sd``: turns a margin's
    uncertainty into a win chance's."""
    if sd == 0:
        return 0.0
    p = chance(mean, sd, scale, bias)
    return p * (1.0 - p) * scale / (sd + 1.0)


def fit(samples: list[tuple[float, int]], rounds: int = 50) -> tuple[float, float]:
    """Logistic regression by Newton's method: ``samples`` are ``(z, won)`` pairs
    (won 1 when player 0 won, else 0); returns ``(scale, bias)``. Raises
    ValueError with fewer than two samples or when both outcomes are not present."""
    if len(samples) < 2 or len({w for _, w in samples}) < 2:
        raise ValueError("fitting needs samples of both outcomes")
    a, b = 1.0, 0.0
    for _ in range(rounds):
        ga = gb = haa = hab = hbb = 0.0
        for z, won in samples:
            p = logistic(a * z + b)
            r, w = won - p, p * (1 - p)
            ga += r * z
            gb += r
            haa += w * z * z
            hab += w * z
            hbb += w
        det = haa * hbb - hab * hab
        if det <= 1e-12:
            break
        da, db = (hbb * ga - hab * gb) / det, (haa * gb - hab * ga) / det
        a, b = a + da, b + db
        if abs(da) + abs(db) < 1e-9:
            break
    return a, b


def table(points: list[tuple[float, int]], buckets: int = 10) -> list[dict]:
    """Calibration table: ``points`` are ``(estimated chance 0..1, won 0/1)``; per bucket
    of width 1/``buckets``: ``lo``, ``hi``, ``n``, ``estimated`` (mean estimate),
    ``actual`` (share won); empty buckets are left out."""
    rows = []
    for k in range(buckets):
        lo, hi = k / buckets, (k + 1) / buckets
        inside = [(p, w) for p, w in points if lo <= p < hi or (k == buckets - 1 and p == 1.0)]
        if inside:
            rows.append({"lo": lo, "hi": hi, "n": len(inside),
                         "estimated": sum(p for p, _ in inside) / len(inside),
                         "actual": sum(w for _, w in inside) / len(inside)})
    return rows


def mean_error(rows: list[dict]) -> float:
    """Mean calibration error of a :func:`table`: |estimated - actual| per bucket, weighted
    by the bucket's count (0..1)."""
    total = sum(r["n"] for r in rows)
    return sum(r["n"] * abs(r["estimated"] - r["actual"]) for r in rows) / total if total else 0.0
