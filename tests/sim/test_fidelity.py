"""Never record a move the players did not make: each class of real hands, by name.

Each test sets a game up through the buttons of a real :class:`Service` on a
stepping clock (button edges and sensor readings posted as the adapters post
them; see ``firmware_py.sim.people``) and then handles the tokens the way the
class describes. Green starts (player 0), Yellow is player 1.

Deals used (Patchwork, 2014 board), the offer at the start:
seed 2: 17 (cost 2, time 1), 26 (cost 4, time 2), 19 (cost 5, time 4);
seed 8: 6 (cost 1, time 4), 24 (cost 10, time 5), 20 (cost 2, time 3);
seed 283: 10 (cost 2, time 2), 29 (cost 1, time 2), 3 (cost 2, time 2).
"""
from __future__ import annotations

import random

import pytest

from firmware_py.companion.journal import Journal
from firmware_py.rules import ADVANCE, Buy, untracked_copy
from firmware_py.sim.people import People, Table

from test_faults_rig import GOLDEN_RECORDS, setup_journal

GREEN, YELLOW = 0, 1


def start(folder, seed: int) -> tuple[Table, People]:
    """A game of Patchwork dealt from ``seed``, set up with the buttons; tokens on 0."""
    table = Table(folder, "patchwork", seed)
    people = People(table, random.Random(seed), "patchwork", "2014", "green")
    people.set_up()
    return table, people


def moves(table: Table) -> list:
    """The record moves the companion holds now."""
    return list(table.service.view.session.record().moves)


def lift(table: Table, who: int, to: int, air: float = 0.3, after: float = 0.5) -> None:
    """Lift ``who``'s token, hold it ``air`` s, set it on ``to``; wait ``after`` s."""
    table.board.at[who] = None
    table.show(dwell=air)
    table.board.at[who] = to
    table.show(dwell=after)


def slide(table: Table, who: int, to: int, pauses: dict | None = None, step: float = 0.04,
          after: float = 0.5) -> None:
    """Slide ``who``'s token space by space to ``to``, resting ``pauses[space]`` s on a space."""
    pauses = pauses or {}
    for space in range(table.board.at[who] + 1, to + 1):
        table.show(extra=(space,), dwell=step / 2)
        table.board.at[who] = space
        table.show(dwell=pauses.get(space, step / 2))
    table.wait(after)


def choose(table: Table, presses: int) -> None:
    """NEXT ``presses`` times, then OK."""
    for _ in range(presses):
        table.press("next")
    table.press("ok")


def green_advances_first(table: Table) -> None:
    """Seed 8: Green chooses action A (4th on NEXT) with OK and lifts its token to 1."""
    choose(table, 4)
    lift(table, GREEN, 1)
    assert moves(table) == ["advance"]


# ----- 1. browsing is not choosing ------------------------------------------------------------
def test_browsing_is_not_choosing(tmp_path):
    """NEXT browses round to patch 17 (time 1: it would end on 1, the advance space too);
    Green changes its mind and advances without OK: asked, never the purchase."""
    table, people = start(tmp_path, 2)
    for _ in range(5):                          # 17, 26, 19, advance, 17 again: shown, no OK
        table.press("next")
    assert [c.selected for c in table.screen.patches] == [True, False, False]
    slide(table, GREEN, 1, after=1.0)
    assert moves(table) == []                   # nothing taken on a browse
    assert table.screen.title == "Which move?" and "advance" in table.screen.options
    before = people.state
    people._answer([(before, ADVANCE)])
    table.wait(0.5)
    assert moves(table) == ["advance"]


def test_browsing_then_ok_is_choosing(tmp_path):
    """The same browse ended with OK is a choice: the purchase, without a question."""
    table, _ = start(tmp_path, 2)
    choose(table, 5)                            # 17 shown last, then OK
    slide(table, GREEN, 1)
    assert moves(table) == [{"buy": 17}] and table.shown == 0


# ----- 2. a pause mid-slide is not a move -----------------------------------------------------
def test_pause_mid_slide_after_choosing_counts_only_the_chosen_space(tmp_path):
    """Yellow chose patch 6 (ends on 4) with NEXT and OK, then rests 1.5 s on 2 (where action
    A alone ends) and 1 s on 3 (where patch 20 ends): neither is taken, even for a while."""
    table, _ = start(tmp_path, 8)
    green_advances_first(table)
    choose(table, 1)                            # patch 6
    slide(table, YELLOW, 2, after=1.5)
    assert moves(table) == ["advance"]          # the pause on 2 took nothing
    slide(table, YELLOW, 3, after=1.0)
    assert moves(table) == ["advance"]
    slide(table, YELLOW, 4)
    assert moves(table) == ["advance", {"buy": 6}] and table.shown == 0


