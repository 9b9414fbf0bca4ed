"""How right the post-game analysis is, and what it costs: calibration, flagged
decisions replayed, time and memory per game, on one core.

Run: nice -n 10 python benchmarks/analysis.py            (the full run, for the README)
     python benchmarks/analysis.py --quick                (a few minutes, the everyday check)
     python benchmarks/analysis.py --fit                  (fit calibration.SCALE/BIAS again)

The games are Patchwork on the 2014 time board with tracked quilts, the box
against itself: both sides search SELFPLAY_ITERATIONS iterations per move and
draw their move with temperature SELFPLAY_TEMPERATURE (so they err now and
then, as people do). Measured games use seeds 0.. (dealt circle and players);
the calibration was fitted on seeds from FIT_SEED on, so it never saw them.
Every analysis uses the default :class:`firmware_py.analysis.Settings`.

Prints, with fixed labels:

- ``calibration: N positions from G games`` and one line per bucket of the
  estimated chance that the first player wins (``bucket 0.30-0.40: n=..,
  estimated 0.35, actual 0.33``); then ``mean calibration error: E``
  (count-weighted mean of |estimated - actual|; positions whose game was
  already decided are left out);
- ``flagged decisions: D (cost >= 15%) from G games`` and ``suggested move
  better: K/D = R% (95% CI lo-hi%)``: from after the played move and after the
  suggested one, CONTINUATIONS games each, played on by equal players (the box
  at CONTINUATION_ITERATIONS iterations per move on both sides); the suggested
  move is better when its mover's share of wins is higher (equal shares: the
  higher mean margin);
- ``cost: 40-move game analysed in S s CPU (median of 3)`` and ``memory: worker
  process peak M MB``.
Nothing here asserts a result.
"""
from __future__ import annotations

import argparse
import json
import random
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from ai import wilson  # noqa: E402  (benchmarks/ai.py: Wilson's score interval)

from firmware_py.ai import choose  # noqa: E402
from firmware_py.ai.search import Context, Node, play, search, settle  # noqa: E402
from firmware_py.analysis import Settings, analyse, calibration  # noqa: E402
from firmware_py.rules import (GameRecord, action_to_move, apply, fast, new_game,  # noqa: E402
                               start_state, steps)

SELFPLAY_ITERATIONS = 100
SELFPLAY_TEMPERATURE = 0.5
FIT_SEED = 100_000
FLAG = 0.15
CONTINUATIONS = 50
CONTINUATION_ITERATIONS = 16


def selfplay(seed: int) -> GameRecord:
    """One game of the box against itself on deal ``seed`` (tracked quilts)."""
    state = new_game("patchwork", "2014", seed=seed, tracked=True)
    circle = state.circle
    moves, k = [], 0
    while not state.over:
        d = choose(state, level="easy", seed=seed * 1000 + k, seconds=1e9,
                   iterations=SELFPLAY_ITERATIONS) if not state.owed else \
            choose(state, seed=0, seconds=1e9, iterations=1)
        moves.append(action_to_move(state.spec, d.action))
        state, _ = apply(state, d.action)
        k += 1
    return GameRecord("patchwork", "2014", ("Green", "Yellow"), circle, tuple(moves))


def winner(record: GameRecord) -> int:
    """Seat (0/1) that won the record's game."""
    from firmware_py.rules import replay
    return replay(record)[1].winner


SETTINGS = Settings()


def analysed(seeds, log) -> list[tuple[GameRecord, dict, int]]:
    """(record, analysis, winner) of the self-play game of each seed."""
    out = []
    for i, seed in enumerate(seeds):
        record = selfplay(seed)
        out.append((record, analyse(record, SETTINGS), winner(record)))
        log(f"  game {i + 1}/{len(seeds)} analysed")
    return out


def positions(games) -> list[tuple[dict, int]]:
    """(point, winner) of every position not yet decided (playout sd above 0)."""
    return [(p, w) for _, a, w in games for p in a["points"] if p["sd"] > 0]


def print_calibration(games) -> float:
    """Print the calibration table; return the mean calibration error."""
    pts = [(p["chance"], 1 - w) for p, w in positions(games)]
    rows = calibration.table(pts)
    print(f"calibration: {len(pts)} positions from {len(games)} games")
    for r in rows:
        print(f"bucket {r['lo']:.2f}-{r['hi']:.2f}: n={r['n']}, estimated {r['estimated']:.2f}, "
              f"actual {r['actual']:.2f}")
    err = calibration.mean_error(rows)
    print(f"mean calibration error: {err:.3f}")
    return err


def box_margin(f, ctx, seed: int) -> float:
    """Finish flat ``f`` with the box at CONTINUATION_ITERATIONS per move on both sides;
    the first player's final margin (+-0.5 by the tie-break)."""
    rng = random.Random(seed)
    spec = ctx.spec
    while True:
        f = settle(f, spec)
        if fast.to_move(f, spec.last_space) is None:
            break
        root = Node(f, ctx)
        if len(root.untried) == 1:
            move = root.untried[0]
        else:
            search(root, ctx, rng, lambda done: done >= CONTINUATION_ITERATIONS)
            move = max(root.children, key=lambda c: (c.visits, c.wins)).move
        f = play(f, move, ctx)
    margin = fast.score(f, 0, spec) - fast.score(f, 1, spec)
    return margin if margin else (0.5 if f[fast.FINISHER] == 0 else -0.5)


