"""Strength of the box: full games against a baseline, on one core.

Run: python benchmarks/ai.py --level hard --opponent oneplayout --games 400 --move-seconds 2
     python benchmarks/ai.py --level hard --quick        (16 games, the everyday check)

Every game is Patchwork on the 2014 time board with tracked quilts. Games come
in pairs: each dealt circle (seed, seed + 1, ...) is played twice, the box
taking the first turn in one and the second turn in the other. Prints

    LEVEL vs OPPONENT: W/N wins (95% CI lo-hi), mean margin M

where the interval is Wilson's score interval for the share of games won and
the margin is the box's score minus the opponent's, averaged over the games.
Nothing here asserts a time or a result.

The opponents (written for this benchmark; they are not the box):

- ``random``: a uniformly random legal action (every placement counts as an
  action, as legal_actions() lists them), leather patch on a random square.
- ``greedy``: one ply. The candidates are action A and each affordable patch
  on offer that fits, placed by the contact heuristic (the placement whose
  edges touch the most covered squares or quilt border; the first such in
  the engine's placement order). Each candidate is applied and the mover's
  resulting position valued as buttons + income x income spaces still ahead
  - 2 x empty squares + 7 if it holds the special tile + the spaces still
  ahead of its time token; the best value wins (ties: the earlier
  candidate, action A first). Leather patches go where the contact
  heuristic puts a 1x1 patch.
- ``oneplayout``: the same candidates; after each, one deterministic greedy
  playout to the end of the game, where both players take the affordable
  patch on offer that fits with the best patch value 2 x area + income x
  income spaces ahead - cost - time, if that value is above 0, and
  otherwise action A (patches and leather placed by the contact
  heuristic). The candidate with the best final margin (own score minus
  the opponent's) wins (ties: the earlier candidate).
- ``easy``, ``normal``, ``hard``: the box itself at that level, with
  ``--opponent-seconds`` per move (to measure what time buys).
"""
from __future__ import annotations

import argparse
import math
import os
import random
import sys
import time

from firmware_py.ai import LEVELS, choose
from firmware_py.ai.placement import contact_placement
from firmware_py.rules import actions as A
from firmware_py.rules import apply, legal_actions, new_game, score, winner_of


