"""How soon a search of the box stops once it is told its answer is not needed.

Run: nice -n 10 python benchmarks/search_stop.py [--searches 20] [--after 0.3]

Each search is the box's own ("hard", a 600 s budget, so only the stop ends it)
in a Patchwork position reached by 0..30 random legal moves from a fresh deal
(tracked quilts). A side thread lets it run ``--after`` seconds, then tells it
to stop the way the game service does (its clock jumps past any budget), and
measures until the search returns. Prints

    search stop after a cancel: median M ms, max X ms over N searches

Nothing here asserts a time (tests/companion/test_box_table.py checks that an undo tells
the search to stop and that it does).
"""
from __future__ import annotations

import argparse
import math
import random
import statistics
import threading
import time

from firmware_py.ai import choose
from firmware_py.rules import apply, legal_actions, new_game


def position(seed: int):
    """A position with the box to move: ``seed``'s deal after 0..30 random legal moves."""
    rng = random.Random(seed)
    state = new_game(seed=seed, tracked=True)
    for _ in range(rng.randrange(31)):
        legal = legal_actions(state)
        if not legal or state.to_move is None:
            break
        state, _ = apply(state, rng.choice(legal))
    while state.owed:
        state, _ = apply(state, legal_actions(state)[0])
    return state if state.to_move is not None else new_game(seed=seed, tracked=True)


def one(seed: int, after: float) -> float:
    """Seconds from the stop to the search's return, for one search."""
    over = threading.Event()

    def clock() -> float:
        return math.inf if over.is_set() else time.perf_counter()

    state, returned = position(seed), {}
    worker = threading.Thread(target=lambda: returned.setdefault(
        "at", (choose(state, level="hard", seconds=600, seed=seed, clock=clock),
               time.perf_counter())))
    worker.start()
    time.sleep(after)
    told = time.perf_counter()
    over.set()
    worker.join(120)
    return returned["at"][1] - told


def main(argv=None) -> None:
    """Parse the options, run the searches, print the figure line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--searches", type=int, default=20)
    parser.add_argument("--after", type=float, default=0.3, help="seconds before the stop")
    args = parser.parse_args(argv)
    waits = [one(seed, args.after) * 1000 for seed in range(args.searches)]
    print(f"search stop after a cancel: median {statistics.median(waits):.1f} ms, "
          f"max {max(waits):.1f} ms over {len(waits)} searches")


if __name__ == "__main__":
    main()
