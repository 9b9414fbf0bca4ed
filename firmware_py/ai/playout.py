"""Fast approximate playouts from a flat search state to the end of the game.

Quilts are counted here (a patch fits when its area fits the empty squares),
leather patches are placed on the spot, and the special tile (R11) goes to the
first player whose quilt reaches :data:`SPECIAL_AT` covered squares (a tracked
quilt that really holds one keeps it). The policy mixes a patch-value greedy
choice with random ones, so the playout is cheap but not silly.
"""
from __future__ import annotations

from ..rules import fast

SPECIAL_AT = 58
"""Covered squares at which a playout gives the special tile (a 7x7 within 81 squares)."""


class PlayoutTables:
    """Per-spec numbers a playout reads: per space the income spaces at or before it,
    per patch ``(cost, time, income, area)``."""

    def __init__(self, spec):
        """Build the tables of ``spec`` (a :class:`~firmware_py.rules.GameSpec`)."""
        from ..rules.tables import spec_tables
        last = spec.last_space
        self.last = last
        self.upto = [sum(1 for s in spec.income_spaces if s <= p) for p in range(last + 1)]
        self.total = len(spec.income_spaces)
        self.patch = spec_tables(spec).patch
        self.penalty = spec.empty_penalty
        self.bonus = spec.bonus_points
        self.special_at = min(SPECIAL_AT, spec.quilt_size) if spec.bonus_square else 10 ** 6
        self.blue_at = spec.blue_enter_when_left
        self.size = spec.quilt_size


# The one allowed exception to the code's complexity limit (no function ranked D or
# worse by cyclomatic complexity): playout() is the hot loop of the search, run
# thousands of times per move, so it stays one function with its turn inlined and
# its tables in locals. Splitting it costs measured time: moving only the patch
# choice into a helper made 20,000 playouts from the opening 5-7 % slower (CPython
# 3.11, same results). Leave it whole; keep its tests (same scores) when editing.
def playout(f: fast.Flat, t: PlayoutTables, random, greedy: float = 0.7) -> int:
    """Play ``f`` to the end; return score of player 0 minus player 1, plus 0.5 toward
    the tie-break winner (R14), so the sign always names the winner.

    ``random`` is a ``random.Random().random`` float source; ``greedy`` the
    chance (0..1) of taking the best-valued patch instead of a random choice.
    """
    pos = [f[0], f[5]]
    btn = [f[1], f[6]]
    inc = [f[2], f[7]]
    emp = [f[4], f[9]]
    top, circle, blue, leather = f[fast.TOP], list(f[fast.CIRCLE]), f[fast.BLUE], list(f[fast.LEATHER])
    special, finisher = f[fast.SPECIAL], f[fast.FINISHER]
    size_at, size = t.special_at, t.size
    for p in f[fast.OWED]:
        if emp[p]:
            emp[p] -= 1
    last, upto, total, patch = t.last, t.upto, t.total, t.patch
    while True:
        a, b = pos
        if a < b:
            m = 0
        elif b < a:
            m = 1
        elif a == last:
            break
        else:
            m = top
        start = pos[m]
        ahead = total - upto[start]
        buttons, empty = btn[m], emp[m]
        choice, best = -1, 0
        n = 1
        pick = random()
        for k in range(3 if len(circle) >= 3 else len(circle)):
            cost, time, income, area = patch[circle[k]]
            if cost <= buttons and area <= empty:
                n += 1
                value = 2 * area + income * ahead - cost - time
                if value > best:
                    choice, best = k, value
        if pick >= greedy and n > 1:
            r = int((pick - greedy) / (1 - greedy) * n) - 1
            choice = -1
            for k in range(3 if len(circle) >= 3 else len(circle)):
                cost, time, income, area = patch[circle[k]]
                if cost <= buttons and area <= empty:
                    if r == 0:
                        choice = k
                        break
                    r -= 1
        if choice < 0:
            end = pos[1 - m] + 1
            if end > last:
                end = last
            btn[m] = buttons + end - start
        else:
            cost, time, income, area = patch[circle[choice]]
            btn[m] = buttons - cost
            inc[m] += income
            emp[m] = empty - area
            circle = circle[choice + 1:] + circle[:choice]
            if blue and len(circle) <= t.blue_at:
                circle += blue
                blue = ()
            end = start + time
            if end > last:
                end = last
        crossed = upto[end] - upto[start]
        if crossed:
            btn[m] += crossed * inc[m]
        while leather and leather[0] <= end:
            leather.pop(0)
            if emp[m]:
                emp[m] -= 1
        if special is None and size - emp[m] >= size_at:
            special = m
        pos[m] = end
        if end == pos[1 - m]:
            top = m
        if finisher is None and end == last:
            finisher = m
    s0 = btn[0] - t.penalty * emp[0] + (t.bonus if special == 0 else 0)
    s1 = btn[1] - t.penalty * emp[1] + (t.bonus if special == 1 else 0)
    if s0 != s1:
        return s0 - s1
    return 0.5 if finisher == 0 else -0.5