def replayed(record: GameRecord, decision: dict, n: int) -> tuple[bool, bool]:
    """Whether ``decision``'s suggested move did better than the played one over ``n``
    continuations from each: (by the share of wins, ties by the mean margin; by the
    mean margin alone)."""
    state = start_state(record)
    for step in steps(record):
        if step.index == decision["move"]:
            break
        state = step.state
    ctx = Context(state.spec, record.free)
    f = settle(fast.flat(state), state.spec)
    sign = 1 if decision["player"] == 0 else -1
    results = []
    for move in (tuple(decision["played_move"]), tuple(decision["best_move"])):
        after = play(f, move, ctx)
        margins = [sign * box_margin(after, ctx, 7 * k + 1) for k in range(n)]
        results.append((sum(m > 0 for m in margins) / n, sum(margins) / n))
    return results[1] > results[0], results[1][1] > results[0][1]


def flagged(games, limit: int) -> list[tuple[GameRecord, dict]]:
    """Decisions flagged (cost >= FLAG), spread over games: round-robin, at most ``limit``."""
    per_game = [[(r, d) for d in a["decisions"] if d["cost"] >= FLAG] for r, a, _ in games]
    out = []
    while len(out) < limit and any(per_game):
        for queue in per_game:
            if queue and len(out) < limit:
                out.append(queue.pop(0))
    return out


def print_flagged(games, limit: int, n: int, log) -> None:
    """Replay the flagged decisions; print how often the suggestion was really better."""
    chosen = flagged(games, limit)
    better = by_margin = 0
    for i, (record, d) in enumerate(chosen):
        wins, margin = replayed(record, d, n)
        better += wins
        by_margin += margin
        log(f"  flagged {i + 1}/{len(chosen)}: {better} better so far ({by_margin} by margin)")
    lo, hi = wilson(better, len(chosen))
    origin = len({id(r) for r, _ in chosen})
    print(f"flagged decisions: {len(chosen)} (cost >= {FLAG:.0%}) from {origin} games, "
          f"{n} continuations each way")
    rate = better / len(chosen) if chosen else 0.0
    print(f"suggested move better: {better}/{len(chosen)} = {rate:.0%} "
          f"(95% CI {lo:.0%}-{hi:.0%})")
    lo, hi = wilson(by_margin, len(chosen))
    rate = by_margin / len(chosen) if chosen else 0.0
    print(f"suggested move better by mean margin: {by_margin}/{len(chosen)} = {rate:.0%} "
          f"(95% CI {lo:.0%}-{hi:.0%})")


def print_cost(games) -> None:
    """CPU seconds of a 40-move game's analysis and the worker's peak memory."""
    record = next(r for r, _, _ in games if len(r.moves) >= 40)
    record = GameRecord(record.game, record.time_board, record.players, record.circle,
                        record.moves[:40])
    times = []
    for _ in range(3):
        start = time.process_time()
        analyse(record, SETTINGS)
        times.append(time.process_time() - start)
    print(f"cost: 40-move game analysed in {statistics.median(times):.1f} s CPU (median of 3)")
    code = ("import json,sys,resource;from firmware_py.rules import parse_record;"
            "from firmware_py.analysis import analyse, Settings;"
            f"analyse(parse_record(sys.stdin.read()), Settings({SETTINGS.iterations}, "
            f"{SETTINGS.playouts}));"
            "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)")
    out = subprocess.run([sys.executable, "-c", code], input=json.dumps(record.to_json()),
                         capture_output=True, text=True, check=True).stdout
    print(f"memory: worker process peak {int(out) / 1024:.0f} MB")


def main(argv=None) -> None:
    """The command line (see the module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", type=int, default=200, help="measured self-play games")
    parser.add_argument("--flagged", type=int, default=110, help="flagged decisions replayed")
    parser.add_argument("--continuations", type=int, default=CONTINUATIONS)
    parser.add_argument("--quick", action="store_true",
                        help="20 games, 12 flagged decisions, 20 continuations")
    parser.add_argument("--fit", type=int, metavar="GAMES", default=0,
                        help="fit SCALE/BIAS on this many games from FIT_SEED and print them")
    parser.add_argument("--iterations", type=int, default=Settings().iterations,
                        help="the analysis' search iterations per decision")
    parser.add_argument("--playouts", type=int, default=Settings().playouts,
                        help="the analysis' playouts per priced position")
    parser.add_argument("--verbose", action="store_true", help="progress on standard error")
    args = parser.parse_args(argv)
    global SETTINGS
    SETTINGS = Settings(iterations=args.iterations, playouts=args.playouts)
    log = (lambda text: print(text, file=sys.stderr, flush=True)) if args.verbose else (lambda _: None)
    if args.fit:
        games = analysed(range(FIT_SEED, FIT_SEED + args.fit), log)
        samples = [(calibration.feature(p["mean"], p["sd"]), 1 - w) for p, w in positions(games)]
        scale, bias = calibration.fit(samples)
        print(f"fitted on {len(samples)} positions from {len(games)} games: "
              f"SCALE = {scale:.3f}, BIAS = {bias:.3f}")
        return
    if args.quick:
        args.games, args.flagged, args.continuations = 20, 12, 20
    games = analysed(range(args.games), log)
    print_calibration(games)
    print_flagged(games, args.flagged, args.continuations, log)
    print_cost(games)
    print(f"benchmark CPU: {resource.getrusage(resource.RUSAGE_SELF).ru_utime:.0f} s")


if __name__ == "__main__":
    main()
