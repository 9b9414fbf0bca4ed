"""Instant token feedback and cheap animation on the LED strip.

A token the sensor sees where the game does not have it yet is lit at once
(the light follows the hand), while the move is taken only once the reading is
stable. Animation frames are computed once per slot of the cycle and the
output thread is woken only when the frame changes.
"""
from __future__ import annotations

import math
import os

import pytest
from test_faults_rig import wait_until

from firmware_py.companion import intents
from firmware_py.companion.model import GREEN, YELLOW, Lights
from firmware_py.hw.backends import Parts, _pixels
from firmware_py.hw.parts import LedStrip
from firmware_py.hw.sensor_link import SensorOccupancy
from firmware_py.view.leds import (CYCLE, DIP_SECONDS, INCOME_RGB, OFF, PULSE_FPS, RED, TOKEN_RGB, WHITE, Hand,
                                   LedFrames, LedLayout, hand_of, led_frame)

STRAIGHT = LedLayout.parse("0-53", 54, 53)
G_RGB, Y_RGB = TOKEN_RGB[GREEN], TOKEN_RGB[YELLOW]


def lights(**kw) -> Lights:
    """Green (active) on 3 and yellow on 10, income on 5."""
    base = dict(last_space=53, tokens=((GREEN, 3), (YELLOW, 10)), active=GREEN,
                income=frozenset({5}))
    base.update(kw)
    return Lights(**base)


# --- which token is in the hand ----------------------------------------------

def test_hand_of_names_the_token_that_left_and_where_it_is_seen():
    game = lights()
    assert hand_of(game, None) is None
    assert hand_of(game, frozenset({3, 10})) is None                 # the board as the game
    assert hand_of(game, frozenset({10})) is None                    # lifted: nowhere to light
    assert hand_of(game, frozenset({4, 10})) == Hand(GREEN, frozenset({4}))
    assert hand_of(game, frozenset({5, 6, 10})) == Hand(GREEN, frozenset({5, 6}))   # straddling
    assert hand_of(game, frozenset({3, 11})) == Hand(YELLOW, frozenset({11}))       # the other one
    shared = lights(tokens=((GREEN, 7), (YELLOW, 7)), active=YELLOW)
    assert hand_of(shared, frozenset({7, 9})) == Hand(YELLOW, frozenset({9}))      # off a shared space
    assert hand_of(lights(tokens=()), frozenset({4})) is None                      # no game yet
    assert hand_of(lights(active=""), frozenset({3, 10, 20})) is None              # none moved


def test_the_token_in_the_hand_is_lit_steady_where_it_is_seen_and_not_where_it_stood():
    game = lights(targets=frozenset({6}))
    hand = Hand(GREEN, frozenset({6}))
    for now in (0.0, 0.5, 1.2):                                      # no pulse: steady
        frame = led_frame(game, now, STRAIGHT, hand)
        assert frame[6] == G_RGB                                     # over the white target
        assert frame[3] == OFF and frame[10] == Y_RGB
    assert led_frame(game, 0.5, STRAIGHT, Hand(GREEN, frozenset({5})))[5] == G_RGB  # over income
    assert led_frame(game, 0.5, STRAIGHT)[5] == INCOME_RGB
    wrong = led_frame(lights(wrong=frozenset({6})), 0.3, STRAIGHT, hand)
    assert wrong[6] == RED                                           # guidance stays on top


# --- frames computed once, drawn only when they change -------------------------

@pytest.mark.parametrize("kw", [dict(), dict(expected=frozenset({8}), wrong=frozenset({9})),
                                dict(tokens=((GREEN, 4), (YELLOW, 4))),
                                dict(celebrate=YELLOW, active="")])
def test_frames_are_the_frames_of_their_slot_and_reused_every_cycle(kw):
    game = lights(**kw)
    frames = LedFrames(game, STRAIGHT, fps=20)
    rate = frames.rate
    assert rate == (20 if game.celebrate else PULSE_FPS)
    for slot in range(int(3 * CYCLE * rate)):
        now = (slot + 0.5) / rate + 1000 * CYCLE
        assert frames.render(now) == led_frame(game, math.floor(now * rate) / rate, STRAIGHT)
    assert frames.render(0.3) is frames.render(0.3 + CYCLE)          # computed once


@pytest.mark.parametrize("kw", [dict(), dict(expected=frozenset({8})),
                                dict(tokens=((GREEN, 4), (YELLOW, 4)), active=YELLOW),
                                dict(celebrate=GREEN)])
def test_next_at_wakes_only_for_a_changed_frame_and_misses_none(kw):
    """Stepping slot by slot: every change of frame is at a time next_at gave, and
    next_at gives no time at which the frame stays the same."""
    frames = LedFrames(lights(**kw), STRAIGHT, fps=20)
    base, rate = 500 * CYCLE, frames.rate
    slots = int(2 * CYCLE * rate)
    now, wakes = base + 0.01, []
    while now < base + 2 * CYCLE:
        due = frames.next_at(now)
        assert due is not None and due > now
        assert frames.render(due) != frames.render(now)
        wakes.append(due)
        now = due
    woken = {math.floor((w - base) * rate) for w in wakes if w < base + 2 * CYCLE}
    changes = {s for s in range(1, slots)
               if frames.render(base + s / rate + 1e-6) != frames.render(base + (s - 1) / rate + 1e-6)}
    assert woken == changes and changes
    if not kw.get("celebrate"):
        assert len(changes) < slots - 1                              # fewer wakes than slots


