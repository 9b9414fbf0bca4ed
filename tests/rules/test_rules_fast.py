"""The unchecked fast path gives exactly the states apply() gives."""
import random

import pytest

from firmware_py.rules import apply, legal_actions, new_game, score
from firmware_py.rules import fast


@pytest.mark.parametrize("game", ["patchwork", "patchwork-express"])
@pytest.mark.parametrize("tracked", [True, False])
def test_fast_path_matches_apply_over_random_games(game, tracked):
    rng = random.Random(7)
    steps = 0
    for seed in range(60):
        state = new_game(game, seed=seed, tracked=tracked)
        f = fast.flat(state)
        assert fast.unflat(f, state.spec) == state
        actions = legal_actions(state)
        while actions:
            action = rng.choice(actions)
            assert fast.to_move(f, state.spec.last_space) == state.to_move
            state, _ = apply(state, action)
            f = fast.fast_apply(f, action, state.spec)
            assert f == fast.flat(state)
            assert fast.unflat(f, state.spec) == state
            steps += 1
            actions = legal_actions(state)
        assert fast.to_move(f, state.spec.last_space) is None
        for p in (0, 1):
            assert fast.score(f, p, state.spec) == score(state, p)
    assert steps > 1000


def test_mixed_quilts_keep_the_tracked_one():
    state = new_game(seed=3, tracked=False)
    f = fast.flat(state, quilts=(0, None))
    offer = f[fast.CIRCLE][:3]
    pid = next(p for p in offer if state.spec.patches[p].cost <= 5)
    mask = 0b11 if state.spec.patches[pid].area == 2 else None
    f = fast.buy(f, offer.index(pid), mask or 1, state.spec)
    assert f[fast.QUILT] is not None and f[fast.P1 + fast.QUILT] is None
    assert fast.unflat(f, state.spec).tracked is False


def test_fast_apply_rejects_a_non_action():
    state = new_game(seed=1)
    with pytest.raises(TypeError):
        fast.fast_apply(fast.flat(state), "advance", state.spec)
