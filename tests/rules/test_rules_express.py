"""Patchwork Express: 7x7 quilts, blue patches, six leather patches, no special tile."""
from __future__ import annotations

from firmware_py.rules import (ADVANCE, DISCARD, BluePatchesJoined, Buy, LeatherDiscarded, apply,
                               legal_actions, load_spec, new_game, tally)

SPEC = load_spec("patchwork-express")


def test_express_spec_values():
    assert (SPEC.rows, SPEC.cols, SPEC.last_space, SPEC.bonus_square) == (7, 7, 29, 0)
    assert len(SPEC.leather_spaces) == 6 and len(SPEC.circle_patches) == 15
    assert len(SPEC.blue_patches) == 8
    assert SPEC.patches[SPEC.smallest_patch].area == 3


def test_blue_patches_join_behind_the_neutral_token_when_five_are_left():
    state = new_game("patchwork-express", seed=7, tracked=False)
    blue = state.blue
    buys = 0
    while state.blue:
        rich = state._replace(players=tuple(p._replace(buttons=50, empty=49) for p in state.players))
        pid = state.circle[0]
        state, events = apply(rich, Buy(pid))
        buys += 1
        if state.blue:
            assert len(state.circle) > 5
    assert buys == 10
    assert BluePatchesJoined(blue) in events
    assert state.circle[5:] == blue and len(state.circle) == 13


def test_express_leather_may_be_set_aside_by_choice():
    state = new_game("patchwork-express", seed=1)
    while not state.owed:
        state, _ = apply(state, ADVANCE)
    actions = legal_actions(state)
    assert DISCARD in actions and len(actions) == 49 + 1
    after, events = apply(state, DISCARD)
    assert LeatherDiscarded(state.owed[0]) in events
    assert after.players[state.owed[0]].empty == 49


def test_express_random_game_ends_with_six_leather_patches_won():
    state = new_game("patchwork-express", seed=11, tracked=False)
    won = 0
    while not state.over:
        state, events = apply(state, legal_actions(state)[0])
        won += sum(type(e).__name__ == "LeatherWon" for e in events)
    assert won == 6 and not state.leather
    assert tally(state).over
