"""The strength benchmark: its figure line, its interval and its two baselines."""
from __future__ import annotations

import importlib.util
import random
import re
import subprocess
import sys
from pathlib import Path

from firmware_py.rules import actions as A
from firmware_py.rules import apply, legal_actions, new_game

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "ai.py"
_spec = importlib.util.spec_from_file_location("bench_ai", SCRIPT)
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)


def test_benchmark_prints_the_figure_line():
    out = subprocess.run([sys.executable, str(SCRIPT), "--level", "easy", "--opponent", "greedy",
                          "--games", "2", "--move-seconds", "0.01"], capture_output=True,
                         text=True, check=True, timeout=300).stdout
    match = re.search(r"^easy vs greedy: (\d)/2 wins \(95% CI (\d+)%-(\d+)%\), "
                      r"mean margin [+-]\d+\.\d$", out, re.M)
    assert match and int(match[2]) < int(match[3])


def test_wilson_interval():
    lo, hi = bench.wilson(340, 400)
    assert 0.811 < lo < 0.813 and 0.881 < hi < 0.883
    assert bench.wilson(16, 16)[1] == 1.0 and bench.wilson(0, 16)[0] == 0.0


def test_contact_placement_hugs_the_corner_of_an_empty_quilt():
    state = new_game(seed=1, tracked=True)
    buy = [a for a in bench.candidates(state) if isinstance(a, A.Buy)][0]
    patch = state.spec.patches[buy.patch]
    assert buy.mask & 1 or buy.mask >> 80 & 1 or buy.mask >> 8 & 1 or buy.mask >> 72 & 1
    assert buy.mask.bit_count() == patch.area


def test_greedy_takes_the_best_static_value():
    state = new_game(seed=2, tracked=True)
    chosen = bench.greedy(state, random.Random(0))
    mover = state.to_move
    values = [bench.static_value(apply(state, a)[0], mover) for a in bench.candidates(state)]
    assert bench.static_value(apply(state, chosen)[0], mover) == max(values)


def test_oneplayout_is_deterministic_and_legal_to_the_end():
    state = new_game(seed=3, tracked=True)
    while not state.over:
        action = bench.oneplayout(state, None)
        assert action == bench.oneplayout(state, None)
        state, _ = apply(state, action)


def test_the_playout_advances_when_no_patch_is_worth_it():
    state = new_game(seed=4, tracked=True)
    poor = state.players[0]._replace(buttons=0)
    state = state._replace(players=(poor, state.players[1]))
    assert bench.playout_action(state) == A.ADVANCE
    assert A.ADVANCE in legal_actions(state)


def test_search_stop_benchmark_prints_its_figure_line():
    script = SCRIPT.with_name("search_stop.py")
    out = subprocess.run([sys.executable, str(script), "--searches", "2", "--after", "0.05"],
                         capture_output=True, text=True, check=True, timeout=300).stdout
    assert re.search(r"^search stop after a cancel: median \d+\.\d ms, max \d+\.\d ms over 2 "
                     r"searches$", out, re.M)
