"""Table fidelity benchmark: seeded games played by simulated people at a real companion.

    python benchmarks/fidelity.py [--games 5000] [--first-seed 100000] [--rounds 3]

Each game is played by :func:`firmware_py.sim.people.play_game`: people who decide
a legal move and carry it out in a random style (choose then move, move first,
browse, pauses mid-slide, lifts, knocked tokens, undo and redo, quick hands, questions
about their own move left unanswered while the game goes on),
looking only at the OLED screen model and the LEDs, at a real Service on a
stepping clock. Prints, with the machine it ran on::

    table fidelity: N/M games exact
    questions asked: Q per 100 moves (answered with OK or BACK)
    questions shown: S per 100 moves (also those that went as the token moved on)
    questions left open: L (then the game went on); about several moves: W answered
    games per second: median R over rounds

and one line per game that was not exact (its seed and what went wrong). The
seeds differ from the 1,000 of the test suite (those start at 0).
"""
from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from firmware_py.sim.people import play_game  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    """Run the games in ``--rounds`` rounds; print the figures; 0 when every game was exact."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=5000, help="games in all (default 5000)")
    parser.add_argument("--first-seed", type=int, default=100000, help="seed of the first game")
    parser.add_argument("--rounds", type=int, default=3, help="rounds the games are split into")
    args = parser.parse_args(argv)
    print(f"machine: {os.cpu_count()} cores, Python {platform.python_version()}, "
          f"{platform.system()} {platform.machine()}")
    rounds = max(1, min(args.rounds, args.games))
    per = [args.games // rounds + (1 if r < args.games % rounds else 0) for r in range(rounds)]
    exact = moves = answered = shown = left = several = 0
    rates = []
    seed = args.first_seed
    for count in per:
        started = time.perf_counter()
        for _ in range(count):
            outcome = play_game(seed)
            seed += 1
            moves += outcome.moves
            answered += outcome.questions
            shown += outcome.shown
            left += outcome.left_open
            several += outcome.several
            if outcome.exact:
                exact += 1
            else:
                print(f"not exact: seed {outcome.seed}: {outcome.problem}")
        rates.append(count / (time.perf_counter() - started))
    print(f"table fidelity: {exact}/{args.games} games exact")
    print(f"questions asked: {100 * answered / max(moves, 1):.1f} per 100 moves "
          f"(answered with OK or BACK; {moves} moves)")
    print(f"questions shown: {100 * shown / max(moves, 1):.1f} per 100 moves "
          f"(also those that went as the token moved on)")
    print(f"questions left open: {left} (then the game went on); "
          f"about several moves: {several} answered")
    print(f"games per second: median {statistics.median(rates):.1f} over {rounds} rounds")
    return 0 if exact == args.games else 1


if __name__ == "__main__":
    sys.exit(main())
