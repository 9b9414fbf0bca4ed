"""The box at the table (TableUI driven by gestures and token verdicts, the search run
for real with a small iteration budget): setup, its turns shown and carried out, the
plan kept over a restart and an undo, answers refused or stale, no sensor, hints, and
every screen of it fitting the OLED."""
from __future__ import annotations

import random

import pytest

from firmware_py.ai.table import answer
from firmware_py.companion import intents
from firmware_py.companion.buttons import HOLD, PRESS, Gesture
from firmware_py.companion.journal import effective
from firmware_py.companion.opponent import BoxMove
from firmware_py.companion.screens import build_lights, build_screen
from firmware_py.companion.tokens import MISMATCH, MOVE, STILL, Verdict
from firmware_py.feed import build_snapshot, capture_ui
from firmware_py.companion.ui import PLAYERS, TableUI
from firmware_py.rules import ADVANCE, Buy, legal_actions, deal, load_spec, replay
from firmware_py.view.oled import problems


class Table:
    """A TableUI whose search answers when told (``answer_now``) or at once (``eager``)."""

    def __init__(self, seed: int = 3, eager: bool = True, entries: list | None = None):
        self.entries = [] if entries is None else entries
        self.requests = []
        self.eager = eager
        self.saved = []
        self.ui = TableUI(self.entries.append, lambda g: deal(load_spec(g), seed),
                          lambda s: self.saved.append(s.record()) or "saved", think=self.think)

    def think(self, request):
        self.requests.append(request)
        if self.eager:
            self.answer_now()

    def answer_now(self, **budget):
        request = self.requests[-1]
        self.ui.box_answer(request.key, answer(request, iterations=budget.get("iterations", 30)))

    def press(self, button: str, times: int = 1):
        for _ in range(times):
            self.ui.gesture(Gesture(button, PRESS))

    def hold(self, button: str):
        self.ui.gesture(Gesture(button, HOLD))

    def set_up(self, level="normal", game=0, person_first=True, free=False):
        self.press("next", game)
        self.press("ok")
        if game == 0:
            self.press("ok")                                 # 2014 board
        assert self.ui.mode == "setup_players"
        self.press("next", [lv for lv, _ in PLAYERS].index(level))
        self.press("ok")
        assert build_screen(self.ui).options == ("You (Green)", "Box (Yellow)")
        self.press("next", 0 if person_first else 1)
        self.press("ok")
        self.press("next", int(free))
        self.press("ok")                                     # deal it (or a free layout)
        while self.ui.mode == "deal":
            self.press("ok")

    def person_moves(self, rng=None):
        """The person chooses a legal move with NEXT/OK and the sensor sees the token."""
        ui = self.ui
        state = ui.state
        legal = [a for a in legal_actions(state) if isinstance(a, Buy) or a == ADVANCE]
        action = (rng or random.Random(0)).choice(legal)
        options = intents.turn_options(state)
        self.press("next", options.index(action) + 1)
        self.press("ok")
        ui.verdict(Verdict(MOVE, intents.target_of(state, action)))

    def box_moves(self):
        """The person carries out the box's move: the sensor sees its token on the target."""
        self.ui.verdict(Verdict(MOVE, self.ui.box_move.target))


def test_setup_offers_the_box_and_its_levels_and_goes_back():
    t = Table()
    t.press("ok")
    t.press("ok")
    screen = build_screen(t.ui)
    assert screen.title == "Who plays?"
    assert screen.options == ("Two players", "Box (easy)", "Box (normal)", "Box (hard)")
    t.press("next", 3)
    t.press("ok")
    t.press("back")                                          # back to who plays
    assert t.ui.mode == "setup_players"
    t.press("back")
    assert t.ui.mode == "setup_board"


def test_without_a_search_setup_asks_no_question_about_the_box():
    ui = TableUI(lambda b: None, lambda g: deal(load_spec(g), 1), lambda s: "")
    ui.gesture(Gesture("ok", PRESS))
    ui.gesture(Gesture("ok", PRESS))
    assert ui.mode == "setup_first"


