"""The rulebooks' own worked examples, played or scored by the engine."""
from __future__ import annotations

from firmware_py.rules import (ADVANCE, Buy, ButtonsEarned, load_spec, apply, legal_actions,
                               new_game, tally)


def _buy_with_time(state, time):
    """The first legal purchase on offer whose patch has ``time``."""
    for action in legal_actions(state):
        if isinstance(action, Buy) and state.spec.patches[action.patch].time == time:
            return action
    raise AssertionError(f"no patch with time {time} on offer")


def _circle_starting_with(spec, first):
    rest = [p for p in spec.circle_patches if p not in (first, spec.smallest_patch)]
    return [first] + rest + [spec.smallest_patch]


def test_patchwork_advance_earns_four_buttons():
    spec = load_spec("patchwork")
    patch = next(p for p in spec.patches if p.time == 3 and p.cost <= 5)
    state = new_game(circle=_circle_starting_with(spec, patch.id), tracked=False)
    state, _ = apply(state, _buy_with_time(state, 3))       # green moves 3 spaces
    assert state.to_move == 1 and state.players[0].position == 3
    state, events = apply(state, ADVANCE)                     # yellow goes in front: 4 spaces
    assert state.players[1].position == 4
    assert ButtonsEarned(1, 4) in events
    assert state.players[1].buttons == 5 + 4


def test_express_advance_earns_three_buttons():
    spec = load_spec("patchwork-express")
    patch = next(p for p in spec.patches if p.time == 2 and not p.blue and p.cost <= 5)
    state = new_game("patchwork-express", circle=_circle_starting_with(spec, patch.id), tracked=False)
    state, _ = apply(state, _buy_with_time(state, 2))
    state, events = apply(state, ADVANCE)
    assert ButtonsEarned(1, 3) in events and state.players[1].buttons == 8


def _final(game, rows, special=None, finisher=0):
    state = new_game(game, tracked=False)
    last = state.spec.last_space
    players = tuple(p._replace(position=last, buttons=b, empty=e)
                    for p, (b, e) in zip(state.players, rows))
    return state._replace(players=players, special=special, finisher=finisher)


def test_doris_11_andrea_14():
    result = tally(_final("patchwork", [(14, 5), (18, 2)], special=0))
    doris, andrea = result.players
    assert (doris.buttons, doris.special, doris.penalty, doris.score) == (14, 7, 10, 11)
    assert (andrea.score, result.winner, result.tie_break) == (14, 1, False)


def test_eiko_keno_tie_goes_to_who_finished_first():
    for finisher in (0, 1):
        result = tally(_final("patchwork-express", [(14, 4), (8, 1)], finisher=finisher))
        assert result.scores == [6, 6]
        assert result.winner == finisher and result.tie_break


def test_first_player_starts_on_top_and_moves_again_after_short_move():
    state = new_game(seed=3, tracked=False)
    assert state.to_move == 0 and state.top == 0
    state, _ = apply(state, ADVANCE)        # 0 -> 1 (in front of the opponent)
    assert state.to_move == 1
    state, _ = apply(state, ADVANCE)        # 1 -> 2
    assert state.to_move == 0


def test_token_landing_on_opponent_goes_on_top():
    spec = load_spec("patchwork")
    patch = next(p for p in spec.patches if p.time == 1 and p.cost <= 5 and p.id != spec.smallest_patch)
    state = new_game(circle=_circle_starting_with(spec, patch.id), tracked=False)
    state, _ = apply(state, ADVANCE)          # green 0 -> 1
    state, _ = apply(state, Buy(patch.id))    # yellow 0 -> 1, lands on green: on top
    assert state.players[1].position == 1 == state.players[0].position
    assert state.top == 1 and state.to_move == 1
