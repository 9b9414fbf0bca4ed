"""The box opponent: never an illegal move, reproducible, levels that differ."""
import random

import pytest
from hypothesis import given, settings, strategies as st

from firmware_py.ai import LEVELS, choose
from firmware_py.rules import PlayerState, apply, legal_actions, new_game, score, winner_of
from firmware_py.rules import actions as A


def random_state(game: str, seed: int, steps: int, free: bool = False):
    """A tracked state reached by ``steps`` uniformly random legal actions
    (``free``: a freely laid-out circle, any patch may be bought)."""
    rng = random.Random(seed)
    state = new_game(game, seed=seed, tracked=True, free=free)
    for _ in range(steps):
        actions = legal_actions(state)
        if not actions:
            break
        state, _ = apply(state, rng.choice(actions))
    return state


def counted(state):
    """The same moment with quilts only counted, as the table records it."""
    players = tuple(PlayerState(p.position, p.buttons, p.income, 0, p.empty) for p in state.players)
    return state._replace(players=players, tracked=False)


@settings(max_examples=60, deadline=None)
@given(game=st.sampled_from(["patchwork", "patchwork-express"]), seed=st.integers(0, 10_000),
       steps=st.integers(0, 80), level=st.sampled_from(sorted(LEVELS)),
       search_seed=st.integers(0, 99), free=st.booleans())
def test_the_box_never_proposes_an_illegal_move(game, seed, steps, level, search_seed, free):
    state = random_state(game, seed, steps, free)
    if state.to_move is None:
        return
    mover = state.to_move
    decision = choose(state, level=level, seed=search_seed, iterations=40, seconds=60)
    apply(state, decision.action)                    # the checked engine raises if illegal
    # At the table quilts are untracked and the box knows only its own quilt.
    table = counted(state)
    at_table = choose(table, level=level, seed=search_seed, iterations=40, seconds=60,
                      quilt=state.players[mover].quilt)
    apply(table, at_table.action)
    if isinstance(at_table.action, A.Buy):           # its placement is legal on the real quilt
        assert at_table.action.mask is None
        apply(state, A.Buy(at_table.patch, at_table.mask))
        assert state.circle[at_table.offer_index] == at_table.patch
    if isinstance(at_table.action, A.PlaceLeather):
        apply(state, A.PlaceLeather(at_table.mask.bit_length() - 1))


def test_a_hint_without_a_known_quilt_names_no_placement():
    state = counted(random_state("patchwork", 5, 6))
    decision = choose(state, level="normal", seed=1, iterations=200, seconds=60)
    apply(state, decision.action)
    assert decision.mask is None


def test_the_same_seed_and_iterations_give_the_same_decision():
    state = random_state("patchwork", 11, 0)
    one = choose(state, level="hard", seed=4, iterations=300, seconds=60)
    two = choose(state, level="hard", seed=4, iterations=300, seconds=60)
    assert one == two and one.iterations == 300


def test_the_time_budget_stops_the_search():
    ticks = iter(range(1000))
    decision = choose(random_state("patchwork", 2, 0), level="hard", seconds=20,
                      clock=lambda: next(ticks))
    assert 8 <= decision.iterations < 40


def test_bad_level_and_finished_game_are_refused():
    with pytest.raises(ValueError, match="level"):
        choose(new_game(seed=1), level="grandmaster")
    state = random_state("patchwork", 3, 500)
    assert state.over
    with pytest.raises(ValueError, match="over"):
        choose(state)


def play(level_a: str, cap_a: int, level_b: str, cap_b: int, deal: int, a_seat: int) -> int:
    """1 if level_a wins a tracked game against level_b, else 0."""
    state = new_game(seed=deal, tracked=True)
    caps = {a_seat: (level_a, cap_a), 1 - a_seat: (level_b, cap_b)}
    turn = 0
    while not state.over:
        level, cap = caps[state.to_move]
        decision = choose(state, level=level, seed=deal * 100 + turn, iterations=cap, seconds=60)
        state, _ = apply(state, decision.action)
        turn += 1
    return int(winner_of(state) == a_seat)


def test_levels_differ_in_strength():
    """hard (capped at 400 iterations) against easy over 16 seat-swapped games (fixed
    seeds): 12 or more wins has probability 3.8% if the two were equally strong."""
    wins = sum(play("hard", 400, "easy", None, deal, seat) for deal in range(8) for seat in (0, 1))
    assert wins >= 12


@settings(max_examples=40, deadline=None)
@given(game=st.sampled_from(["patchwork", "patchwork-express"]), seed=st.integers(0, 10_000),
       steps=st.integers(0, 80), level=st.sampled_from(sorted(LEVELS)),
       search_seed=st.integers(0, 99), free=st.booleans())
def test_the_table_never_gets_an_illegal_box_turn(game, seed, steps, level, search_seed, free):
    """The whole turn the table shows (ai.table.answer): its patch on offer at the place
    it names, on empty squares of the box's real quilt, its leather too, and the group
    accepted by the checked engine in the untracked table state."""
    from firmware_py.ai.table import answer
    from firmware_py.companion.opponent import BoxRequest, check_move
    state = random_state(game, seed, steps, free)
    if state.to_move is None or state.owed:
        return
    mover = state.to_move
    quilt = state.players[mover].quilt
    table = counted(state)
    move = answer(BoxRequest(1, table, quilt, level, search_seed), iterations=30)
    assert check_move(move, table, quilt, mover) == ""
    after = table
    for action in move.group:
        after, _ = apply(after, action)
    assert after.players[mover].position == move.target
    assert move.squares & quilt == 0
    if move.patch is not None:                      # the same patch fits the real quilt there
        apply(state, A.Buy(move.patch, move.mask))