def test_still_lights_need_no_frame_after_the_first():
    frames = LedFrames(lights(active="", targets=frozenset({9})), STRAIGHT, fps=20)
    assert frames.next_at(12.3) is None
    assert frames.render(0.0) is frames.render(17.7)
    pulsing = LedFrames(lights(), STRAIGHT, Hand(GREEN, frozenset({4})), fps=20)
    assert pulsing.next_at(3.0) is None                              # the pulsing token is in the hand


def test_the_pulse_draws_at_most_pulse_fps_frames_a_second_and_rests():
    """The active token's pulse over a cycle: at most PULSE_FPS frames a second, and
    no frame at all while it rests."""
    frames = LedFrames(lights(), STRAIGHT, fps=60)
    now, wakes = 100 * CYCLE, []
    while now < 100 * CYCLE + CYCLE:
        now = frames.next_at(now)
        wakes.append(now - 100 * CYCLE)
    assert len(wakes) <= PULSE_FPS * CYCLE
    assert not [w for w in wakes if DIP_SECONDS + 1e-3 < w < CYCLE - 1e-3]


# --- the service: the light follows a slide, the move waits for a stable reading ---

@pytest.fixture
def strip_service(tmp_path):
    """A service on a stepped clock with a real LED strip (neopixel on Blinka's
    OS-agnostic board); yields (service, clock, driver, frames seen by the strip)."""
    from test_faults_rig import GOLDEN_RECORDS, StepClock, TableDriver, fast_config
    from firmware_py.service.loop import Service
    os.environ.setdefault("BLINKA_FORCEBOARD", "OS_AGNOSTIC_BOARD")
    os.environ.setdefault("BLINKA_FORCECHIP", "OS_AGNOSTIC")
    record = GOLDEN_RECORDS[0]
    cfg = fast_config()
    frames: list = []
    strip = LedStrip(_pixels(cfg, True), on_frame=frames.append)
    clock = StepClock()
    service = Service(cfg, Parts(strip=strip), tmp_path / "journal", clock=clock,
                      deal=lambda game: (record.circle, record.blue or ())).start()
    driver = TableDriver(service, clock, record)
    try:
        yield service, clock, driver, frames
    finally:
        service.stop()
        strip.close()


def test_the_light_follows_a_slide_before_the_move_is_taken(strip_service):
    service, clock, driver, frames = strip_service
    driver.play(stop_when=lambda v: v.mode == "turn")
    state = service.call(lambda: service.view.state)
    mover, other = state.to_move, 1 - state.to_move
    colour = service.call(lambda: service.view.session.setup.colours[mover])
    home, there = state.players[mover].position, state.players[other].position
    driver.reading({home, there}, driver.stable_s + 0.05)             # the board as the game
    target = max(intents.target_of(state, a) for a in intents.turn_options(state))
    path = [s for s in range(home + 1, target + 1) if s != there]
    assert len(path) >= 2
    groups = driver.view().groups
    last = None
    for space in path:                                              # each reading shorter than
        seen = len(frames)                                          # the stable window
        driver.reading({there, space}, driver.stable_s / 4)
        assert service.parts.strip.flush()
        first = frames[seen]                                        # the first frame after it
        assert first[space] == TOKEN_RGB[colour]
        if home != there:
            assert first[home] != TOKEN_RGB[colour]                 # gone from where it stood
        if last is not None:
            assert first[last] != TOKEN_RGB[colour]                 # and from the last space
        last = space
        now = driver.view()
        assert (now.groups, now.mode) == (groups, "turn")           # no move taken yet
    driver.later(driver.stable_s + 0.01)                            # now the reading is stable
    now = driver.view()
    assert now.groups == groups + 1 or now.mode == "confirm"


def test_a_heartbeat_repeating_the_board_changes_nothing(strip_service, monkeypatch):
    """The sensor's once-a-second snapshot of an unchanged board is not a change:
    the screen and the lights are not even rebuilt, nothing new goes to the strip."""
    import time
    from firmware_py.service import loop as service_module
    service, clock, driver, frames = strip_service
    driver.play(stop_when=lambda v: v.mode == "turn")
    state = service.call(lambda: service.view.state)
    board = {p.position for p in state.players}
    driver.reading(board, driver.stable_s + 0.05)
    assert service.parts.strip.flush()
    builds = [0]
    real = service_module.build_screen

    def counting(*args):
        builds[0] += 1
        return real(*args)
    monkeypatch.setattr(service_module, "build_screen", counting)
    submitted = []
    monkeypatch.setattr(service.parts.strip, "submit", lambda *a, **k: submitted.append(a))
    before = service.call(lambda: builds[0])
    for beat in range(5):                        # each beat handled in a loop turn of its own
        service.post(SensorOccupancy(frozenset(board), 100 + beat, True, clock()))
        wait_until(service.queue.empty, "the loop to take the beat")
        time.sleep(0.02)
    after = service.call(lambda: builds[0])
    assert after - before == 1                   # only the first call's own refresh
    assert submitted == []                       # no new lights for the strip


def test_the_loop_sleeps_until_an_event_when_nothing_is_due(strip_service):
    service, clock, driver, frames = strip_service
    driver.play(stop_when=lambda v: v.mode == "turn")
    state = service.call(lambda: service.view.state)
    driver.reading({p.position for p in state.players}, 0.0)
    driver.later(5.0)                                                 # past every deadline
    assert service.parts.strip.flush()
    assert service.call(lambda: service._timeout(clock())) is None

