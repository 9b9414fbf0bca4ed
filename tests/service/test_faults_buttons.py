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
    table = service.table
    seen: list[Gesture] = []
    original = table.gesture

    def gesture(g, *args, **kwargs):
        seen.append(g)
        return original(g, *args, **kwargs)
    service.call(lambda: setattr(table, "gesture", gesture))
    return seen


class Finger:
    """Presses a button on the running companion's mock pin factory (clean edges: contact
    chatter is tried on a stepping clock, :class:`SteppedFinger`, where a loaded machine
    cannot stretch a burst)."""

    def __init__(self, companion, rng: random.Random):
        self.factory = companion.parts.pin_factory
        self.pins = companion.parts.buttons.pins
        self.rng = rng
        self.service = companion.service

    def press(self, button: str, hold: float = 0.06) -> None:
        """One press of ``hold`` seconds, then a pause past the debounce window; then
        the loop must answer a call (it is not waiting on anything)."""
        pin = self.factory.pin(self.pins[button])
        pin.drive_low()
        time.sleep(hold)
        pin.drive_high()
        time.sleep(0.03)
        self.service.call(lambda: None, timeout=10.0)


class SteppedFinger:
    """Presses gpiozero MockFactory pins wired to a real ``ButtonPanel`` of a service on
    a stepping clock (:class:`firmware_py.sim.people.Table`): every edge carries the
    clock's time, and time moves only when the finger waits, so the bounces of a burst
    are 0.1-0.5 ms apart however loaded the machine is."""

    def __init__(self, tmp_path, rng: random.Random):
        from gpiozero.pins.mock import MockFactory

        from firmware_py.hw.parts import ButtonPanel
        from firmware_py.sim.people import Table
        self.table = Table(tmp_path, "patchwork", 1)
        self.rng = rng
        self.factory = MockFactory()
        buttons = self.table.cfg["buttons"]
        self.pins = {name: buttons[name] for name in ("next", "ok", "back")}
        self.panel = ButtonPanel(self.pins, self.table.service.post, self.table.clock,
                                 pin_factory=self.factory)
        self.seen: list[Gesture] = []
        table = self.table.service.table
        original = table.gesture
        table.gesture = lambda g, *args, **kwargs: (self.seen.append(g), original(g, *args, **kwargs))[1]

    def _chatter(self, pin, down: bool) -> None:
        """Bounce 2-4 times within 3 ms of clock time, ending ``down`` (pressed = low)."""
        for level in [down, not down] * self.rng.randint(2, 4) + [down]:
            pin.drive_low() if level else pin.drive_high()
            self.table.wait(self.rng.uniform(0.0001, 0.0005))

    def press(self, button: str, hold: float = 0.06) -> None:
        """One press of ``hold`` seconds, chattering on the way down and up, then a pause
        longer than the debounce window."""
        pin = self.factory.pin(self.pins[button])
        self._chatter(pin, True)
        self.table.wait(hold)
        self._chatter(pin, False)
        self.table.wait(0.05)

    def close(self) -> None:
        self.panel.close()
        self.factory.close()


def test_contact_chatter_on_press_and_release_is_one_press(tmp_path):
    """Twelve presses, each bouncing 2-4 times going down and going up, are twelve presses."""
    finger = SteppedFinger(tmp_path, random.Random(5))
    try:
        screen = finger.table.screen                    # the setup's first question
        for _ in range(12):
            finger.press("next")
        assert finger.seen == [Gesture("next", PRESS)] * 12
        assert finger.table.screen.title == screen.title
        assert finger.table.screen.selected == 12 % len(screen.options)
    finally:
        finger.close()


def test_a_chattering_hold_is_one_hold(tmp_path):
    """A bouncing hold of OK is one hold, and its release is no press."""
    finger = SteppedFinger(tmp_path, random.Random(6))
    try:
        hold = finger.table.cfg["buttons"]["hold_seconds"]
        finger.press("ok", hold=hold + 0.3)
        assert finger.seen == [Gesture("ok", HOLD)]
    finally:
        finger.close()


def test_buttons_mashed_during_a_prompt_with_a_slow_display_do_only_what_they_say(table):
    """Yellow stands on 2 where two moves end: "Which move?". The display hangs. OK and
    BACK mashed on the turn screen before, and NEXT mashed in the prompt, do exactly what
    each press means; the loop answers between the presses all the while."""
    companion = table(turns=1)
    service = companion.service
    device = companion.parts.oled.device
    real_display = device.display
    stuck = threading.Event()

    def stuck_display(image):
        stuck.wait(30)                       # the display hangs until the test is done
        real_display(image)
    device.display = stuck_display
    rng = random.Random(8)
    finger = Finger(companion, rng)          # each press: the loop answers meanwhile
    seen = record_gestures(service)
    try:
        for button in ["ok", "back", "ok", "back", "back", "ok"]:  # nothing chosen: no change
            finger.press(button)
        assert game_view(service)[0] == 1 and service.status.mode == "turn"
        companion.parts.sim_sensor.command("move", token=1, to=2, style="slide")
        wait_until(lambda: service.status.mode == "confirm", "the question")
        candidates, cursor = service.call(lambda: (list(service.view.candidates),
                                                   service.view.cursor))
        assert len(candidates) == 2
        taps = rng.randint(5, 9)
        for _ in range(taps):
            finger.press("next", hold=rng.uniform(0.03, 0.08))
        assert service.status.mode == "confirm" and game_view(service)[0] == 1
        finger.press("ok")
        wait_until(lambda: game_view(service)[0] == 2, "the chosen move")
    finally:
        stuck.set()
    want = candidates[(cursor + taps) % 2]
    assert game_view(service)[1][-1] == ({"buy": want.patch} if hasattr(want, "patch") else "advance")
    assert seen == [Gesture(b, PRESS) for b in ["ok", "back", "ok", "back", "back", "ok"]] + \
        [Gesture("next", PRESS)] * taps + [Gesture("ok", PRESS)]


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