def wilson(wins: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """Wilson's score interval (lo, hi) as shares 0..1 for ``wins`` of ``n`` games."""
    if n == 0:
        return 0.0, 1.0
    p = wins / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def income_ahead(spec, position: int) -> int:
    """Income spaces strictly ahead of ``position`` (0..9 on the 2014 board)."""
    return sum(1 for s in spec.income_spaces if s > position)


def contact_leather(state) -> A.Action:
    """The leather patch owed (R9) onto the square the contact heuristic picks."""
    player = state.players[state.owed[0]]
    if player.empty == 0:
        return A.DISCARD
    spec = state.spec
    for pid, patch in enumerate(spec.patches):
        if patch.area == 1:
            mask = contact_placement(spec, pid, player.quilt)
            return A.PlaceLeather(mask.bit_length() - 1)
    free = ~player.quilt & ((1 << spec.quilt_size) - 1)
    return A.PlaceLeather((free & -free).bit_length() - 1)


def candidates(state) -> list[A.Action]:
    """Action A, then each affordable patch on offer that fits, placed by contact."""
    mover = state.players[state.to_move]
    out: list[A.Action] = [A.ADVANCE]
    for pid in state.offer:
        if state.spec.patches[pid].cost <= mover.buttons:
            mask = contact_placement(state.spec, pid, mover.quilt)
            if mask is not None:
                out.append(A.Buy(pid, mask))
    return out


def static_value(state, player: int) -> int:
    """The greedy opponent's value of ``state`` for ``player`` (see the module docstring)."""
    p, spec = state.players[player], state.spec
    special = spec.bonus_points if state.special == player else 0
    return (p.buttons + p.income * income_ahead(spec, p.position) - 2 * p.empty + special
            + spec.last_space - p.position)


def greedy(state, rng) -> A.Action:
    """The greedy baseline's action for the player to move."""
    if state.owed:
        return contact_leather(state)
    mover = state.to_move
    best, best_value = None, None
    for action in candidates(state):
        value = static_value(apply(state, action)[0], mover)
        if best_value is None or value > best_value:
            best, best_value = action, value
    return best


def playout_action(state) -> A.Action:
    """The deterministic greedy playout's action (see the module docstring)."""
    if state.owed:
        return contact_leather(state)
    mover = state.players[state.to_move]
    spec = state.spec
    ahead = income_ahead(spec, mover.position)
    best, best_value = A.ADVANCE, 0
    for action in candidates(state)[1:]:
        patch = spec.patches[action.patch]
        value = 2 * patch.area + patch.income * ahead - patch.cost - patch.time
        if value > best_value:
            best, best_value = action, value
    return best


def oneplayout(state, rng) -> A.Action:
    """The oneplayout baseline's action for the player to move."""
    if state.owed:
        return contact_leather(state)
    mover = state.to_move
    best, best_margin = None, None
    for action in candidates(state):
        after = apply(state, action)[0]
        while not after.over:
            after = apply(after, playout_action(after))[0]
        margin = score(after, mover) - score(after, 1 - mover)
        if best_margin is None or margin > best_margin:
            best, best_margin = action, margin
    return best


def random_player(state, rng) -> A.Action:
    """A uniformly random legal action."""
    return rng.choice(legal_actions(state))


def box_player(level: str, seconds: float):
    """The box at ``level`` with ``seconds`` per move, as a benchmark player."""
    def play(state, rng):
        return choose(state, level=level, seed=rng.randrange(1 << 30), seconds=seconds).action
    return play


BASELINES = {"random": random_player, "greedy": greedy, "oneplayout": oneplayout}


def play_game(deal: int, players, rng) -> tuple[tuple[int, int], int]:
    """Play one tracked Patchwork game (2014 board) dealt from ``deal``;
    ``players[i]`` moves for player i. Returns the two scores and the winner (R13, R14)."""
    state = new_game("patchwork", "2014", seed=deal, tracked=True)
    while not state.over:
        state, _ = apply(state, players[state.to_move](state, rng))
    return (score(state, 0), score(state, 1)), winner_of(state)


def run(level: str, opponent, games: int, seconds: float, seed: int, log=None) -> tuple[int, float]:
    """Play ``games`` games (pairs of seat-swapped deals); return (box wins, mean margin)."""
    box = box_player(level, seconds)
    wins, margins = 0, []
    for i in range(games):
        seat = i % 2
        players = (box, opponent) if seat == 0 else (opponent, box)
        scores, winner = play_game(seed + i // 2, players, random.Random(seed * 1000 + i))
        margin = scores[seat] - scores[1 - seat]
        wins += winner == seat
        margins.append(margin)
        if log:
            print(f"game {i + 1}/{games}: deal {seed + i // 2}, box seat {seat}, "
                  f"scores {scores}, margin {margin:+d}", file=log, flush=True)
    return wins, sum(margins) / len(margins)


def main(argv=None) -> None:
    """Parse the options, play the games, print the figure line."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--level", choices=sorted(LEVELS), default="hard")
    parser.add_argument("--opponent", choices=sorted(BASELINES) + sorted(LEVELS),
                        default="oneplayout")
    parser.add_argument("--games", type=int, default=400, help="games in all (even: seat pairs)")
    parser.add_argument("--move-seconds", type=float, default=2.0, help="box's budget per move")
    parser.add_argument("--opponent-seconds", type=float, default=0.1,
                        help="budget per move when the opponent is the box itself")
    parser.add_argument("--quick", action="store_true", help="16 games (overrides --games)")
    parser.add_argument("--seed", type=int, default=1, help="first deal")
    parser.add_argument("--verbose", action="store_true", help="one line per game on stderr")
    args = parser.parse_args(argv)
    games = 16 if args.quick else args.games
    if games < 1:
        parser.error("--games must be at least 1")
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    if args.opponent in LEVELS:
        opponent = box_player(args.opponent, args.opponent_seconds)
        name = f"{args.opponent}@{args.opponent_seconds:g}s"
    else:
        opponent, name = BASELINES[args.opponent], args.opponent
    start = time.perf_counter()
    wins, margin = run(args.level, opponent, games, args.move_seconds, args.seed,
                       sys.stderr if args.verbose else None)
    lo, hi = wilson(wins, games)
    print(f"{args.level} vs {name}: {wins}/{games} wins "
          f"(95% CI {lo:.0%}-{hi:.0%}), mean margin {margin:+.1f}")
    print(f"({args.move_seconds:g} s per box move, {time.perf_counter() - start:.0f} s "
          f"on one core)")


if __name__ == "__main__":
    main()
