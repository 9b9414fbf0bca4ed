"""Each prompt and mismatch case at the table, through the real adapters.

The companion runs on the sim backend: gpiozero MockFactory buttons, the
neopixel driver on Blinka's OS-agnostic board, a luma ssd1306 over noop, and
the simulated sensor process over a pty. It resumes mid-game from a journal.
"""
from __future__ import annotations

import time

import pytest

from firmware_py.rules import Buy, parse_record, untracked_copy
from table_helpers import Table

from conftest import DATA

DEMO = (DATA.parent.parent / "firmware_py" / "data" / "demo-game.json").read_text()
EXPRESS = (DATA / "express-game.json").read_text()


@pytest.fixture
def table(tmp_path, request):
    text, prefix = request.param
    t = Table(tmp_path / "journal", text, prefix)
    yield t
    t.close()


def _wait(table, predicate, what, timeout=8.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        status = table.status()
        if predicate(status):
            return status
        time.sleep(0.01)
    raise AssertionError(f"timed out waiting for {what}: {table.status().screen}")


@pytest.mark.parametrize("table", [(DEMO, 7)], indirect=True)
def test_advance_detected_from_the_token_says_how_many_buttons(table):
    state = table.state                       # move 7: yellow (player 1) advances 9 -> 11
    assert state.to_move == 1 and state.players[1].position == 9
    buttons = state.players[1].buttons
    table.hands.move(1, 11)
    status = _wait(table, lambda s: s.turns == 8, "the advance")
    assert status.screen.notice.startswith("Yellow: take 2 buttons, +")  # whose, what
    assert " income" in status.screen.notice
    assert table.state.players[1].buttons > buttons + 2


@pytest.mark.parametrize("table", [(DEMO, 3)], indirect=True)
def test_buy_chosen_with_buttons_lights_the_target_then_the_token_completes_it(table):
    state = table.state                       # move 3: green buys patch 11 (time 5), 3 -> 8
    options = [Buy(p) for p in state.offer]
    table.hands.press("next", options.index(Buy(11)) + 1)
    table.hands.press("ok")
    status = table.status()
    assert status.lights.targets == {8}
    assert status.screen.notice == "Green: pay 1, move to space 8"
    assert [c.selected for c in status.screen.patches].count(True) == 1
    table.hands.move(0, 8, "lift")
    status = _wait(table, lambda s: s.turns == 4, "the purchase")
    assert status.screen.notice.startswith("Green: pay 1, +")
    assert " income" in status.screen.notice
    areas = [state.spec.patches[p].area for p in (17, 29, 11)]   # green's three patches
    assert table.state.players[0].empty == 81 - sum(areas) == 64


@pytest.mark.parametrize("table", [(DEMO, 26)], indirect=True)
def test_token_moved_first_asks_when_several_patches_match(table):
    state = table.state                       # move 26: yellow on 40; 3, 26 and 5 all end on 42
    assert {state.spec.patches[p].time for p in state.offer} == {2}
    table.hands.move(1, 42)
    status = _wait(table, lambda s: s.mode == "confirm", "the question")
    assert len(status.screen.options) == 3 and status.screen.lines == ("Yellow on 42:",)
    table.hands.press("next", 2)
    table.hands.press("ok")
    _wait(table, lambda s: s.turns == 27, "the purchase")
    assert table.service.call(lambda: table.ui.session.record().moves[-1]) == {"buy": 5}


@pytest.mark.parametrize("table", [(DEMO, 12)], indirect=True)
def test_income_and_leather_patch_in_one_move(table):
    state = table.state                       # move 12: green buys 24, 18 -> 23: income, leather 20
    empty = state.players[0].empty
    table.hands.press("next")                 # move first is also fine; choose to be sure
    while table.service.call(lambda: table.ui.intent) != Buy(24):
        table.hands.press("next")
    table.hands.press("ok")
    table.hands.move(0, 23)
    status = _wait(table, lambda s: s.turns > 12, "the purchase")
    assert status.screen.notice.startswith("Green: pay ")
    assert "take leather" in status.screen.notice and " income" in status.screen.notice
    after = table.state
    assert after.players[0].empty == empty - 6 - 1 and 20 not in after.leather


@pytest.mark.parametrize("table", [(EXPRESS, 0)], indirect=True)
def test_express_leather_prompt_place_or_set_aside(table):
    plan = untracked_copy(parse_record(EXPRESS)).moves
    index = plan.index({"leather": "discard"})
    table.close()
    t = Table(table.service.folder.parent / "j2", EXPRESS, index - 1)
    try:
        state = t.state
        mover = state.to_move
        move = plan[index - 1]
        assert move == "advance" or "buy" in move
        from firmware_py.companion import intents
        from firmware_py.rules import ADVANCE
        action = ADVANCE if move == "advance" else Buy(move["buy"])
        target = intents.target_of(state, action)
        if move != "advance":
            options = intents.turn_options(state)
            t.hands.press("next", options.index(action) + 1)
            t.hands.press("ok")
        t.hands.move(mover, target)
        if t.status().mode == "confirm" or target == state.players[1 - mover].position:
            _wait(t, lambda s: s.mode == "confirm", "the question")
            t.hands.press("ok")
        status = _wait(t, lambda s: s.mode == "leather", "the leather prompt")
        assert status.screen.footer == "OK:PLACE  NEXT:SET ASIDE"
        assert status.screen.lines[0] == f"{t.ui.session.setup.colours[mover].capitalize()} won it."
        empty = t.state.players[mover].empty
        t.hands.press("next")                 # set it aside
        _wait(t, lambda s: s.mode == "turn", "the next turn")
        assert t.state.players[mover].empty == empty and not t.state.owed
        t.hands.hold("back")                  # undo the set-aside: the prompt comes back
        _wait(t, lambda s: s.mode == "leather", "the prompt again")
        t.hands.press("ok")                   # place it this time
        _wait(t, lambda s: s.mode == "turn", "the next turn")
        assert t.state.players[mover].empty == empty - 1
    finally:
        t.close()


@pytest.mark.parametrize("table", [(DEMO, 31)], indirect=True)
def test_menu_claims_the_special_tile_and_corrects_buttons(table):
    t = table
    t.hands.hold("ok")
    status = _wait(t, lambda s: s.mode == "menu", "the menu")
    assert "Claim 7x7 tile" in status.screen.options
    t.hands.press("next", list(status.screen.options).index("Claim 7x7 tile"))
    t.hands.press("ok")
    t.hands.press("ok")                       # Green
    _wait(t, lambda s: s.state.special == 0, "the special tile")
    assert t.status().screen.notice.startswith("Green: take special tile")
    buttons = t.state.players[1].buttons
    t.hands.hold("ok")
    items = list(_wait(t, lambda s: s.mode == "menu", "the menu").screen.options)
    assert "Claim 7x7 tile" not in items       # never changes hands
    t.hands.press("next", items.index("Correct buttons"))
    t.hands.press("ok")
    t.hands.press("next")                     # Yellow
    t.hands.press("ok")
    t.hands.press("next", 3)                  # +3
    t.hands.press("back")                     # -1
    assert "-> " + str(buttons + 2) in t.status().screen.lines[0]
    t.hands.press("ok")
    _wait(t, lambda s: s.mode == "turn", "the turn")
    assert t.state.players[1].buttons == buttons + 2


@pytest.mark.parametrize("table", [(DEMO, 7)], indirect=True)
def test_hold_back_undoes_and_the_leds_show_where_the_token_returns(table):
    t = table
    t.hands.move(1, 11)
    _wait(t, lambda s: s.turns == 8, "the advance")
    t.hands.hold("back")
    _wait(t, lambda s: s.turns == 7, "the undo")
    said = t.service.call(lambda: t.ui.instruction)       # what to give back, and whose
    assert said.startswith("Yellow: return ") and " buttons" in said
    assert said.endswith("; token back to 9")
    status = _wait(t, lambda s: s.lights.expected == {9} and s.lights.wrong == {11},
                   "the blinking return space")
    assert t.state.players[1].position == 9
    t.hands.move(1, 9)                        # token back: the same move can be made again
    t.hands.await_board({9, 10})
    assert not t.status().lights.expected
    t.hands.move(1, 11)
    _wait(t, lambda s: s.turns == 8, "the advance again")


@pytest.mark.parametrize("table", [(DEMO, 7)], indirect=True)
def test_token_on_a_wrong_space_gets_guidance_and_changes_nothing(table):
    t = table
    before = t.state
    t.hands.move(1, 15)                       # no legal move of yellow ends on 15
    status = _wait(t, lambda s: s.screen.kind == "mismatch", "the guidance")
    assert status.screen.title == "CHECK BOARD"
    assert any("on 9." in line for line in status.screen.lines)
    assert any("15" in line for line in status.screen.lines)
    assert status.lights.expected == {9} and status.lights.wrong == {15}
    assert t.state == before
    t.hands.move(1, 9)
    _wait(t, lambda s: s.screen.kind == "turn", "the turn screen")
    assert t.state == before


@pytest.mark.parametrize("table", [(DEMO, 7)], indirect=True)
def test_out_of_turn_and_lifted_tokens_get_guidance(table):
    t = table
    before = t.state                          # yellow (9) to move; green on 10
    t.hands.move(0, 12)                       # green moves out of turn
    status = _wait(t, lambda s: s.screen.kind == "mismatch", "the guidance")
    assert status.lights.expected == {10} and status.lights.wrong == {12}
    t.hands.move(0, 10)
    _wait(t, lambda s: s.screen.kind == "turn", "the turn screen")
    t.hands.sensor.command("lift", token=1)   # yellow's token lifted and held
    t.hands.sensor.sync()
    status = _wait(t, lambda s: s.screen.kind == "mismatch", "the guidance")
    assert status.lights.expected == {9} and not status.lights.wrong
    t.hands.sensor.command("place", token=1, space=9)
    t.hands.sensor.sync()
    _wait(t, lambda s: s.screen.kind == "turn", "the turn screen")
    assert t.state == before


@pytest.mark.parametrize("table", [(DEMO, 33)], indirect=True)
def test_end_screen_and_saved_record(table):
    t = table
    for token, turns in ((1, 34), (0, 35)):   # both advance onto the last space
        t.hands.move(token, 53)
        status = _wait(t, lambda s: s.mode == "confirm" or s.turns == turns, "the question")
        if status.mode == "confirm":          # patches also end on 53: the table asks
            options = list(status.screen.options)
            t.hands.press("next", options.index("advance") - status.screen.selected)
            t.hands.press("ok")
        _wait(t, lambda s: s.turns == turns or s.mode == "end", "the last moves")
    status = _wait(t, lambda s: s.mode == "end", "the end")
    assert status.screen.kind == "end" and status.saved_to.endswith(".json")
    assert [p.score for p in status.screen.players] == [5, 5]
    assert status.screen.title == "Yellow wins the tie"
    assert status.screen.lines[-1] == "Tie: Yellow got to the last space first."
    saved = parse_record(open(status.saved_to).read())
    assert saved.result == {"scores": [5, 5], "winner": 1}


@pytest.mark.parametrize("table", [(DEMO, 7)], indirect=True)
def test_the_instruction_names_its_colour_and_stays_until_ok(table):
    """Yellow's move leaves "Yellow: take 2 buttons, ..." on Green's turn screen;
    Green choosing with NEXT keeps it; Green's OK replaces it with Green's own."""
    t = table
    t.hands.move(1, 11)                       # yellow advances 9 -> 11
    status = _wait(t, lambda s: s.turns == 8, "the advance")
    said = status.screen.notice
    assert said.startswith("Yellow: take 2 buttons") and status.screen.title == "Green's turn"
    t.hands.press("next", 2)
    status = t.status()
    assert status.screen.notice == said
    assert [c.selected for c in status.screen.patches].count(True) == 1
    t.hands.press("ok")
    status = t.status()
    assert status.screen.notice.startswith("Green") and "Yellow" not in status.screen.notice


def _fresh(tmp_path, seed):
    from firmware_py.service.assembly import start_companion
    from firmware_py.sim.demo import demo_config
    from firmware_py.rules import deal, load_spec
    from firmware_py.sim.hands import Hands
    companion = start_companion(demo_config(fast=True), folder=tmp_path / "journal",
                                deal=lambda game: deal(load_spec(game), seed))
    return companion, Hands(companion, timeout=10)


def test_free_layout_shows_the_chosen_patch_numbered_and_the_dotted_picture_once(tmp_path):
    companion, hands = _fresh(tmp_path, 3)
    try:
        hands.place_tokens([0, 0])
        hands.await_board({0})
        hands.press("ok", 4)                  # Patchwork, 2014 board, two players, Green starts
        hands.press("next")
        hands.press("ok")                     # free layout
        status = hands.wait(lambda s: s.mode == "turn", "the first turn")
        state = status.state
        assert status.screen.notice == "Dotted picture: can't buy it now"   # explained once
        assert not status.screen.patches and "33 left" in status.screen.lines[0]
        hands.press("next", 3)
        status = companion.service.status
        card = status.screen.patches[0]
        patch = state.spec.patches[state.offer[2]]
        assert (card.index, card.total) == (3, 33) and card.id == patch.id
        assert (card.cost, card.time, card.income) == (patch.cost, patch.time, patch.income)
        assert status.screen.notice == "Dotted picture: can't buy it now"   # NEXT keeps it
        hands.press("ok")                     # OK: the explanation is done
        status = companion.service.status
        assert "Dotted" not in status.screen.notice
        hands.press("back")
        hands.press("next")
        hands.press("ok")
        hands.press("ok")
        status = hands.wait(lambda s: s.turns == 1, "the first purchase")
        hands.move(0, status.state.players[0].position)   # OK twice: the token follows
        status = hands.wait(lambda s: s.screen.kind == "turn", "the turn screen")
        assert status.screen.notice.startswith("Green: pay ") and "Dotted" not in status.screen.notice
    finally:
        companion.close()
