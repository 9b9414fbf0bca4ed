"""Hands at the table, through the running companion and the simulated sensor process.

A quick slide over five spaces is one move; a token lifted and set back is no
move; the opponent's token knocked off and put back changes nothing; both
tokens moved at once get guidance and no move. ``service.status`` is what the
players see; the turns accepted come from the loop itself.
"""
from __future__ import annotations

import time

import pytest

from firmware_py.sim.hands import Hands

from test_faults_rig import board_seen, fast_config, game_view, wait_until

# the first turn: both tokens on 0, green to move: advance ends on 1, buy 29 on 2, buy 23 on 5.
# after it (turns=1): green on 1, yellow on 0 to move: space 2 (buy 29 or advance), 5 (buy 23).


def modes_while(companion, action, settle: float) -> set[str]:
    """Run ``action`` and collect every UI mode published until ``settle`` s after it."""
    service = companion.service
    seen = {service.status.mode}
    action()
    deadline = time.monotonic() + settle
    while time.monotonic() < deadline:
        seen.add(service.status.mode)
        time.sleep(0.003)
    return seen


def test_a_quick_slide_across_five_spaces_is_one_move(table):
    """Buy 23 chosen, then the token slid 0 -> 5 quickly: one buy, never the advance it passed."""
    companion = table()
    service, hands = companion.service, Hands(companion)
    hands.press("next", 2)                                  # the second patch: buy 23, time 5
    hands.press("ok")
    assert 5 in service.status.lights.targets               # its end space lit
    seen = modes_while(companion, lambda: hands.move(0, 5, "slide"), 0.3)
    wait_until(lambda: game_view(service)[0] == 1, "the buy")
    assert game_view(service)[1] == [{"buy": 23}]           # never the advance it slid over
    assert "confirm" not in seen
    board_seen(companion, {0, 5})
    assert game_view(service)[0] == 1


def test_a_quick_slide_without_choosing_first_asks_and_makes_one_move(table):
    """Slid to 5 without choosing: the companion asks, OK makes the one move."""
    companion = table()
    service, hands = companion.service, Hands(companion)
    hands.move(0, 5, "slide")
    wait_until(lambda: service.status.mode == "confirm", "the question about the buy")
    assert game_view(service)[0] == 0
    hands.press("ok")
    wait_until(lambda: game_view(service)[0] == 1, "the confirmed buy")
    assert game_view(service)[1] == [{"buy": 23}]


@pytest.mark.parametrize("air_time", [0.1, 1.4], ids=["briefly", "past-guidance"])
def test_a_token_lifted_and_put_back_is_no_move(table, air_time):
    """Yellow lifted (briefly, or past the guidance delay) and set back: no move."""
    companion = table(turns=1)
    service = companion.service
    sim = companion.parts.sim_sensor
    sim.command("lift", token=1)                            # yellow, to move, in the air
    sim.sync()
    board_seen(companion, {1})
    if air_time > 1:
        wait_until(lambda: service.status.screen.kind == "mismatch", "guidance", 3.0)
        assert "Put Yellow on 0." in service.status.screen.lines
        assert 0 in service.status.lights.expected
    else:
        time.sleep(air_time)
        assert 0 in service.status.lights.expected          # its space blinks white
    sim.command("place", token=1, space=0)
    sim.sync()
    board_seen(companion, {0, 1})
    wait_until(lambda: service.status.screen.kind == "turn", "the turn screen back")
    assert game_view(service)[0] == 1 and not service.status.lights.expected


@pytest.mark.parametrize("where", [3, None], ids=["onto-another-space", "off-the-board"])
def test_the_opponents_token_knocked_off_and_put_back_changes_nothing(table, where):
    """Green (not to move) knocked to 3 or off the board: guidance, then nothing changed."""
    companion = table(turns=1)
    service = companion.service
    sim = companion.parts.sim_sensor
    if where is None:
        sim.command("lift", token=0)                        # green (not to move) knocked away
    else:
        sim.command("move", token=0, to=where, style="slide")
    sim.sync()
    wait_until(lambda: service.status.screen.kind == "mismatch", "guidance", 3.0)
    lines = service.status.screen.lines
    assert "Green's token belongs" in lines and "on 1: put it there." in lines
    assert 1 in service.status.lights.expected
    if where is not None:
        assert where in service.status.lights.wrong and f"Nothing belongs on {where}." in lines
    assert game_view(service)[0] == 1
    sim.command("place", token=0, space=1)
    sim.sync()
    board_seen(companion, {0, 1})
    wait_until(lambda: service.status.screen.kind == "turn", "the turn screen back")
    assert game_view(service)[0] == 1 and game_view(service)[1] == ["advance"]


def test_both_tokens_moved_at_once_get_guidance_and_no_move(table, tmp_path):
    """Both tokens moved within one stable time, in no order two legal moves could make
    (green's 12 is no space it could reach after yellow's 2): guidance about both, no move,
    no question."""
    companion = table(turns=1, cfg=fast_config(
        sensor={"stable_ms": 300},                          # both hands within one stable time
        sim={"sensor_link": str(tmp_path / "sensor-a"), "speed": 4.0}))
    service = companion.service
    sim = companion.parts.sim_sensor

    def both():
        sim.command("place", token=1, space=2)              # yellow onto a legal target...
        sim.command("place", token=0, space=12)             # ...while green moves too
        sim.sync()
    seen = modes_while(companion, both, 0.5)
    wait_until(lambda: service.status.screen.kind == "mismatch", "guidance", 3.0)
    lights = service.status.lights
    assert lights.expected == {0, 1} and lights.wrong == {2, 12}
    assert "confirm" not in seen and game_view(service)[0] == 1
    sim.command("place", token=0, space=1)
    sim.command("place", token=1, space=0)
    sim.sync()
    board_seen(companion, {0, 1})
    wait_until(lambda: service.status.screen.kind == "turn", "the turn screen back")
    assert game_view(service)[0] == 1
