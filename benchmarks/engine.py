"""Rules-engine speed: random complete games per second and the cost of one turn.

Run: python benchmarks/engine.py [--seconds 1] [--rounds 5]
Each games/s figure is measured in several rounds and printed as the best and
the median round: other work on a shared machine only ever slows a round
down, so the best round is the engine's own speed and the median shows the
noise. Prints figures only; nothing here asserts a time.
"""
from __future__ import annotations

import argparse
import os
import random
import statistics
import time

from firmware_py.rules import apply, legal_actions, new_game


def random_game(seed: int, tracked: bool, game: str, pick) -> int:
    """Deal a new game from ``seed`` and play it to the end with uniformly random
    legal actions (chosen with ``pick``, a float source in [0, 1)); return the
    number of actions. legal_actions() is empty exactly when the game is over.
    """
    state = new_game(game, seed=seed, tracked=tracked)
    n = 0
    actions = legal_actions(state)
    while actions:
        state, _ = apply(state, actions[int(pick() * len(actions))])
        actions = legal_actions(state)
        n += 1
    return n


def games_per_second(tracked: bool, seconds: float, game: str) -> tuple[float, float]:
    """(games per second, actions per game) over about ``seconds`` of play."""
    games = actions = 0
    pick = random.Random(1).random
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        actions += random_game(games, tracked, game, pick)
        games += 1
    return games / (time.perf_counter() - start), actions / games


def pair_cost(tracked: bool, samples: int) -> float:
    """Median seconds of one legal_actions() + apply() pair over random game positions."""
    rng = random.Random(1)
    costs = []
    state = new_game(seed=1, tracked=tracked)
    while len(costs) < samples:
        if state.over:
            state = new_game(seed=len(costs), tracked=tracked)
        t0 = time.perf_counter_ns()
        actions = legal_actions(state)
        nxt, _ = apply(state, actions[rng.randrange(len(actions))])
        costs.append(time.perf_counter_ns() - t0)
        state = nxt
    return statistics.median(costs) / 1e9


def main() -> None:
    """Print the figures."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=1.0, help="time per round")
    parser.add_argument("--rounds", type=int, default=5, help="rounds per games/s figure")
    parser.add_argument("--pairs", type=int, default=20000,
                        help="legal_actions()+apply() pairs timed for each median")
    args = parser.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    print(f"one core, {args.rounds} rounds of {args.seconds:g} s per games/s figure "
          f"(best round / median round)")
    for game in ("patchwork", "patchwork-express"):
        for tracked in (False, True):
            rounds = [games_per_second(tracked, args.seconds, game) for _ in range(args.rounds)]
            rates = sorted(rate for rate, _ in rounds)
            label = "tracked" if tracked else "untracked"
            print(f"{game:18s} {label:9s} {rates[-1]:8.0f} / {statistics.median(rates):6.0f} "
                  f"games/s  ({rounds[0][1]:.1f} actions/game)")
    for tracked in (False, True):
        label = "tracked" if tracked else "untracked"
        print(f"patchwork {label:9s} legal_actions()+apply(): median "
              f"{pair_cost(tracked, args.pairs) * 1e6:.1f} us")


if __name__ == "__main__":
    main()