def without_play_time(entry: dict) -> dict:
    """A journal entry without ``t`` (the game's play seconds, which the service adds)."""
    assert isinstance(entry.get("t"), float)
    return {k: v for k, v in entry.items() if k != "t"}


def test_pause_mid_slide_then_moving_on_revises_the_tentative_move(tmp_path):
    """Yellow moves first: a 1.5 s rest on 2 shows action A for a while (tentative), the
    token moves on to 4 and the move becomes patch 6. The journal holds the same game."""
    table, people = start(tmp_path, 8)
    green_advances_first(table)
    slide(table, YELLOW, 2, after=1.5)
    assert moves(table) == ["advance", "advance"]          # tentative: nobody acted yet
    slide(table, YELLOW, 4, after=1.0)
    assert moves(table) == ["advance", {"buy": 6}]
    assert table.screen.notice == ("changed: Yellow: pay 1. "
                                   "the rest was no move: return 2 buttons")
    entries = Journal(tmp_path).load().entries
    assert [e["moves"] for e in entries[1:]] == [["advance"], [{"buy": 6}]]


def test_pause_mid_slide_is_final_once_the_next_player_acts(tmp_path):
    """After Yellow's rest on 2 Green presses NEXT (the next player acts): the advance is
    final, and Yellow's token sliding on to 4 is now only a wrong board (guidance)."""
    table, _ = start(tmp_path, 8)
    green_advances_first(table)
    slide(table, YELLOW, 2, after=1.0)
    table.press("next")
    slide(table, YELLOW, 4, after=2.5)
    assert moves(table) == ["advance", "advance"]
    assert table.screen.kind == "mismatch" and table.lights.expected == {2}


def test_pause_mid_slide_revised_after_a_power_cut(tmp_path):
    """The tentative advance is journalled as tentative; power is cut during the rest, the
    token moves on while the companion restarts, and the resumed game gets patch 6."""
    table, _ = start(tmp_path, 8)
    green_advances_first(table)
    slide(table, YELLOW, 2, after=1.0)
    assert without_play_time(Journal(tmp_path).load().entries[-1]) == {
        "kind": "turn", "moves": ["advance"], "tentative": True}
    again = Table(tmp_path, "patchwork", 8)       # power back: resumes from the journal
    again.board.at = [1, 2]
    again.show(dwell=0.5)
    assert moves(again) == ["advance", "advance"]
    slide(again, YELLOW, 4)
    assert moves(again) == ["advance", {"buy": 6}]


def test_pause_mid_slide_never_applies_to_the_last_move_of_the_game(tmp_path):
    """Golden game 60 before its last move: Yellow (52) advances onto 53, where Green stands
    (the game ends when both tokens stand there, so the last move always lands on the other
    token). It is asked and answered with OK: final, never tentative; the game is saved."""
    record = GOLDEN_RECORDS[60]
    setup_journal(tmp_path, record, 39)
    table = Table(tmp_path, record.game, 0)
    table.board.at = [53, 52]
    table.show(dwell=0.5)
    slide(table, YELLOW, 53, after=1.0)
    assert table.screen.title == "Which move?" and table.screen.options == ("advance",)
    table.press("ok")
    assert table.screen.kind == "end" and table.service.status.saved_to
    assert without_play_time(Journal(tmp_path).load().entries[-2]) == {"kind": "turn",
                                                                        "moves": ["advance"]}
    assert moves(table) == list(untracked_copy(record).moves)


# ----- 3. a question the player can answer ----------------------------------------------------
def test_question_shows_picture_and_place(tmp_path):
    """Patches 10 and 3 (both cost 2, time 2, no income) and 29 all end on 2. The question
    tells them apart by place and picture, and the record gets the one picked (the 3rd)."""
    table, people = start(tmp_path, 283)
    state = people.state
    lift(table, GREEN, 2)
    screen = table.screen
    assert screen.title == "Which move?" and screen.lines == ("Green on 2:",)
    assert len(set(screen.options)) == len(screen.options) == 3
    assert [(c.id, c.index) for c in screen.patches] == [(10, 1), (29, 2), (3, 3)]
    assert [c.shape for c in screen.patches] == [state.spec.patches[p].shape for p in (10, 29, 3)]
    assert screen.options[2].startswith("3rd patch")
    people._answer([(state, Buy(3))])            # by picture and place, as a player would
    table.wait(0.5)
    assert moves(table) == [{"buy": 3}]


