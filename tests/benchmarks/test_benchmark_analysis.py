"""The analysis benchmark's parts: its self-play games, the spread of flagged decisions,
and the replay of one decision (the figures themselves come from the script)."""
from __future__ import annotations

import importlib.util
from pathlib import Path

from firmware_py.analysis import Settings, analyse
from firmware_py.rules import replay

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "analysis.py"
_spec = importlib.util.spec_from_file_location("bench_analysis", SCRIPT)
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)


def test_selfplay_is_a_finished_valid_game():
    record = bench.selfplay(5)
    state, result = replay(record)
    assert state.over and result.winner in (0, 1) and record.tracked
    assert bench.selfplay(5) == record                       # fixed seeds: the same game


def test_flagged_decisions_are_spread_over_games():
    games = [(f"r{g}", {"decisions": [{"cost": c} for c in costs]}, 0)
             for g, costs in enumerate([[0.5, 0.4, 0.3], [0.2], [0.1, 0.16]])]
    chosen = bench.flagged(games, 4)
    assert [r for r, _ in chosen] == ["r0", "r1", "r2", "r0"]
    assert all(d["cost"] >= bench.FLAG for _, d in chosen)


def test_a_decision_is_replayed_both_ways():
    record = bench.selfplay(6)
    result = analyse(record, Settings(iterations=30, playouts=10))
    decision = next(d for d in result["decisions"] if d["played_move"] != d["best_move"])
    wins, margin = bench.replayed(record, decision, 2)
    assert isinstance(wins, bool) and isinstance(margin, bool)
