"""Hypothesis properties of random legal games."""
from __future__ import annotations

import random

from hypothesis import given, settings, strategies as st

from firmware_py.rules import (Buy, GameRecord, action_to_move, apply, deal,
                               dumps_record, legal_actions, load_spec, new_game, parse_record,
                               replay)

GAMES = st.sampled_from([("patchwork", "2014"), ("patchwork", "revised"),
                         ("patchwork-express", "standard")])


def _play(game, board, seed, tracked):
    """A random legal game; yields (state before, action, state after)."""
    rng = random.Random(seed)
    state = new_game(game, board, seed=seed, tracked=tracked)
    for _ in range(400):
        if state.over:
            return
        action = rng.choice(legal_actions(state))
        after, _ = apply(state, action)
        yield state, action, after
        state = after
    raise AssertionError("a random game did not end within 400 actions")


@settings(max_examples=60, deadline=None)
@given(GAMES, st.integers(0, 2**32), st.booleans())
def test_random_games_end_and_keep_invariants(game, seed, tracked):
    last = None
    for before, action, after in _play(*game, seed, tracked):
        for p0, p1 in zip(before.players, after.players):
            assert p1.buttons >= 0
            assert p1.position >= p0.position
            assert 0 <= p1.empty <= after.spec.quilt_size
            if tracked:
                assert after.spec.quilt_size - p1.quilt.bit_count() == p1.empty
        if tracked and isinstance(action, Buy):
            assert action.mask & before.players[before.to_move].quilt == 0   # no overlap
        last = after
    assert last is not None and last.over
    assert all(p.position == last.spec.last_space for p in last.players)


@settings(max_examples=40, deadline=None)
@given(GAMES, st.integers(0, 2**32), st.booleans())
def test_records_written_and_read_back_are_equal(game, seed, tracked):
    moves, final = [], None
    for _before, action, after in _play(*game, seed, tracked):
        move = action_to_move(after.spec, action)
        if move is not None:
            moves.append(move)
        final = after
    start = new_game(*game, seed=seed)
    record = GameRecord(game[0], game[1], ("A", "B"), start.circle, tuple(moves),
                        start.blue if game[0] == "patchwork-express" else None,
                        meta={"seed": seed})
    again = parse_record(dumps_record(record))
    assert again == record
    state, result = replay(again)
    assert [p.buttons for p in state.players] == [p.buttons for p in final.players]
    assert [p.empty for p in state.players] == [p.empty for p in final.players]
    assert result.over


@given(st.integers(0, 2**64), st.sampled_from(["patchwork", "patchwork-express"]))
def test_same_seed_deals_same_circle(seed, game):
    spec = load_spec(game)
    first = deal(spec, seed)
    assert first == deal(spec, seed)
    circle, blue = first
    assert sorted(circle) == sorted(spec.circle_patches) and circle[-1] == spec.smallest_patch
    assert sorted(blue) == sorted(spec.blue_patches)


def test_different_seeds_deal_different_circles():
    spec = load_spec("patchwork")
    assert len({deal(spec, seed)[0] for seed in range(20)}) == 20
