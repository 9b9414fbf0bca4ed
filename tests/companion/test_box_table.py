"""The box at the table (TableRig driven by gestures and token verdicts, the search run
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
from firmware_py.companion.opponent import BoxMove, check_move
from firmware_py.companion.screens import build_lights, build_screen
from firmware_py.companion.tokens import MISMATCH, MOVE, STILL, Verdict
from firmware_py.service.feed import build_snapshot, capture_view
from firmware_py.companion.table_setup import PLAYERS
from table_helpers import ServiceTable, TableRig
from firmware_py.rules import (ADVANCE, DISCARD, Buy, ClaimSpecialTile, PlaceLeather, deal,
                               legal_actions, load_spec, placement_masks, replay)
from firmware_py.view.oled import problems


class Table:
    """A TableRig whose search answers when told (``answer_now``) or at once (``eager``)."""

    def __init__(self, seed: int = 3, eager: bool = True, entries: list | None = None):
        self.entries = [] if entries is None else entries
        self.requests = []
        self.eager = eager
        self.saved = []
        self.ui = TableRig(self.entries.append, lambda g: deal(load_spec(g), seed),
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
        assert build_screen(self.ui.view(), self.ui.warnings.values()).options == ("You (Green)", "Box (Yellow)")
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
        """The person carries out the box's move: the board as the move is shown (the
        loop judges it whenever what is expected changes), then its token on the target."""
        self.ui.verdict(Verdict(STILL))
        self.ui.verdict(Verdict(MOVE, self.ui.box.move.target))


def test_setup_offers_the_box_and_its_levels_and_goes_back():
    t = Table()
    t.press("ok")
    t.press("ok")
    screen = build_screen(t.ui.view(), t.ui.warnings.values())
    assert screen.title == "Who plays?"
    assert screen.options == ("Two players", "Box (easy)", "Box (normal)", "Box (hard)")
    t.press("next", 3)
    t.press("ok")
    t.press("back")                                          # back to who plays
    assert t.ui.mode == "setup_players"
    t.press("back")
    assert t.ui.mode == "setup_board"


def test_without_a_search_setup_asks_no_question_about_the_box():
    ui = TableRig(lambda b: None, lambda g: deal(load_spec(g), 1), lambda s: "")
    ui.gesture(Gesture("ok", PRESS))
    ui.gesture(Gesture("ok", PRESS))
    assert ui.mode == "setup_first"


def test_the_box_turn_is_shown_lit_and_taken_when_its_token_arrives():
    t = Table()
    t.set_up("easy", person_first=False)
    ui = t.ui
    assert ui.mode == "box" and ui.session.setup.box == "yellow"
    move = ui.box.move
    screen = build_screen(ui.view(), ui.warnings.values())
    assert screen.kind == "box" and f"Yellow to {move.target}" in screen.lines
    assert build_lights(ui.view()).targets == frozenset({move.target})
    assert build_lights(ui.view()).active == "yellow"
    ui.verdict(Verdict(MOVE, move.target + 1))               # the wrong space: nothing
    assert len(ui.session.groups) == 0 and ui.mode == "box"
    t.box_moves()
    assert len(ui.session.groups) == 1 and ui.mode == "turn"
    assert list(ui.session.boxes) == [move]
    assert t.entries[-1]["kind"] == "turn" and "box" in t.entries[-1]


def test_the_plan_is_journalled_and_shown_again_after_a_restart():
    t = Table()
    t.set_up("normal", person_first=False)
    shown = t.ui.box.move
    assert t.entries[-1]["kind"] == "plan"
    again = Table(eager=False)
    again.ui.resume(effective(t.entries))
    assert again.ui.mode == "box" and again.ui.box.move == shown
    assert again.requests == []                              # no new search: the same move
    again.box_moves()
    assert again.ui.session.boxes[-1] == shown


def test_undo_of_the_box_turn_shows_the_same_move_again():
    t = Table()
    t.set_up("normal", person_first=False)
    shown = t.ui.box.move
    t.box_moves()
    t.hold("back")
    assert t.ui.mode == "box" and t.ui.box.move == shown and len(t.requests) == 1
    assert effective(t.entries)[-1]["kind"] == "plan"        # journalled again


def test_review_shows_the_box_last_turn_on_the_person_turn():
    t = Table()
    t.set_up("normal", person_first=False)
    t.box_moves()
    assert "BACK: the box's move again" in build_screen(t.ui.view(), t.ui.warnings.values()).notice
    t.press("back")
    review = build_screen(t.ui.view(), t.ui.warnings.values())
    assert t.ui.mode == "box_review" and review.kind == "box" and review.title.startswith(("Box took", "Box advanced"))
    t.press("ok")
    assert t.ui.mode == "turn" and len(t.ui.session.groups) == 1


def test_thinking_stale_and_failed_answers():
    t = Table(eager=False)
    t.set_up("normal", person_first=True)
    t.person_moves()
    assert t.ui.mode == "box" and build_screen(t.ui.view(), t.ui.warnings.values()).lines[0] == "Box is thinking..."
    stale = t.requests[-1]
    t.hold("back")                                           # undo the person's move
    assert t.ui.mode == "turn"
    t.ui.box_answer(stale.key, answer(stale, iterations=10))
    assert t.ui.box.move is None and len(t.ui.session.groups) == 0
    t.person_moves()
    t.ui.box_answer(t.requests[-1].key, RuntimeError("out of memory"))
    screen = build_screen(t.ui.view(), t.ui.warnings.values())
    assert "RuntimeError: out of memory" in screen.lines and "OK: try again" in screen.lines
    t.press("ok")                                            # asks again
    assert len(t.requests) == 3
    t.answer_now()
    assert t.ui.box.move is not None


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
        assert t.ui.box.move is None and t.ui.box.problem
        t.ui.table.box.waiting = True
    assert all(e["kind"] != "plan" for e in t.entries)      # nothing kept of a refused one
    t.ui.box_answer(request.key, good)
    assert t.ui.box.move == good and t.entries[-1]["kind"] == "plan"


def test_a_token_already_on_the_target_waits_for_ok_after_the_move_is_shown():
    """The box's token set on the very space the box then picks (while it thought):
    the move is shown, not taken at once; one OK takes it. Later turns are taken by
    the token as usual."""
    t = Table(eager=False)
    t.set_up("normal", person_first=False)
    ui = t.ui
    request = t.requests[-1]
    move = answer(request, iterations=10)
    start = request.state.players[1].position
    ui.verdict(Verdict(MISMATCH, expected=frozenset({start}), wrong=frozenset({move.target})))
    assert build_screen(ui.view(), ui.warnings.values()).kind == "mismatch"               # moved while the box thinks
    t.ui.box_answer(request.key, move)
    ui.verdict(Verdict(MOVE, move.target))                   # the first look: already there
    screen = build_screen(ui.view(), ui.warnings.values())
    assert not ui.session.groups and ui.mode == "box" and screen.kind == "box"
    assert screen.notice == f"Yellow is on {move.target} already" and screen.footer == "OK:DONE"
    assert problems(screen) == []
    t.press("ok")
    assert list(ui.session.boxes) == [move] and ui.mode == "turn"
    t.person_moves()
    t.answer_now()
    t.box_moves()                                            # seen first, then moved: taken
    assert len(ui.session.boxes) == 2


def test_without_a_sensor_ok_twice_carries_out_the_box_turn():
    t = Table()
    t.set_up("easy", person_first=False)
    t.press("ok")
    assert "OK again: done" in build_screen(t.ui.view(), t.ui.warnings.values()).notice and not t.ui.session.groups
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
    items = t.ui.menu
    assert items[1] == "Ask the box"
    t.press("next")
    t.press("ok")
    screen = build_screen(t.ui.view(), t.ui.warnings.values())
    assert t.ui.mode == "hint" and screen.title == "Box would play"
    assert screen.lines[0].startswith("Green: ")
    t.press("ok")
    assert t.ui.mode == "turn" and not t.ui.session.groups


def test_no_hint_offered_against_the_box():
    t = Table()
    t.set_up("easy")
    t.hold("ok")
    assert "Ask the box" not in t.ui.menu


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
        screens.setdefault(build_screen(ui.view(), ui.warnings.values()), ui.mode)
        if ui.mode == "box":
            t.press("ok")                                    # OK once: what to do
            screens.setdefault(build_screen(ui.view(), ui.warnings.values()), "box, OK once")
            t.press("next")
            t.box_moves()
            if ui.mode == "turn":
                t.press("back")
                screens.setdefault(build_screen(ui.view(), ui.warnings.values()), "review")
                t.press("ok")
        elif ui.mode == "leather":
            t.press(rng.choice(("ok", "next")))
        else:
            t.person_moves(rng)
        assert len(ui.session.groups) < 300
    screens.setdefault(build_screen(ui.view(), ui.warnings.values()), "end")
    bad = [f"{where}: {p}" for screen, where in screens.items() for p in problems(screen)]
    assert bad == []
    assert any(s.kind == "box" and s.quilt is not None for s in screens)
    record = t.saved[-1]
    box = record.meta["box_quilt"]
    assert box["player"] == (1 if person_first else 0) and box["placements"]
    final = replay(record)[0]
    assert sum(row.count(".") for row in box["quilt"]) == final.players[box["player"]].empty
    rows = box["quilt"]
    square = any(all(row[c:c + 7] == "#" * 7 for row in rows[r:r + 7])
                 for r in range(len(rows) - 6) for c in range(len(rows[0]) - 6))
    assert final.special != box["player"] or square          # its 7x7 tile: a 7x7 on its quilt


def _box_bought_then_plans():
    """A game where the box bought a patch on its first turn and its next move is shown:
    (its effective journal entries, the index of the box's turn entry)."""
    for seed in range(3, 30):
        t = Table(seed=seed)
        t.set_up("easy", person_first=False)
        if t.ui.box.move.patch is None:
            continue
        t.box_moves()
        while t.ui.mode != "box":
            t.person_moves()
        if t.ui.box.move.patch is not None:
            entries = effective(t.entries)
            assert [e["kind"] for e in entries][:2] == ["setup", "turn"]
            return entries, 1
    raise AssertionError("no deal where the box buys twice")


def test_a_journalled_box_turn_that_does_not_fit_the_game_is_not_replayed():
    entries, at = _box_bought_then_plans()
    good = entries[at]["box"]
    cells = good["cells"]
    damaged = {
        "another patch": {**good, "patch": (good["patch"] + 1) % 33},
        "not the patch's shape": {**good, "cells": cells[:-1]},
        "another place": {**good, "place": good["place"] % 3 + 1},
        "another space": {**good, "target": good["target"] + 1},
        "leather not won": {**good, "leather": [[8, 8]]},
        "a 7x7 not made": {**good, "bonus": True},
    }
    for what, box in damaged.items():
        replayed = Table(eager=False)
        with pytest.raises(ValueError, match="the box's turn"):
            replayed.ui.resume(entries[:at] + [{**entries[at], "box": box}] + entries[at + 1:])
    no_box = {k: v for k, v in entries[at].items() if k != "box"}
    with pytest.raises(ValueError, match="without the box's move"):
        Table(eager=False).ui.resume(entries[:at] + [no_box])
    replayed = Table(eager=False)
    replayed.ui.resume(entries)                              # the good one replays
    assert replayed.ui.session.boxes[0] is not None


def test_a_damaged_plan_is_never_shown_nor_carried_out():
    entries, at = _box_bought_then_plans()
    plan = entries[-1]["plan"]
    assert entries[-1]["kind"] == "plan"
    damaged = {
        "a correction": {**plan, "moves": [{"adjust": 1, "buttons": 5}], "patch": None,
                         "place": 0, "cells": []},
        "a correction after its patch": {**plan, "moves": plan["moves"] + [{"adjust": 1,
                                                                           "buttons": 5}]},
        "cells on its quilt": {**plan, "cells": entries[at]["box"]["cells"]},
        "another patch": {**plan, "patch": entries[at]["box"]["patch"]},
        "another space": {**plan, "target": plan["target"] + 1},
        "leather not won": {**plan, "leather": [[8, 8]]},
        "a 7x7 not made": {**plan, "bonus": True},
        "a 7x7 claimed without one": {**plan, "moves": plan["moves"] + [{"bonus": 1}],
                                      "bonus": True},
    }
    for what, bad in damaged.items():
        replayed = Table(eager=False)
        replayed.ui.resume(entries[:-1] + [{"kind": "plan", "plan": bad}])
        ui = replayed.ui
        assert ui.mode == "box" and ui.box.move is None, what
        assert len(replayed.requests) == 1, what                 # asked afresh instead
        assert build_screen(ui.view(), ui.warnings.values()).lines[0] == "Box is thinking...", what
        replayed.press("ok", 2)                                  # nothing to carry out
        assert len(ui.session.groups) == sum(e["kind"] == "turn" for e in entries), what


def test_action_a_of_the_box_names_no_patch_place():
    t = Table(eager=False)
    t.set_up("easy", person_first=False)
    state = t.ui.state
    seat = t.ui.box.seat
    advance = BoxMove((ADVANCE,), intents.target_of(state, ADVANCE))
    assert check_move(advance, state, 0, seat) == ""
    assert check_move(BoxMove((ADVANCE,), advance.target, place=2), state, 0, seat)
    assert check_move(BoxMove((ADVANCE,), advance.target, mask=1), state, 0, seat)


def test_a_damaged_plan_never_stops_the_service(tmp_path):
    from firmware_py.ai.table import planner
    from firmware_py.companion.journal import Journal
    from firmware_py.companion.session import Setup
    from firmware_py.hw.backends import Parts
    from firmware_py.service.loop import Service
    from test_faults_rig import StepClock, fast_config
    circle, _ = deal(load_spec("patchwork"), 4)
    setup = Setup("patchwork", "2014", "yellow", tuple(circle), (), False, box="yellow",
                  level="easy")
    journal = Journal(tmp_path)
    journal.load()
    journal.append({"kind": "setup", "setup": setup.to_json()})
    journal.append({"kind": "plan", "plan": {"moves": [{"adjust": 1, "buttons": 5}], "target": 0,
                                             "patch": None, "place": 0, "cells": []}})
    service = Service(fast_config(), Parts(), tmp_path, clock=StepClock(),
                      planner=planner(iterations=10))
    service.resume()
    service.step()                                           # draws the screen: no TypeError
    move = service.view.box.move                               # None, or the search's own
    assert service.view.mode == "box"
    assert move is None or move.group[0] in intents.turn_options(service.view.state)


def test_check_move_names_each_way_a_box_move_can_contradict_its_game():
    t = Table(eager=False)
    t.set_up("easy", person_first=False)
    state, seat = t.ui.state, t.ui.box.seat
    a, b = state.offer[0], state.offer[1]
    mask_a, mask_b = (min(placement_masks(state.spec, p)) for p in (a, b))
    target = intents.target_of(state, Buy(a))
    good = BoxMove((Buy(a),), target, a, 1, mask_a)
    assert check_move(good, state, 0, seat) == ""
    full = (1 << 81) - 1 & ~mask_a                           # a 7x7 once the patch is on
    bad = {
        "not its turn": (good, 1 - seat, 0),
        "another patch than bought": (BoxMove((Buy(a),), target, b, 2, mask_b), seat, 0),
        "on a covered square": (good, seat, mask_a),
        "leather on a covered square": (BoxMove((Buy(a), PlaceLeather()), target, a, 1, mask_a,
                                                (mask_a.bit_length() - 1,)), seat, 0),
        "7x7 for the person": (BoxMove((Buy(a), ClaimSpecialTile(1 - seat)), target, a, 1,
                                       mask_a, (), True), seat, full),
        "7x7 without a 7x7": (BoxMove((Buy(a), ClaimSpecialTile(seat)), target, a, 1, mask_a,
                                      (), True), seat, 0),
    }
    for what, (move, player, quilt) in bad.items():
        assert check_move(move, state, quilt, player), what
    assert check_move(BoxMove((Buy(a), ClaimSpecialTile(seat)), target, a, 1, mask_a, (), True),
                      state, full, seat) == ""


def _box_moves_twice(seed_range=range(1, 40)):
    """A table (answering when told) where the box's turn was just carried out and the box
    is to move again, thinking: (table, the box's move carried out)."""
    for seed in seed_range:
        t = Table(seed=seed, eager=False)
        t.set_up("easy", person_first=True)
        rng = random.Random(seed)
        for _ in range(30):
            if t.ui.mode == "box":
                t.answer_now()
                done = t.ui.box.move
                t.box_moves()
                if t.ui.mode == "box":
                    return t, done
            elif t.ui.mode == "turn":
                t.person_moves(rng)
            else:
                t.press("ok")
    raise AssertionError("no deal where the box moves twice in a row")


def test_undo_back_past_a_box_turn_shows_the_move_it_made_not_a_new_search():
    t = Table()
    t.set_up("normal", person_first=False)
    made = t.ui.box.move
    t.box_moves()
    while t.ui.mode != "box":
        t.person_moves()
    asked = len(t.requests)
    while len(t.ui.session.groups) > 1:
        t.hold("back")                                       # the person's turns
    t.hold("back")                                           # and the box's
    assert t.ui.mode == "box" and not t.ui.session.groups
    assert t.ui.box.move == made and len(t.requests) == asked  # no new search
    assert effective(t.entries)[-1] == {"kind": "plan", "plan": t.ui.table.box.to_json(made)}


def test_undo_while_the_box_thinks_again_keeps_its_undone_move():
    t, done = _box_moves_twice()
    late = t.requests[-1]                                    # its next turn, still thinking
    t.hold("back")                                           # undo the turn just carried out
    assert t.ui.mode == "box" and t.ui.box.move == done
    t.ui.box_answer(late.key, answer(late, iterations=30))   # the search of the undone state
    assert t.ui.box.move == done
    assert effective(t.entries)[-1]["plan"] == t.ui.table.box.to_json(done)


@pytest.mark.parametrize("answered_in_menu", [True, False])
def test_the_menu_while_the_box_thinks_loses_no_search(answered_in_menu):
    t = Table(eager=False)
    t.set_up("hard", person_first=False)
    t.hold("ok")
    assert t.ui.mode == "menu"
    if answered_in_menu:
        t.answer_now()
        assert all(e["kind"] != "plan" for e in t.entries)  # not shown yet: not journalled
    t.press("ok")                                            # "Back to game"
    assert t.ui.mode == "box" and len(t.requests) == 1      # no second search
    if not answered_in_menu:
        assert build_screen(t.ui.view(), t.ui.warnings.values()).lines[0] == "Box is thinking..."
        t.answer_now()
    assert t.ui.box.move is not None and t.entries[-1]["kind"] == "plan"


def test_the_person_moving_on_after_a_pause_revises_the_move_on_the_box_turn():
    """A rest on the action A space mid-slide takes action A for a while (tentative, R5);
    the person's token sliding on to a patch's space revises it, also when the box's turn
    is already shown, as in a game of two people."""
    from firmware_py.companion.tokens import TokenWatch
    from firmware_py.rules import apply
    for seed in range(3, 40):
        t = Table(seed=seed)
        t.set_up("easy", person_first=False)
        t.box_moves()
        ui, state = t.ui, t.ui.state
        box_at = state.players[1 - state.to_move].position
        home = state.players[state.to_move].position
        pause = intents.target_of(state, ADVANCE)
        on = [b for b in (Buy(p) for p in state.offer[:3]) if not intents.why_not(state, b)
              and intents.target_of(state, b) > pause
              and intents.candidates_at(state, intents.target_of(state, b)) == [b]]
        after = apply(state, ADVANCE)[0]
        if on and box_at != home and after.to_move != state.to_move:
            break
    else:
        raise AssertionError("no deal to slide on past the action A space")
    watch, now = TokenWatch(0.1, 1.0), 0.0

    def reading(spaces):
        nonlocal now
        watch.reading(frozenset(spaces), now)
        now += 0.2
        ui.verdict(watch.judge(ui.expectation, now))

    reading({home, box_at})
    reading({pause, box_at})                                 # the rest on the way
    assert ui.mode == "box" and ui.session.groups[-1] == (ADVANCE,) and ui.table.tentative
    target = intents.target_of(state, on[0])
    reading({target, box_at})                                # slid on: the patch
    assert ui.session.groups[-1] == (on[0],)
    turns = [e for e in effective(t.entries) if e["kind"] == "turn"]
    assert len(turns) == 2 and turns[-1]["moves"] == [{"buy": on[0].patch}]


class HoleInTheMiddle(Table):
    """A table whose box leaves the middle square of its quilt empty (so its quilt never
    holds a 7x7 square, however full): the search's move, placed elsewhere."""

    CENTRE = 40

    def answer_now(self, **budget):
        request = self.requests[-1]
        move = answer(request, iterations=30)
        spec, quilt = request.state.spec, request.quilt | 1 << self.CENTRE
        mask = 0
        if move.patch is not None:
            fits = [m for m in placement_masks(spec, move.patch) if not m & quilt]
            if not fits:                                     # nowhere: action A instead
                move = BoxMove((ADVANCE,), intents.target_of(request.state, ADVANCE))
            else:
                mask = min(fits)
        quilt |= mask
        group, leather = [move.group[0]], []
        for action in move.group[1:]:
            if isinstance(action, ClaimSpecialTile):
                continue
            if isinstance(action, PlaceLeather):
                square = next((b for b in range(81) if not quilt >> b & 1), None)
                if square is None:
                    action = DISCARD
                else:
                    quilt |= 1 << square
                    leather.append(square)
            group.append(action)
        self.ui.box_answer(request.key, BoxMove(tuple(group), move.target, move.patch,
                                                move.place, mask, tuple(leather)))


def test_the_menu_gives_the_box_no_7x7_its_quilt_does_not_hold():
    """Late in a game the box has 49 squares covered or more but no 7x7 square (its middle
    square is empty): a claim for it from the menu is refused (the engine, counting
    squares only, would take it); the person's own claim is not."""
    t = HoleInTheMiddle(seed=5)
    t.set_up("easy", person_first=True)
    ui = t.ui
    seat = ui.box.seat
    while ui.state.players[seat].empty > 81 - 49 or ui.mode != "turn":
        assert ui.mode != "end", "the box never covered 49 squares"
        if ui.mode == "box":
            t.box_moves()
        elif ui.mode == "turn":
            t.person_moves(random.Random(len(ui.session.groups)))
        else:
            t.press("ok")
    assert not ui.session.box_quilt() >> HoleInTheMiddle.CENTRE & 1
    turns = len(ui.session.groups)
    t.hold("ok")
    t.press("next", ui.menu.index("Claim 7x7 tile"))
    t.press("ok")
    t.press("next")                                          # Yellow: the box
    t.press("ok")
    screen = build_screen(ui.view(), ui.warnings.values())
    assert len(ui.session.groups) == turns and ui.state.special is None
    assert screen.notice == "Box has no 7x7: it claims its own" and problems(screen) == []


def test_undo_of_the_box_turn_says_what_to_give_back_before_its_move_shows_again():
    t = Table()
    t.set_up("normal", person_first=False)
    move = t.ui.box.move
    t.box_moves()
    t.hold("back")
    screen = build_screen(t.ui.view(), t.ui.warnings.values())
    assert t.ui.mode == "box" and t.ui.box.move == move
    assert screen.notice == t.ui.instruction and "back to 0" in screen.notice
    assert problems(screen) == []
    t.press("next")                                          # then the move itself
    assert build_screen(t.ui.view(), t.ui.warnings.values()).notice == "" and build_screen(t.ui.view(), t.ui.warnings.values()).lines


def test_a_token_set_wrong_in_the_box_turn_gets_the_usual_guidance():
    t = Table()
    t.set_up("easy", person_first=False)
    move = t.ui.box.move
    wrong = move.target + 2
    t.ui.verdict(Verdict(MISMATCH, expected=frozenset({0}), wrong=frozenset({wrong})))
    screen = build_screen(t.ui.view(), t.ui.warnings.values())
    assert screen.kind == "mismatch" and f"Nothing belongs on {wrong}." in screen.lines
    assert build_lights(t.ui.view()).wrong == frozenset({wrong})
    assert not t.ui.session.groups
    t.ui.verdict(Verdict(STILL))
    assert build_screen(t.ui.view(), t.ui.warnings.values()).kind == "box"                  # the instruction again
    t.box_moves()
    assert list(t.ui.session.boxes) == [move]


def test_the_live_feed_says_what_to_do_for_the_box():
    t = Table()
    t.set_up("normal", person_first=False)
    screen, lights = build_screen(t.ui.view(), t.ui.warnings.values()), build_lights(t.ui.view())
    snap = build_snapshot(capture_view(t.ui.view(), t.ui.warnings, screen, lights), 1, "run")
    assert f"Yellow to {t.ui.box.move.target}" in snap["instruction"]
    if t.ui.box.move.patch is not None:
        assert sum(line.count("P") for line in snap["oled"]["lines"]) \
            == bin(t.ui.box.move.mask).count("1")
    t.box_moves()
    snap = build_snapshot(capture_view(t.ui.view(), t.ui.warnings, build_screen(t.ui.view(), t.ui.warnings.values()), build_lights(t.ui.view())), 2, "run")
    assert snap["record"]["meta"]["box_quilt"]["player"] == 0


def test_a_plan_counts_only_while_it_is_the_last_journal_entry():
    setup, turn = {"kind": "setup"}, {"kind": "turn", "moves": []}
    plan, other = {"kind": "plan", "plan": 1}, {"kind": "plan", "plan": 2}
    assert effective([setup, plan]) == [setup, plan]
    assert effective([setup, plan, turn]) == [setup, turn]
    assert effective([setup, plan, other]) == [setup, other]
    assert effective([setup, turn, plan, {"kind": "undo"}]) == [setup]


def test_a_newer_request_ends_the_older_search(tmp_path):
    """The service's search thread: a request that comes while another search runs ends
    that one at once (its clock jumps past any budget), and only the newer answer counts."""
    import threading
    import time as _time
    from firmware_py.ai.table import answer as real_answer
    from firmware_py.hw.backends import Parts
    from firmware_py.service.loop import Service
    from test_faults_rig import StepClock, fast_config
    ended = {}
    started = threading.Event()

    def planner(request, clock):
        started.set()
        t0 = _time.monotonic()
        while clock() < _time.perf_counter() + 1e9 and _time.monotonic() - t0 < 20:
            _time.sleep(0.01)                # a search whose budget is "never"
        ended[request.key] = _time.monotonic() - t0
        return real_answer(request, iterations=5)

    service = Service(fast_config(), Parts(), tmp_path, clock=StepClock(), planner=planner)
    service.resume()
    t = Table(eager=False)
    t.set_up("easy", person_first=False)
    first = t.requests[-1]
    service._think(first)
    assert started.wait(5)
    service._think(first.__class__(first.key + 1, first.state, first.quilt, "easy", 1))
    deadline = _time.monotonic() + 10
    while first.key not in ended and _time.monotonic() < deadline:
        _time.sleep(0.01)
    assert first.key in ended and ended[first.key] < 5       # ended long before its 20 s
    service.stop()                                           # ends the newer one too
    deadline = _time.monotonic() + 10
    while first.key + 1 not in ended and _time.monotonic() < deadline:
        _time.sleep(0.01)
    assert ended.get(first.key + 1, 99) < 10


def test_an_undo_while_the_box_thinks_stops_its_search(tmp_path):
    """The person's turn undone while the box searches its answer to it: the answer would
    be dropped, so the loop tells the search to stop, and it stops at its next iteration,
    long before its 600 s budget (the figure: benchmarks/search_stop.py)."""
    import math
    import threading
    from firmware_py.ai.table import planner as real_planner
    from firmware_py.hw.backends import Parts
    from firmware_py.service.loop import Service
    from test_faults_rig import fast_config
    started, told, returned = threading.Event(), threading.Event(), threading.Event()
    search = real_planner(seconds=600)

    def planner(request, clock):
        def watched() -> float:
            now = clock()
            if now == math.inf:
                told.set()
            return now
        started.set()
        try:
            return search(request, watched)
        finally:
            returned.set()

    from firmware_py.rules import deal, load_spec
    # a fixed deal in which the box has more than one answer (with one, it answers at once
    # without searching, and there is nothing to stop)
    service = Service(fast_config(), Parts(), tmp_path, planner=planner,
                      deal=lambda game: deal(load_spec(game), 7)).start()
    try:
        t = Table.__new__(Table)
        t.ui, t.requests = ServiceTable(service), []
        service.call(lambda: t.set_up("hard", person_first=True))
        service.call(lambda: t.person_moves())
        assert started.wait(10) and service.call(lambda: t.ui.mode) == "box"
        service.call(lambda: t.hold("back"))                 # undo the person's turn
        assert service.call(lambda: len(t.ui.session.groups)) == 0
        assert told.wait(10), "the search was never told to stop"
        assert returned.wait(10), "the search ran on after it was told to stop"
        assert service.call(lambda: t.ui.box.wanted) is None
    finally:
        service.stop()


def test_the_table_wants_an_answer_only_while_it_would_take_it():
    """``box_wanted`` (what the loop asks after every event to stop a useless search): the
    open request while the box thinks, also with the menu open; None after an undo, and
    once a hint is left."""
    t = Table(eager=False)
    t.set_up("hard", person_first=True)
    t.person_moves()
    asked = t.requests[-1]
    assert t.ui.box.wanted == asked.key
    t.hold("ok")                                             # the menu: still wanted
    assert t.ui.mode == "menu" and t.ui.box.wanted == asked.key
    t.press("ok")                                            # back to the game
    t.hold("back")                                           # undo the person's turn
    assert t.ui.box.wanted is None
    hints = Table(eager=False)
    hints.press("ok", 5)
    while hints.ui.mode == "deal":
        hints.press("ok")
    hints.hold("ok")
    hints.press("next")
    hints.press("ok")                                        # "Ask the box"
    assert hints.ui.mode == "hint" and hints.ui.box.wanted == hints.requests[-1].key
    hints.press("ok")                                        # left before the answer
    assert hints.ui.box.wanted is None
