"""The box's whole turn at an untracked table: legal, its quilt tracked, 7x7 declared."""
import random

import pytest

from firmware_py.ai.turn import hint, plan_turn
from firmware_py.rules import actions as A
from firmware_py.rules import apply, legal_actions, new_game
from firmware_py.rules.quilt import has_square


def test_a_whole_untracked_game_against_a_random_human():
    rng = random.Random(5)
    state = new_game(seed=8, tracked=False)
    box, quilt, bonus_seen, turns = 1, 0, False, 0
    while not state.over:
        if state.to_move == box and not state.owed:
            turn = plan_turn(state, quilt, level="easy", seed=turns, seconds=60)
            assert turn.quilt & quilt == quilt
            if turn.mask is not None:
                assert not turn.mask & quilt and turn.mask.bit_count() == \
                    state.spec.patches[turn.patch].area
            for action in turn.group:
                state, _ = apply(state, action)         # checked: raises if illegal
            quilt = turn.quilt
            assert state.players[box].empty == 81 - quilt.bit_count()
            assert turn.target == state.players[box].position
            if turn.bonus:
                bonus_seen = True
                assert state.special == box and has_square(quilt, 7, 9, 9)
            turns += 1
        else:
            state, _ = apply(state, rng.choice(legal_actions(state)))
    assert turns > 10
    assert bonus_seen or state.special != box


def test_leather_won_by_the_box_goes_on_its_quilt():
    state = new_game(seed=2, tracked=False)
    p0 = state.players[0]._replace(position=19, buttons=0)    # can only advance
    p1 = state.players[1]._replace(position=20)
    state = state._replace(players=(p0, p1))
    quilt = 0b111                                               # three squares already covered
    turn = plan_turn(state, quilt, level="hard", seed=1, iterations=50)
    assert isinstance(turn.group[0], A.Advance) and turn.target == 21
    assert turn.buttons == 2 and len(turn.leather) == 1
    assert turn.quilt == quilt | 1 << turn.leather[0] and turn.leather[0] not in (0, 1, 2)
    assert isinstance(turn.group[1], A.PlaceLeather)


def test_plan_turn_refuses_while_leather_is_owed():
    state = new_game(seed=2, tracked=False)._replace(owed=(0,))
    with pytest.raises(ValueError, match="owed"):
        plan_turn(state, 0, iterations=10)


def test_a_hint_is_legal_for_either_player():
    state = new_game(seed=3, tracked=False)
    for _ in range(6):
        decision = hint(state, seed=2, seconds=0.05)
        state, _ = apply(state, decision.action)
