"""Reading moves from occupancy (design 5), with a fake clock."""
from __future__ import annotations

from firmware_py.companion.tokens import (ASK, LIFTED, MISMATCH, MOVE, ONTO, REVISE, STILL, THEN,
                                          WAIT, Expectation, TokenWatch)

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
    assert w.judge(e, 0.2).kind == LIFTED     # a token in the air looks the same for a while
    v = w.judge(e, 0.8)
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
    assert w.next_deadline(10.2) == 10.8      # onto the opponent's space: asked then
    assert w.next_deadline(10.9) == 12.0
    assert w.next_deadline(12.5) is None


# ----- real hands (table fidelity) -------------------------------------------------------------
def _feed(watch, readings, t=0.0, gap=0.01):
    """Readings a hand makes quickly (each ``gap`` s), the last one left to settle; returns
    the time the last was read."""
    for reading in readings:
        watch.reading(frozenset(reading), t)
        t += gap
    return t - gap


# green (0) on 5 moved to 9 by a tentative action A; yellow (1) on 8 to move now
BEFORE = Expectation((5, 8), 0, frozenset({9, 7, 11}))
AFTER = Expectation((9, 8), 1, frozenset({10, 12}), previous=BEFORE)


def test_tentative_move_revised_when_the_same_token_moves_on():
    w = TokenWatch(0.15, 2.0)
    t = _feed(w, [{9, 8}, {9, 10, 8}, {10, 8}, {10, 11, 8}, {11, 8}], 1.0)
    v = w.judge(AFTER, t + 0.15)
    assert (v.kind, v.target, v.choices) == (REVISE, 11, frozenset())


def test_tentative_move_taken_back_home_and_lifted_is_no_revision():
    w = TokenWatch(0.15, 2.0)
    t = _feed(w, [{9, 8}, {8}], 1.0)          # green lifted from 9: in the air
    assert w.judge(AFTER, t + 0.15).kind == LIFTED
    t = _feed(w, [{9, 8}], t + 0.5)           # set down again: nothing changed
    assert w.judge(AFTER, t + 0.15).kind == STILL
    t = _feed(w, [{8}, {5, 8}], t + 0.5)      # put back where it came from
    v = w.judge(AFTER, t + 0.15)
    assert (v.kind, v.target) == (REVISE, None)


def test_no_revision_without_a_tentative_move():
    w = TokenWatch(0.15, 2.0)
    t = _feed(w, [{9, 8}, {10, 8}, {11, 8}], 1.0)
    final = Expectation((9, 8), 1, frozenset({10, 12}))
    assert w.judge(final, t + 2.5).kind == MISMATCH


QUICK = Expectation((5, 8), 0, frozenset({7, 9}), follow=((7, frozenset({9, 10})),
                                                           (9, frozenset({10, 12}))))


def test_quick_hands_landing_seen_takes_the_first_move_first():
    w = TokenWatch(0.15, 2.0)                 # green lands on 9, yellow slides 8 -> 10 at once
    t = _feed(w, [{5, 8}, {8}, {9, 8}, {9, 8, 9}, {9}, {9, 10}], 1.0, 0.03)
    v = w.judge(QUICK, t + 0.15)
    assert (v.kind, v.target) == (THEN, 9)


def test_quick_hands_order_unseen_is_asked():
    w = TokenWatch(0.15, 2.0)                 # both in the air, then both set down
    t = _feed(w, [{5, 8}, {8}, set(), {9}, {9, 10}], 1.0, 0.03)
    v = w.judge(QUICK, t + 0.15)
    assert (v.kind, v.choices) == (ASK, frozenset({9}))


def test_quick_hands_nothing_legal_is_guidance():
    w = TokenWatch(0.15, 2.0)
    t = _feed(w, [{5, 8}, {8}, {9, 8}, {9, 13}], 1.0, 0.03)
    assert w.judge(QUICK, t + 2.5).kind == MISMATCH


