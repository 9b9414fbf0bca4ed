"""Reading moves from occupancy (design 5), with a fake clock."""
from __future__ import annotations

from firmware_py.companion.tokens import (LIFTED, MISMATCH, MOVE, ONTO, STILL, WAIT, Expectation,
                                          TokenWatch)

E = Expectation((5, 8), 0, frozenset({9, 7, 11}))    # green on 5 to move; yellow on 8


def _settle(watch, reading, t):
    watch.reading(frozenset(reading), t)
    return watch.judge(E, t + watch.stable_s)


def test_unstable_reading_waits():
    w = TokenWatch(0.15, 2.0)
    w.reading(frozenset({9, 8}), 1.0)
    assert w.judge(E, 1.1).kind == WAIT
    assert w.judge(E, 1.15).kind == MOVE


def test_slide_across_spaces_is_one_move():
    w = TokenWatch(0.15, 2.0)
    t = 0.0
    verdicts = []
    for space in (6, 7, 8, 9, 10, 11):        # green slides 5 -> 11, 40 ms per space
        w.reading(frozenset({space, 8}), t)
        t += 0.04
        verdicts.append(w.judge(E, t).kind)
    assert set(verdicts) == {WAIT}            # 7 and 9 were passed, never stable
    assert w.judge(E, t + 0.15).target == 11


def test_lift_and_set_down_is_one_move_and_put_back_is_none():
    w = TokenWatch(0.15, 2.0)
    w.reading(frozenset({8}), 0.0)            # green in the air
    assert w.judge(E, 0.3).kind == LIFTED
    assert _settle(w, {5, 8}, 0.4).kind == STILL    # put back: no move
    assert _settle(w, {7, 8}, 1.0) .target == 7


def test_onto_opponent_space_is_never_guessed():
    e = Expectation((5, 8), 0, frozenset({8, 9}))
    w = TokenWatch(0.15, 2.0)
    w.reading(frozenset({8}), 0.0)
    v = w.judge(e, 0.2)
    assert (v.kind, v.target) == (ONTO, 8)


def test_wrong_space_gets_guidance_after_two_seconds():
    w = TokenWatch(0.15, 2.0)
    w.reading(frozenset({8, 13}), 0.0)        # green put on 13: no legal move ends there
    assert w.judge(E, 1.0).kind == WAIT
    v = w.judge(E, 2.0)
    assert v.kind == MISMATCH and v.expected == {5} and v.wrong == {13}


def test_out_of_turn_move_is_mismatch():
    w = TokenWatch(0.15, 2.0)
    w.reading(frozenset({5, 9}), 0.0)         # yellow (not to move) slid 8 -> 9
    v = w.judge(E, 2.5)
    assert v.kind == MISMATCH and v.expected == {8} and v.wrong == {9}


def test_consumed_reading_makes_no_second_move():
    w = TokenWatch(0.15, 2.0)
    w.reading(frozenset({9, 8}), 0.0)
    assert w.judge(E, 0.2).kind == MOVE
    w.consume()                               # e.g. the move was undone
    v = w.judge(E, 0.3)
    assert v.kind == WAIT and v.expected == {5} and v.wrong == {9}
    assert w.judge(E, 3.0).kind == MISMATCH
    assert _settle(w, {5, 8}, 4.0).kind == STILL
    assert _settle(w, {9, 8}, 5.0).kind == MOVE      # a new reading counts again


def test_deadlines():
    w = TokenWatch(0.15, 2.0)
    assert w.next_deadline(0.0) is None
    w.reading(frozenset({1}), 10.0)
    assert w.next_deadline(10.0) == 10.15
    assert w.next_deadline(10.2) == 12.0
    assert w.next_deadline(12.5) is None