def test_the_box_turn_is_shown_lit_and_taken_when_its_token_arrives():
    t = Table()
    t.set_up("easy", person_first=False)
    ui = t.ui
    assert ui.mode == "box" and ui.session.setup.box == "yellow"
    move = ui.box_move
    screen = build_screen(ui)
    assert screen.kind == "box" and f"Yellow to {move.target}" in screen.lines
    assert build_lights(ui).targets == frozenset({move.target})
    assert build_lights(ui).active == "yellow"
    ui.verdict(Verdict(MOVE, move.target + 1))               # the wrong space: nothing
    assert len(ui.session.groups) == 0 and ui.mode == "box"
    t.box_moves()
    assert len(ui.session.groups) == 1 and ui.mode == "turn"
    assert ui.session.boxes == [move]
    assert t.entries[-1]["kind"] == "turn" and "box" in t.entries[-1]


def test_the_plan_is_journalled_and_shown_again_after_a_restart():
    t = Table()
    t.set_up("normal", person_first=False)
    shown = t.ui.box_move
    assert t.entries[-1]["kind"] == "plan"
    again = Table(eager=False)
    again.ui.resume(effective(t.entries))
    assert again.ui.mode == "box" and again.ui.box_move == shown
    assert again.requests == []                              # no new search: the same move
    again.box_moves()
    assert again.ui.session.boxes[-1] == shown


def test_undo_of_the_box_turn_shows_the_same_move_again():
    t = Table()
    t.set_up("normal", person_first=False)
    shown = t.ui.box_move
    t.box_moves()
    t.hold("back")
    assert t.ui.mode == "box" and t.ui.box_move == shown and len(t.requests) == 1
    assert effective(t.entries)[-1]["kind"] == "plan"        # journalled again


def test_review_shows_the_box_last_turn_on_the_person_turn():
    t = Table()
    t.set_up("normal", person_first=False)
    t.box_moves()
    assert "BACK: the box's move again" in build_screen(t.ui).notice
    t.press("back")
    review = build_screen(t.ui)
    assert t.ui.mode == "box_review" and review.kind == "box" and review.title.startswith(("Box took", "Box advanced"))
    t.press("ok")
    assert t.ui.mode == "turn" and len(t.ui.session.groups) == 1


def test_thinking_stale_and_failed_answers():
    t = Table(eager=False)
    t.set_up("normal", person_first=True)
    t.person_moves()
    assert t.ui.mode == "box" and build_screen(t.ui).lines[0] == "Box is thinking..."
    stale = t.requests[-1]
    t.hold("back")                                           # undo the person's move
    assert t.ui.mode == "turn"
    t.ui.box_answer(stale.key, answer(stale, iterations=10))
    assert t.ui.box_move is None and len(t.ui.session.groups) == 0
    t.person_moves()
    t.ui.box_answer(t.requests[-1].key, RuntimeError("out of memory"))
    screen = build_screen(t.ui)
    assert "RuntimeError: out of memory" in screen.lines and "OK: try again" in screen.lines
    t.press("ok")                                            # asks again
    assert len(t.requests) == 3
    t.answer_now()
    assert t.ui.box_move is not None


def test_an_answer_that_does_not_fit_the_game_is_refused():
    t = Table(eager=False)
    t.set_up("normal", person_first=False)
    request = t.requests[-1]
    good = answer(request, iterations=10)
    state = request.state
    off = next(p for p in range(len(state.spec.patches)) if p not in state.offer)
    bad = [BoxMove((Buy(off),), good.target, off, 1, 1),
           BoxMove(good.group, good.target, good.patch, good.place, good.mask | (1 << 80)
                   if good.patch is not None else 1)]
    for move in bad:
        t.ui.box_answer(request.key, move)
        assert t.ui.box_move is None and t.ui.box_problem
        t.ui.box_waiting = True
    assert all(e["kind"] != "plan" for e in t.entries)      # nothing kept of a refused one
    t.ui.box_answer(request.key, good)
    assert t.ui.box_move == good and t.entries[-1]["kind"] == "plan"


def test_without_a_sensor_ok_twice_carries_out_the_box_turn():
    t = Table()
    t.set_up("easy", person_first=False)
    t.press("ok")
    assert "OK again: done" in build_screen(t.ui).notice and not t.ui.session.groups
    t.press("ok")
    assert len(t.ui.session.groups) == 1
    t.ui.sensor_status(False, "sensor offline")
    while t.ui.mode != "box":
        t.person_moves()
    t.press("ok")                                            # no sensor: once is enough
    assert t.ui.session.boxes[-1] is not None