def test_landing_needs_the_other_token_home_until_then():
    """Green's tentative action A on 9 (yellow on 8). Green slides on to 10 (yellow still on
    8), then yellow slides 8 -> 11 over both: the readings pass {9, 10} once, which looks like
    yellow landing on 10 after green's A; but green had left 9 before, so it is green's move
    on to 10 (a revision), then yellow's."""
    before = Expectation((7, 8), 0, frozenset({9, 10}), follow=((10, frozenset({11})),))
    after = Expectation((9, 8), 1, frozenset({10}), follow=((10, frozenset({11})),),
                        previous=before)
    w = TokenWatch(0.15, 2.0)
    w.reading(frozenset({9, 8}), 0.0)         # the board as the tentative move has it
    t = _feed(w, [{8, 9, 10}, {8, 10}, {8, 9, 10}, {9, 10}, {10}, {10, 11}], 1.0)
    v = w.judge(after, t + 0.15)
    assert (v.kind, v.target, v.choices) == (REVISE, 10, frozenset({10}))


def test_a_move_needs_the_waiting_token_unmoved_since_home():
    """Yellow (waiting, on 8) knocked to 10 and put back after green went to 9: no move."""
    w = TokenWatch(0.15, 2.0)
    w.reading(frozenset({5, 8}), 0.0)
    t = _feed(w, [{5, 10}, {10}, {9, 10}, {9, 8}], 1.0)
    v = w.judge(E, t + 0.15)
    assert v.kind == WAIT and v.expected == {5} and v.wrong == {9}
    t = _feed(w, [{5, 8}], t + 1.0)
    assert w.judge(E, t + 0.15).kind == STILL
    t = _feed(w, [{9, 8}], t + 1.0)
    assert w.judge(E, t + 0.15).kind == MOVE


def test_no_revision_once_the_waiting_token_was_knocked():
    """Green's tentative move on 9; yellow (waiting, on 8) is knocked to 10 while green's token
    moves on to 11, then yellow is put back: not a revision (guidance instead)."""
    w = TokenWatch(0.15, 2.0)
    w.reading(frozenset({9, 8}), 0.0)
    t = _feed(w, [{9, 10}, {10, 11}, {11}, {11, 8}], 1.0)
    v = w.judge(AFTER, t + 0.15)
    assert v.kind == WAIT and v.wrong == {11}


def test_stops_are_rests_of_stop_s_or_more_on_the_way():
    """Green (5) rests 1 s on 6 (a hand sliding on), 3 s on 7 and 2.6 s on Yellow's token
    (8, Green on top or in the air) before 9: only the long rests are stops, oldest first;
    without ``onward`` (a choice made with OK) a verdict carries none."""
    w = TokenWatch(0.15, 2.0, stop_s=2.0)
    onward = Expectation((5, 8), 0, frozenset({9, 7, 11}), onward=lambda stops, space: True)
    for reading, t in (({6, 8}, 0.0), ({7, 8}, 1.0), ({8}, 4.0), ({9, 8}, 6.6)):
        w.reading(frozenset(reading), t)
    assert w.stops(onward) == (7, 8)
    verdict = w.judge(onward, 7.0)
    assert (verdict.kind, verdict.target, verdict.stops) == (MOVE, 9, (7, 8))
    assert w.judge(E, 7.0).stops == ()


def test_stops_reach_a_space_no_one_move_reaches_only_when_onward_says_so():
    """After a stop on 7, Green on 10 (no target of one move): a MOVE with the stop when
    ``onward`` allows several turns to get there, else guidance."""
    w = TokenWatch(0.15, 2.0, stop_s=2.0)
    asked = []

    def onward(stops, space):
        asked.append((stops, space))
        return space == 10
    expect = Expectation((5, 8), 0, frozenset({9, 7, 11}), onward=onward)
    w.reading(frozenset({7, 8}), 0.0)
    w.reading(frozenset({10, 8}), 3.0)
    verdict = w.judge(expect, 3.2)
    assert (verdict.kind, verdict.target, verdict.stops) == (MOVE, 10, (7,))
    assert asked == [((7,), 10)]
    w.reading(frozenset({12, 8}), 4.0)
    assert w.judge(expect, 6.1).kind == MISMATCH