def test_question_shows_picture_and_place_never_asks_a_choice_already_made(tmp_path):
    """The 3rd patch chosen with NEXT and OK: moving to 2 takes it without a question."""
    table, _ = start(tmp_path, 283)
    choose(table, 3)
    lift(table, GREEN, 2)
    assert moves(table) == [{"buy": 3}] and table.shown == 0


# ----- 4. a knocked token is not a move -------------------------------------------------------
@pytest.mark.parametrize("who", [GREEN, YELLOW], ids=["mover", "waiting"])
def test_knocked_token(tmp_path, who):
    """Both tokens on 0; one is knocked onto 1 (where Green's action A ends) for a second,
    then put back: no move at any time. The question it raises is answered NO."""
    table, _ = start(tmp_path, 8)
    slide(table, who, 1, after=1.0)
    assert moves(table) == []
    if table.screen.kind == "prompt":
        table.press("back")
    slide_back = table.board.at[:]
    slide_back[who] = 0
    table.board.at = slide_back
    table.show(dwell=1.0)
    assert moves(table) == [] and table.screen.kind == "turn"
    green_advances_first(table)                  # the real move still works


def test_knocked_token_put_back_without_answering(tmp_path):
    """The knocked token is put back before anyone answers: the question goes, nothing moved."""
    table, _ = start(tmp_path, 8)
    slide(table, YELLOW, 1, after=0.5)
    table.board.at[YELLOW] = 0
    table.show(dwell=0.5)
    assert moves(table) == [] and table.screen.kind == "turn"


# ----- 5. quick hands -------------------------------------------------------------------------
def test_quick_hands(tmp_path):
    """Green's chosen advance lands on 1 and Yellow lifts its token 50 ms later and sets it
    on 2 (its own action A): both moves are recorded, in order."""
    table, _ = start(tmp_path, 8)
    choose(table, 4)
    lift(table, GREEN, 1, after=0.05)
    lift(table, YELLOW, 2, air=0.2, after=1.0)
    assert moves(table) == ["advance", "advance"]


def test_quick_hands_move_first(tmp_path):
    """Green (on 1, to move) and Yellow (on 2) after two advances; Green slides to 5 for
    patch 6 with no choice made, Yellow slides to 6 (its action A) 40 ms after Green landed:
    both taken in order, nothing asked."""
    table, _ = start(tmp_path, 8)
    green_advances_first(table)
    slide(table, YELLOW, 2)
    table.press("next")                          # Green acts: Yellow's advance is final
    table.press("back")
    slide(table, GREEN, 5, step=0.03, after=0.04)
    slide(table, YELLOW, 6, step=0.03, after=1.0)
    assert moves(table) == ["advance", "advance", {"buy": 6}, "advance"] and table.shown == 0


def test_quick_hands_that_no_order_explains_put_back_one_at_a_time(tmp_path):
    """Yellow (to move, on 0) and Green (on 1) both moved in one reading to 2 and 9, which no
    two legal moves explain: guidance. Putting Green back first passes through {1, 2},
    Yellow's action A: not taken; both back, the game is unchanged."""
    table, _ = start(tmp_path, 8)
    green_advances_first(table)
    table.board.at = [9, 2]
    table.show(dwell=2.5)
    assert table.screen.kind == "mismatch" and moves(table) == ["advance"]
    table.board.at = [1, 2]                      # Green back first: looks like Yellow's A
    table.show(dwell=1.0)
    assert moves(table) == ["advance"]
    table.board.at = [1, 0]
    table.show(dwell=0.5)
    assert moves(table) == ["advance"] and table.screen.kind == "turn"
    slide(table, YELLOW, 2)
    assert moves(table) == ["advance", "advance"]


def test_quick_hands_unseen_order_asks_only_about_the_choice_made(tmp_path):
    """Seed 283: Green chose the 3rd patch (ends on 2, as two others do) with OK; both tokens
    go up and come down (Green on 2, Yellow on 3) with no reading between: the order is not
    seen, so the table asks, offering only the choice made."""
    table, _ = start(tmp_path, 283)
    choose(table, 3)
    table.board.at = [None, 0]
    table.show(dwell=0.05)
    table.board.at = [None, None]
    table.show(dwell=0.05)
    table.board.at = [2, 3]
    table.show(dwell=1.0)
    assert moves(table) == []
    assert table.screen.title == "Which move?" and table.screen.options == ("3rd patch, cost 2",)
    table.press("ok")
    table.wait(1.0)
    assert moves(table)[0] == {"buy": 3}


