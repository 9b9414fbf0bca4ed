"""Buttons under real-world abuse, on gpiozero's MockFactory pins of the running companion.

Contact chatter (several edges within 5 ms) on press and on release is one
press; a hold is one hold; buttons mashed during a prompt while the display is
slow change the game only as the presses intend; and a short tap while the
loop is busy (a slow journal write) stays a tap, never a hold (hold BACK
undoes a turn).
"""
from __future__ import annotations

import random
import threading
import time

from firmware_py.companion.buttons import HOLD, PRESS, Gesture

from test_faults_rig import game_view, wait_until



def record_gestures(service) -> list[Gesture]:
    """Every gesture the loop classifies from now on, in order."""
    ui = service.ui
    seen: list[Gesture] = []
    original = ui.gesture

    def gesture(g):
        seen.append(g)
        original(g)
    service.call(lambda: setattr(ui, "gesture", gesture))
    return seen


def spin(seconds: float) -> None:
    """Busy-wait (sub-millisecond delays that sleep() cannot give)."""
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


class Finger:
    """Presses a button on the mock pin factory, with contact chatter."""

    def __init__(self, companion, rng: random.Random):
        self.factory = companion.parts.pin_factory
        self.pins = companion.parts.buttons.pins
        self.rng = rng
        self.service = companion.service

    def _chatter(self, pin, down: bool) -> float:
        """Bounce 2-4 times within 5 ms, ending ``down`` (pressed = low); returns the spread."""
        start = time.perf_counter()
        levels = [down, not down] * self.rng.randint(2, 4) + [down]
        for level in levels:
            pin.drive_low() if level else pin.drive_high()
            spin(self.rng.uniform(0.0001, 0.0005))
        return time.perf_counter() - start

    def press(self, button: str, hold: float = 0.06) -> float:
        """One press of ``hold`` seconds, chattering on the way down and up; returns how
        long the loop then took to answer (it handles the release, the UI and the frames)."""
        pin = self.factory.pin(self.pins[button])
        spreads = [self._chatter(pin, True)]
        time.sleep(hold)
        spreads.append(self._chatter(pin, False))
        # bursts are made within ~5 ms; a GIL hand-off to the loop thread may stretch one,
        # but never to the 20 ms debounce window, where bounces would be real presses
        assert max(spreads) < 0.015, f"chatter spread {max(spreads) * 1000:.1f} ms"
        time.sleep(0.021)                       # the debounce window closes: the press counts
        began = time.monotonic()
        self.service.call(lambda: None)
        answered = time.monotonic() - began
        time.sleep(0.02)
        return answered


def test_contact_chatter_on_press_and_release_is_one_press(table):
    """Twelve presses, each bouncing 2-4 times going down and going up, are twelve presses."""
    companion = table()
    service = companion.service
    seen = record_gestures(service)
    finger = Finger(companion, random.Random(5))
    for _ in range(12):
        finger.press("next")
    wait_until(lambda: len(seen) >= 12, "twelve presses")
    time.sleep(0.1)
    service.call(lambda: None)
    assert seen == [Gesture("next", PRESS)] * 12
    options = service.call(service.ui.options)
    assert service.call(service.ui.selected) == options[(12 - 1) % len(options)]


def test_a_chattering_hold_is_one_hold(table):
    """A bouncing hold of OK opens the menu once, and its release is no press."""
    companion = table()
    service = companion.service
    seen = record_gestures(service)
    Finger(companion, random.Random(6)).press("ok", hold=0.8)      # hold_seconds is 0.5 here
    wait_until(lambda: service.status.mode == "menu", "the menu")
    time.sleep(0.1)
    service.call(lambda: None)
    assert seen == [Gesture("ok", HOLD)]
    assert service.status.mode == "menu" and service.status.screen.selected == 0


def test_buttons_mashed_during_a_prompt_with_a_slow_display_do_only_what_they_say(table):
    """Yellow stands on 2 where two moves end: "Which move?". The display takes 150 ms a
    frame. OK and BACK mashed on the turn screen before, and NEXT mashed in the prompt, do
    exactly what each press means; the loop answers at once throughout."""
    companion = table(turns=1)
    service = companion.service
    device = companion.parts.oled.device
    real_display = device.display

    def slow_display(image):
        time.sleep(0.15)
        real_display(image)
    device.display = slow_display
    rng = random.Random(8)
    finger = Finger(companion, rng)
    seen = record_gestures(service)
    for button in ["ok", "back", "ok", "back", "back", "ok"]:      # nothing chosen: no change
        finger.press(button)
    assert game_view(service)[0] == 1 and service.status.mode == "turn"
    companion.parts.sim_sensor.command("move", token=1, to=2, style="slide")
    wait_until(lambda: service.status.mode == "confirm", "the question")
    candidates, cursor = service.call(lambda: (list(service.ui.candidates), service.ui.cursor))
    assert len(candidates) == 2
    taps = rng.randint(5, 9)
    answered = [finger.press("next", hold=rng.uniform(0.03, 0.08)) for _ in range(taps)]
    assert service.status.mode == "confirm" and game_view(service)[0] == 1
    finger.press("ok")
    wait_until(lambda: game_view(service)[0] == 2, "the chosen move")
    want = candidates[(cursor + taps) % 2]
    assert game_view(service)[1][-1] == ({"buy": want.patch} if hasattr(want, "patch") else "advance")
    assert seen == [Gesture(b, PRESS) for b in ["ok", "back", "ok", "back", "back", "ok"]] + \
        [Gesture("next", PRESS)] * taps + [Gesture("ok", PRESS)]
    assert max(answered) < 0.05, f"the loop waited {max(answered):.3f} s for the display"


def test_a_short_tap_while_the_loop_is_busy_stays_a_tap(table):
    """A journal write that takes longer than a hold (an SD card stalling in fsync) must
    not turn a quick BACK tap made meanwhile into a hold, which would undo the turn."""
    companion = table()
    service = companion.service
    journal = service.journal
    real_append = journal.append
    writing = threading.Event()

    def slow_append(body):
        writing.set()
        time.sleep(0.9)                                            # hold_seconds is 0.5 here
        return real_append(body)
    journal.append = slow_append
    finger = Finger(companion, random.Random(9))
    seen = record_gestures(service)
    finger.press("next", hold=0.03)
    finger.press("next", hold=0.03)
    finger.press("next", hold=0.03)
    finger.press("next", hold=0.03)                                # advance selected
    finger.press("ok", hold=0.03)                                  # armed
    pin_ok = companion.parts.pin_factory.pin(companion.parts.buttons.pins["ok"])
    pin_back = companion.parts.pin_factory.pin(companion.parts.buttons.pins["back"])
    pin_ok.drive_low()
    time.sleep(0.03)
    pin_ok.drive_high()                                            # OK again: play it
    assert writing.wait(2.0)
    pin_back.drive_low()                                           # a quick BACK tap meanwhile
    time.sleep(0.05)
    pin_back.drive_high()
    wait_until(lambda: len(seen) >= 7, "the tap to be classified", 3.0)
    time.sleep(0.1)
    service.call(lambda: None)
    assert seen[-2:] == [Gesture("ok", PRESS), Gesture("back", PRESS)]
    assert game_view(service)[:2] == (1, ["advance"])             # the turn stands