def test_a_hint_in_a_game_of_two_people():
    t = Table()
    t.press("ok")
    t.press("ok")
    t.press("ok")                                            # two players
    t.press("ok")
    t.press("ok")
    while t.ui.mode == "deal":
        t.press("ok")
    t.hold("ok")
    items = t.ui.menu_items()
    assert items[1] == "Ask the box"
    t.press("next")
    t.press("ok")
    screen = build_screen(t.ui)
    assert t.ui.mode == "hint" and screen.title == "Box would play"
    assert screen.lines[0].startswith("Green: ")
    t.press("ok")
    assert t.ui.mode == "turn" and not t.ui.session.groups


def test_no_hint_offered_against_the_box():
    t = Table()
    t.set_up("easy")
    t.hold("ok")
    assert "Ask the box" not in t.ui.menu_items()


@pytest.mark.parametrize("game", [0, 1], ids=["patchwork", "express"])
@pytest.mark.parametrize("person_first", [True, False])
@pytest.mark.parametrize("free", [False, True], ids=["dealt", "free"])
def test_whole_games_against_the_box_fit_and_replay(game, person_first, free):
    t = Table(seed=7 + game)
    t.set_up("easy", game=game, person_first=person_first, free=free)
    rng = random.Random(game)
    screens = {}
    ui = t.ui
    while ui.mode != "end":
        screens.setdefault(build_screen(ui), ui.mode)
        if ui.mode == "box":
            t.press("ok")                                    # OK once: what to do
            screens.setdefault(build_screen(ui), "box, OK once")
            t.press("next")
            t.box_moves()
            if ui.mode == "turn":
                t.press("back")
                screens.setdefault(build_screen(ui), "review")
                t.press("ok")
        elif ui.mode == "leather":
            t.press(rng.choice(("ok", "next")))
        else:
            t.person_moves(rng)
        assert len(ui.session.groups) < 300
    screens.setdefault(build_screen(ui), "end")
    bad = [f"{where}: {p}" for screen, where in screens.items() for p in problems(screen)]
    assert bad == []
    assert any(s.kind == "box" and s.quilt is not None for s in screens)
    record = t.saved[-1]
    box = record.meta["box_quilt"]
    assert box["player"] == (1 if person_first else 0) and box["placements"]
    replay(record)


def test_a_token_set_wrong_in_the_box_turn_gets_the_usual_guidance():
    t = Table()
    t.set_up("easy", person_first=False)
    move = t.ui.box_move
    wrong = move.target + 2
    t.ui.verdict(Verdict(MISMATCH, expected=frozenset({0}), wrong=frozenset({wrong})))
    screen = build_screen(t.ui)
    assert screen.kind == "mismatch" and f"Nothing belongs on {wrong}." in screen.lines
    assert build_lights(t.ui).wrong == frozenset({wrong})
    assert not t.ui.session.groups
    t.ui.verdict(Verdict(STILL))
    assert build_screen(t.ui).kind == "box"                  # the instruction again
    t.box_moves()
    assert t.ui.session.boxes == [move]


def test_the_live_feed_says_what_to_do_for_the_box():
    t = Table()
    t.set_up("normal", person_first=False)
    screen, lights = build_screen(t.ui), build_lights(t.ui)
    snap = build_snapshot(capture_ui(t.ui, screen, lights), 1, "run")
    assert f"Yellow to {t.ui.box_move.target}" in snap["instruction"]
    if t.ui.box_move.patch is not None:
        assert sum(line.count("P") for line in snap["oled"]["lines"]) \
            == bin(t.ui.box_move.mask).count("1")
    t.box_moves()
    snap = build_snapshot(capture_ui(t.ui, build_screen(t.ui), build_lights(t.ui)), 2, "run")
    assert snap["record"]["meta"]["box_quilt"]["player"] == 0


def test_a_plan_counts_only_while_it_is_the_last_journal_entry():
    setup, turn = {"kind": "setup"}, {"kind": "turn", "moves": []}
    plan, other = {"kind": "plan", "plan": 1}, {"kind": "plan", "plan": 2}
    assert effective([setup, plan]) == [setup, plan]
    assert effective([setup, plan, turn]) == [setup, turn]
    assert effective([setup, plan, other]) == [setup, other]
    assert effective([setup, turn, plan, {"kind": "undo"}]) == [setup]
