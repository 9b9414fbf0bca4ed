"""Monte Carlo tree search (UCT) over patch choices, on the engine's fast path.

A turn offers at most four choices: action A or one of the (up to) three
patches on offer, each placed by :func:`.placement.box_placement` on a
tracked quilt. Leather patches are placed by :func:`.placement.leather_square`
on the spot. Each iteration walks the tree by UCB1, adds one node and finishes
the game with one :func:`.playout.playout`.
"""
from __future__ import annotations

import math
import random as _random

from ..rules import fast
from .placement import box_placement, leather_square
from .playout import PlayoutTables, playout

EXPLORE = 0.8
"""UCB1 exploration constant for rewards in 0..1."""

WIN_SHARE = 0.7
"""Share of the reward for winning; the rest grows with the score margin."""

MARGIN_SCALE = 60.0
"""Margin (score points) that moves the margin part of the reward from 0.5 to 1."""

GREEDY = 0.7
"""Chance that a playout move is the best-valued patch rather than a random choice."""


class Context:
    """What one search reads: the spec, its playout tables, a memo of placements."""

    def __init__(self, spec, free: bool = False):
        """For ``spec`` (a GameSpec); ``free`` when any patch left may be bought (free layout)."""
        self.spec = spec
        self.free = free
        self.tables = PlayoutTables(spec)
        self.placed: dict[tuple[int, int], int | None] = {}

    def place(self, quilt: int, pid: int) -> int | None:
        """Memoised :func:`box_placement` of patch ``pid`` on ``quilt``."""
        key = (quilt, pid)
        try:
            return self.placed[key]
        except KeyError:
            mask = self.placed[key] = box_placement(self.spec, pid, quilt)
            return mask


def settle(f: fast.Flat, spec) -> fast.Flat:
    """``f`` with every owed leather patch placed (tracked: :func:`leather_square`) or,
    on a full quilt, set aside (R9, R10)."""
    while f[fast.OWED]:
        o = f[fast.OWED][0] * fast.P1
        quilt = f[o + fast.QUILT]
        if not f[o + fast.EMPTY]:
            f = fast.discard_leather(f)
        elif quilt is None:
            f = fast.place_leather(f, None, spec)
        else:
            f = fast.place_leather(f, leather_square(spec, quilt), spec)
    return f


def moves(f: fast.Flat, ctx: Context) -> list[tuple[int, int | None]]:
    """The choices in ``f`` (no leather owed): ``(-1, None)`` for action A, then
    ``(offer index, mask)`` per affordable patch that fits (mask None on a
    counted quilt). Empty at the end of the game."""
    spec = ctx.spec
    mover = fast.to_move(f, spec.last_space)
    if mover is None:
        return []
    o = mover * fast.P1
    buttons, quilt, empty = f[o + fast.BUTTONS], f[o + fast.QUILT], f[o + fast.EMPTY]
    circle = f[fast.CIRCLE]
    patch = ctx.tables.patch
    out: list[tuple[int, int | None]] = [(-1, None)]
    for k in range(len(circle) if ctx.free else min(3, len(circle))):
        cost, _, _, area = patch[circle[k]]
        if cost <= buttons and area <= empty:
            if quilt is None:
                out.append((k, None))
            else:
                mask = ctx.place(quilt, circle[k])
                if mask is not None:
                    out.append((k, mask))
    return out


def play(f: fast.Flat, move: tuple[int, int | None], ctx: Context) -> fast.Flat:
    """``f`` after ``move`` (see :func:`moves`), leather patches settled."""
    k, mask = move
    f = fast.advance(f, ctx.spec) if k < 0 else fast.buy(f, k, mask, ctx.spec)
    return settle(f, ctx.spec) if f[fast.OWED] else f


class Node:
    """One tree node: flat state, who moves, untried moves, children and statistics.

    ``wins`` sums the rewards of the player who made the move leading here.
    """

    __slots__ = ("f", "mover", "untried", "children", "visits", "wins", "move")

    def __init__(self, f, ctx: Context, move=None):
        """Node for flat state ``f`` reached by ``move``."""
        self.f = f
        self.move = move
        self.mover = fast.to_move(f, ctx.spec.last_space)
        self.untried = moves(f, ctx)
        self.children: list[Node] = []
        self.visits = 0
        self.wins = 0.0


def reward0(margin: float) -> float:
    """Player 0's reward (0..1) for a final margin (score 0 - score 1, sign = winner)."""
    part = 0.5 + margin / (2 * MARGIN_SCALE)
    part = 0.0 if part < 0 else 1.0 if part > 1 else part
    return WIN_SHARE * (margin > 0) + (1 - WIN_SHARE) * part


def search(root: Node, ctx: Context, rng: _random.Random, stop, greedy: float | None = None) -> int:
    """Run iterations on ``root`` until ``stop(iterations done)`` is true; return the count.

    ``stop`` is asked before every iteration (one playout: well under a millisecond
    here), so a search the table no longer needs ends as soon as ``stop`` says so
    (the game service makes its clock jump past the budget; benchmarks/search_stop.py).
    ``greedy`` overrides :data:`GREEDY` for the playouts.
    """
    random = rng.random
    greedy = GREEDY if greedy is None else greedy
    tables = ctx.tables
    done = 0
    log = math.log
    while not stop(done):
        node, path = root, [root]
        while not node.untried and node.children:
            scale = EXPLORE * math.sqrt(log(node.visits))
            best, best_value = None, -1.0
            for child in node.children:
                value = child.wins / child.visits + scale / math.sqrt(child.visits)
                if value > best_value:
                    best, best_value = child, value
            node = best
            path.append(node)
        if node.untried:
            move = node.untried.pop(int(random() * len(node.untried)))
            child = Node(play(node.f, move, ctx), ctx, move)
            node.children.append(child)
            path.append(child)
            node = child
        r0 = reward0(playout(node.f, tables, random, greedy))
        for i in range(1, len(path)):
            n = path[i]
            n.visits += 1
            n.wins += r0 if path[i - 1].mover == 0 else 1.0 - r0
        root.visits += 1
        done += 1
    return done