def test_question_shows_picture_and_place_on_the_oled(tmp_path):
    """The drawn question: the selected option's patch picture in the right-hand column,
    a different picture for each option (10 and 3 differ only in shape)."""
    from firmware_py.view.oled import HEADER, PICTURE_W, WIDTH, render
    table, _ = start(tmp_path, 283)
    lift(table, GREEN, 2)
    pictures = []
    for _ in range(3):
        image = render(table.screen)
        column = image.crop((WIDTH - PICTURE_W + 1, HEADER + 1, WIDTH, 58))
        assert column.getbbox() is not None               # something drawn there
        pictures.append(column.tobytes())
        table.press("next")
    assert len(set(pictures)) == 3


# ----- 6. a question left open ----------------------------------------------------------------
# Seed 98: Green buys the 3rd patch (21, time 3) and stands on 3; Yellow (0) is behind and
# sees 17 (1st, cost 2, time 1), 4 (2nd, cost 3, time 2), 11 (3rd, cost 1, time 5). From 1,
# after buying 17, Yellow still moves (behind Green) and may advance to 4, or buy the new
# 1st patch (time 2, onto Green on 3) or the new 2nd patch (time 5, to 6).
STOP = 4.0          # a rest long enough to take a patch and lay it on the quilt


def green_buys_third(table: Table) -> None:
    """Seed 98: Green chooses the 3rd patch with NEXT and OK and lifts its token to 3."""
    choose(table, 3)
    lift(table, GREEN, 3)
    assert moves(table) == [{"buy": 21}]


def titles(table: Table) -> list[str]:
    """Every OLED title shown from now on (recorded as the loop runs)."""
    seen: list[str] = []
    step = table.service.step

    def watched():
        due = step()
        if not seen or seen[-1] != table.screen.title:
            seen.append(table.screen.title)
        return due
    table.service.step = watched
    return seen


def answer(table: Table, words: str) -> None:
    """NEXT until the question's line reads ``words``, then OK."""
    for _ in range(len(table.screen.options)):
        if table.screen.lines[0] == words:
            table.press("ok")
            table.wait(0.5)
            return
        table.press("next")
    raise AssertionError(f"never offered {words!r}: {table.screen.options}")


def test_left_open_one_move_after_a_short_pause(tmp_path):
    """Yellow rests 1.5 s on 1 (where 17 ends: "Which move?" shows) and slides on to 4:
    a hand sliding on, one move (advance), no question about two."""
    table, _ = start(tmp_path, 98)
    green_buys_third(table)
    shown = titles(table)
    slide(table, YELLOW, 1, after=1.5)
    assert table.screen.title == "Which move?"
    slide(table, YELLOW, 4, after=1.0)
    assert moves(table) == [{"buy": 21}, "advance"]
    assert "1 move or 2?" not in shown and "Which moves?" not in shown


def test_left_open_one_move_answered(tmp_path):
    """Yellow stops 4 s on 1 (the question unanswered) and slides on to 4: asked, both
    readings in words with their pictures; "one move" records one advance."""
    table, _ = start(tmp_path, 98)
    green_buys_third(table)
    slide(table, YELLOW, 1, after=STOP)
    slide(table, YELLOW, 4, after=1.0)
    screen = table.screen
    assert moves(table) == [{"buy": 21}]
    assert screen.title == "1 move or 2?"
    assert screen.options == ("advance only", "1st then advance")
    assert screen.lines == ("Yellow, one move: advance to 4?",)
    assert [c.id for c in screen.patches if c.selected] == []
    table.press("next")
    assert table.screen.lines == ("Yellow: 1st patch at 1, then advance to 4?",)
    assert [(c.id, c.index) for c in table.screen.patches if c.selected] == [(17, 1)]
    table.press("next")
    answer(table, "Yellow, one move: advance to 4?")
    assert moves(table) == [{"buy": 21}, "advance"]


def test_left_open_two_moves(tmp_path):
    """The same, and Yellow made two moves (17, then advance): the answer records both,
    in order; without the question the two were one advance from 0 to 4."""
    table, _ = start(tmp_path, 98)
    green_buys_third(table)
    slide(table, YELLOW, 1, after=STOP)
    assert table.screen.title == "Which move?"          # left open
    slide(table, YELLOW, 4, after=1.0)
    assert moves(table) == [{"buy": 21}]
    answer(table, "Yellow: 1st patch at 1, then advance to 4?")
    assert moves(table) == [{"buy": 21}, {"buy": 17}, "advance"]
    assert table.screen.kind == "turn" and table.screen.notice.startswith("Yellow: pay 2")


