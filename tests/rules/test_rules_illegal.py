"""Every kind of illegal action is rejected with the right error; the state is untouched."""
from __future__ import annotations

import pytest

from firmware_py.rules import (ADVANCE, DISCARD, Buy, ClaimSpecialTile, PlaceLeather, apply,
                               legal_actions, load_spec, new_game)
from firmware_py.rules import errors as E
from firmware_py.rules.quilt import mask_of

SPEC = load_spec("patchwork")


def _circle(first_ids):
    rest = [p for p in SPEC.circle_patches if p not in first_ids and p != SPEC.smallest_patch]
    return list(first_ids) + rest + [SPEC.smallest_patch]


def _rejects(state, action, error, rule_part):
    before = state
    snapshot = (state.players, state.circle, state.leather, state.owed, state.special)
    with pytest.raises(error) as info:
        apply(state, action)
    assert rule_part in info.value.rule
    assert isinstance(info.value, ValueError)
    assert state is before
    assert (state.players, state.circle, state.leather, state.owed, state.special) == snapshot
    return info.value


def test_patch_not_on_offer():
    state = new_game(circle=_circle([1, 2, 3, 4]), tracked=False)
    err = _rejects(state, Buy(4), E.NotOnOfferError, "R3")
    assert "offer is [1, 2, 3]" in str(err)


def test_unaffordable_patch():
    state = new_game(circle=_circle([22, 1, 2]), tracked=False)    # patch 22 costs 10
    _rejects(state, Buy(22), E.UnaffordableError, "R2")
    assert Buy(22) not in legal_actions(state)


def test_off_quilt_wrong_shape_and_overlap():
    state = new_game(circle=_circle([3, 12, 1, 2]))                 # 3 is 1x3, 12 is 1x4
    _rejects(state, Buy(3, 0b111 << 80), E.OffQuiltError, "R1")
    _rejects(state, Buy(3, mask_of([(0, 0), (0, 1), (1, 1)], 9)), E.WrongShapeError, "R1")
    state, _ = apply(state, Buy(3, mask_of([(0, 0), (0, 1), (0, 2)], 9)))
    state, _ = apply(state, ADVANCE)                               # opponent; now 0 moves again
    assert state.to_move == 0
    _rejects(state, Buy(12, mask_of([(0, 2), (0, 3), (0, 4), (0, 5)], 9)), E.OverlapError, "R1")


def test_mixed_styles_in_one_game():
    tracked = new_game(circle=_circle([3, 1, 2]))
    _rejects(tracked, Buy(3), E.StyleError, "styles")
    _rejects(tracked, ClaimSpecialTile(0), E.StyleError, "styles")
    untracked = new_game(circle=_circle([3, 1, 2]), tracked=False)
    _rejects(untracked, Buy(3, mask_of([(0, 0), (0, 1), (0, 2)], 9)), E.StyleError, "styles")


def _leather_owed(tracked=True):
    """Advance back and forth until player 0 wins the first leather patch (space 20)."""
    state = new_game(circle=_circle([1, 2, 3]), tracked=tracked)
    while not state.owed:
        state, _ = apply(state, ADVANCE)
    return state


def test_leather_owed_blocks_other_actions_when_tracked():
    state = _leather_owed()
    assert state.owed == (state.to_move,)
    _rejects(state, ADVANCE, E.LeatherOwedError, "R9")
    _rejects(state, DISCARD, E.DiscardNotAllowedError, "R10")
    _rejects(state, PlaceLeather(81), E.OffQuiltError, "R1")
    placed, events = apply(state, PlaceLeather(40))
    assert not placed.owed and placed.players[state.owed[0]].quilt == 1 << 40
    _rejects(placed, PlaceLeather(41), E.NoLeatherOwedError, "R9")


def test_untracked_leather_counts_as_placed_when_omitted():
    state = _leather_owed(tracked=False)
    winner = state.owed[0]
    after, _ = apply(state, ADVANCE)
    assert not after.owed and after.players[winner].empty == 80


def test_move_after_the_end():
    state = new_game(tracked=False)
    while not state.over:
        state, _ = apply(state, legal_actions(state)[0])
    assert legal_actions(state) == []
    _rejects(state, ADVANCE, E.GameOverError, "R12")


def test_special_tile_rules():
    express = new_game("patchwork-express", tracked=False)
    _rejects(express, ClaimSpecialTile(0), E.SpecialTileError, "R11")
    state = new_game(tracked=False)
    _rejects(state, ClaimSpecialTile(1), E.SpecialTileError, "R11")   # an empty quilt has no 7x7
    full = state._replace(players=(state.players[0]._replace(empty=30), state.players[1]))
    claimed, events = apply(full, ClaimSpecialTile(0))
    assert claimed.special == 0 and claimed.to_move == full.to_move
    again, events = apply(claimed._replace(players=(claimed.players[0], claimed.players[0])),
                          ClaimSpecialTile(1))
    assert again.special == 0 and events == ()                       # never changes hands


def test_patch_too_big_for_untracked_quilt():
    state = new_game(circle=_circle([3, 1, 2]), tracked=False)
    tight = state._replace(players=(state.players[0]._replace(empty=2), state.players[1]))
    _rejects(tight, Buy(3), E.NoRoomError, "R2")
