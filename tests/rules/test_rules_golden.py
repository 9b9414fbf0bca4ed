"""All 100 golden self-play games replay to their recorded result, in both styles."""
from __future__ import annotations

import pytest

from firmware_py.rules import parse_record, replay, untracked_copy
from firmware_py.rules.actions import ClaimSpecialTile

from conftest import GOLDEN


def _key(game: dict) -> str:
    return f"{game['time_board']}-seed{game['meta']['seed']}"


@pytest.mark.parametrize("game", GOLDEN, ids=_key)
def test_tracked_replay_matches_result(game):
    record = parse_record(game)
    assert record.tracked
    state, result = replay(record)
    assert result.over
    assert result.scores == game["result"]["scores"]
    assert result.winner == game["result"]["winner"]


@pytest.mark.parametrize("game", GOLDEN, ids=_key)
def test_untracked_replay_matches_result(game):
    tracked = parse_record(game)
    record = untracked_copy(tracked)
    assert not record.tracked
    assert not any(isinstance(m, dict) and ("cells" in m or "leather" in m) for m in record.moves)
    tracked_state, _ = replay(tracked)
    state, result = replay(record)
    assert result.scores == game["result"]["scores"]
    assert result.winner == game["result"]["winner"]
    assert [p.empty for p in state.players] == [p.empty for p in tracked_state.players]
    assert state.special == tracked_state.special


def test_golden_set_covers_both_boards_bonus_and_double_income():
    boards = {g["time_board"] for g in GOLDEN}
    assert boards == {"2014", "revised"}
    bonus_games = [g for g in GOLDEN
                   if any("bonus" in m for m in untracked_copy(parse_record(g)).moves
                          if isinstance(m, dict))]
    assert bonus_games, "at least one golden game awards the 7x7 special tile"
    assert any(g["meta"]["double_income_case"] for g in GOLDEN)