def test_left_open_two_moves_only_one_legal_is_taken_and_said(tmp_path):
    """Stopped on 1, then on to 6: no one move ends on 6 (from 0), so it can only be 17 and
    then the new 2nd patch (time 5): taken at once, and the turn screen says so."""
    table, _ = start(tmp_path, 98)
    green_buys_third(table)
    slide(table, YELLOW, 1, after=STOP)
    slide(table, YELLOW, 6, after=1.0)
    recorded = moves(table)
    assert recorded[:2] == [{"buy": 21}, {"buy": 17}] and len(recorded) == 3
    assert "read as 1st patch at 1, then 2nd patch at 6" in table.screen.notice


def test_left_open_chain_of_three(tmp_path):
    """Yellow stops on 1 (17), on Green's token on 3 (the new 1st patch, time 2; Yellow on
    top moves again) and goes on to 4 (advance), each question left open: the last
    question offers one, two and three moves; three are recorded in order."""
    table, _ = start(tmp_path, 98)
    green_buys_third(table)
    slide(table, YELLOW, 1, after=STOP)
    lift(table, YELLOW, 3, after=STOP)
    assert table.screen.kind == "prompt"                 # left open again
    lift(table, YELLOW, 4, after=1.0)
    assert moves(table) == [{"buy": 21}]
    assert table.screen.title == "Which moves?" and len(table.screen.options) == 3
    answer(table, "Yellow: 1st patch at 1, then 1st patch at 3, then advance to 4?")
    recorded = moves(table)
    assert recorded[:2] == [{"buy": 21}, {"buy": 17}] and recorded[3] == "advance"
    assert len(recorded) == 4 and "buy" in recorded[2]


def test_left_open_then_undo(tmp_path):
    """The question about one or two moves is open and Yellow holds BACK (undo): what is
    undone is Yellow's unanswered move, not Green's recorded turn; the OLED says where
    the token goes back, and the moves can be made again."""
    table, people = start(tmp_path, 98)
    green_buys_third(table)
    slide(table, YELLOW, 1, after=STOP)
    slide(table, YELLOW, 4, after=1.0)
    assert table.screen.title == "1 move or 2?"
    table.press("back", hold=True)
    table.wait(0.5)
    assert moves(table) == [{"buy": 21}]
    assert table.screen.kind == "turn" and table.screen.notice == "Yellow: token back to 0"
    lift(table, YELLOW, 0)
    assert table.screen.kind == "turn" and not table.lights.wrong
    choose(table, 4)                                     # advance, chosen with OK
    lift(table, YELLOW, 4)
    assert moves(table) == [{"buy": 21}, "advance"]


def test_left_open_then_the_other_player_moves(tmp_path):
    """Seed 283: patches 10, 29 and 3 all end on 2. Green lifts its token there and leaves
    "Which move?" open; Yellow, next, moves to 3 (its advance). Green's move stays final
    (the question stays, about Green's token on 2), and after the answer Yellow's move is
    asked about in turn (a patch ends on 3 too)."""
    table, people = start(tmp_path, 283)
    lift(table, GREEN, 2, after=STOP)
    assert table.screen.lines == ("Green on 2:",)
    lift(table, YELLOW, 3, after=1.0)
    assert table.screen.lines == ("Green on 2:",) and moves(table) == []
    table.press("next")
    table.press("ok")                                    # the 2nd patch (29)
    table.wait(1.0)
    assert moves(table) == [{"buy": 29}]
    assert table.screen.lines == ("Yellow on 3:",)       # a patch ends there too
    table.press("next")
    table.press("ok")
    table.wait(0.5)
    assert moves(table) == [{"buy": 29}, "advance"]


# ----- 7. an instruction goes with the next move -----------------------------------------------
def test_revision_tip_goes_when_the_next_player_moves(tmp_path):
    """After a revision the turn screen says "the rest was no move: return 2 buttons"; once
    the next player (Green) moves, it is gone from every later turn screen."""
    table, _ = start(tmp_path, 8)
    green_advances_first(table)
    slide(table, YELLOW, 2, after=1.5)
    slide(table, YELLOW, 4, after=1.0)
    assert "the rest was no move: return 2 buttons" in table.screen.notice
    lift(table, GREEN, 5)                                # Green's advance (to 5)
    assert moves(table) == ["advance", {"buy": 6}, "advance"]
    assert "the rest was no move" not in table.screen.notice
