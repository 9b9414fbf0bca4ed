"""The OLED and the LED strip failing: raising or hanging, at start or at a frame.

Faults are injected where the real drivers touch the hardware: the luma
``noop`` serial interface under the real ssd1306 device (an I2C error is
``OSError(121)``, a stuck bus never returns), and ``neopixel_write`` under the
real ``neopixel.NeoPixel`` (or its constructor, as when the PWM/DMA set-up
fails). Whatever fails, the game loop keeps running, the LEDs keep being
sent before the OLED, and the OLED (or the log) says which part failed.
"""
from __future__ import annotations

import errno
import sys
import threading
import time

import pytest
from luma.core.interface.serial import noop

from firmware_py.hw import backends, parts

from test_faults_rig import GOLDEN_RECORDS, game_view, start_table, wait_until

RECORD = GOLDEN_RECORDS[0]


class Gate:
    """A hanging driver call: blocks until :meth:`release` (called at the end of a test)."""

    def __init__(self):
        self.event = threading.Event()
        self.entered = threading.Event()

    def hang(self, *args, **kwargs):
        """Block (as a stuck bus does) until released; notes that it was entered."""
        self.entered.set()
        self.event.wait(30)

    def release(self):
        """Let every hung call return."""
        self.event.set()


@pytest.fixture
def table(tmp_path, monkeypatch):
    """Start the companion (frames counted); closes it, releasing any hung driver first."""
    monkeypatch.setattr(parts, "HANG_SECONDS", 0.6)
    monkeypatch.setattr(backends, "START_SECONDS", 0.8)
    made = []

    def start(**kwargs):
        frames = {"led": 0, "oled": 0}
        companion = start_table(tmp_path, RECORD, on_led_frame=lambda f: _count(frames, "led"),
                                on_oled_frame=lambda i: _count(frames, "oled"), **kwargs)
        made.append(companion)
        return companion, frames
    yield start
    for gate in Gate.instances:
        gate.release()
    Gate.instances.clear()
    for companion in made:
        companion.close()


Gate.instances = []


def gate() -> Gate:
    """A new :class:`Gate`, released when the test ends."""
    g = Gate()
    Gate.instances.append(g)
    return g


def _count(frames: dict, kind: str) -> None:
    frames[kind] += 1


def warning(companion) -> str:
    """The warning line of the OLED screen now."""
    return companion.service.status.screen.warning


def still_plays(companion) -> None:
    """The loop answers and a button still changes the game (NEXT chooses a patch)."""
    from firmware_py.sim.hands import Hands
    service = companion.service
    before = service.call(lambda: service.view.selected())
    Hands(companion, press_s=0.03).press("next")
    assert service.call(lambda: service.view.selected()) != before
    wait_until(lambda: "sensor" not in warning(companion), "the sensor online")
    assert game_view(service)[2] == "turn"


def i2c_error(*args, **kwargs):
    """What a luma I2C write raises when the display does not answer."""
    raise OSError(errno.EREMOTEIO, "Remote I/O error")


# --------------------------------------------------------------------- at start
def test_an_oled_that_raises_at_start_is_left_out_and_the_game_goes_on(table, monkeypatch):
    """An OLED raising OSError(121) at start: shows nothing, said, the game and the LEDs go on."""
    monkeypatch.setattr(noop, "command", i2c_error, raising=False)
    companion, frames = table()
    assert companion.parts.oled.device is None and companion.parts.oled.failed
    assert any(p.startswith("OLED failed to start: [Errno 121]") for p in companion.service.problems)
    assert "OLED failed to start" in warning(companion)
    still_plays(companion)
    assert frames["led"] > 0 and frames["oled"] == 0


def test_an_oled_absent_at_start_is_tried_again_and_shows_the_game_once_it_answers(
        table, monkeypatch):
    """Plugged in after the start (or its I2C wire fixed): it is retried like a part that
    failed later, the game appears on it, and its warning goes, without a restart."""
    monkeypatch.setattr(noop, "command", i2c_error, raising=False)
    companion, frames = table()
    oled = companion.parts.oled
    wait_until(lambda: oled.writes_failed >= 2, "the absent OLED tried again")
    assert frames["oled"] == 0
    monkeypatch.undo()                                       # the OLED answers now
    wait_until(lambda: frames["oled"] > 0, "a frame on the OLED that came late")
    assert oled.device is not None and not oled.failed
    wait_until(lambda: "OLED" not in warning(companion), "the OLED warning gone")
    still_plays(companion)


def test_an_oled_that_hangs_at_start_is_left_out_after_a_bounded_wait(table, monkeypatch):
    """An OLED hanging at start: left out after START_SECONDS, the service starts anyway."""
    stuck = gate()
    monkeypatch.setattr(noop, "command", stuck.hang, raising=False)
    began = time.monotonic()
    companion, frames = table()
    assert time.monotonic() - began < 5
    assert companion.parts.oled.device is None and stuck.entered.is_set()
    assert any("OLED failed to start: no answer within" in p for p in companion.service.problems)
    assert "OLED failed to start" in warning(companion)
    still_plays(companion)


@pytest.mark.parametrize("how", ["raises", "hangs"])
def test_an_led_strip_that_fails_at_start_is_left_out_and_the_oled_says_so(table, monkeypatch, how):
    """A strip whose constructor raises or hangs: left out, the OLED says so, the game goes on."""
    import os
    os.environ.setdefault("BLINKA_FORCEBOARD", "OS_AGNOSTIC_BOARD")
    os.environ.setdefault("BLINKA_FORCECHIP", "OS_AGNOSTIC")
    import neopixel
    stuck = gate()

    class BrokenPixels(neopixel.NeoPixel):
        def __init__(self, *args, **kwargs):
            if how == "raises":
                raise RuntimeError("ws2811_init failed with code -5 (mmap() failed)")
            stuck.hang()
    monkeypatch.setattr(neopixel, "NeoPixel", BrokenPixels)
    companion, frames = table()
    assert companion.parts.strip is None
    assert "LED strip failed to start" in warning(companion)
    still_plays(companion)
    assert frames["oled"] > 0


# --------------------------------------------------------------------- at a frame
def test_an_oled_that_raises_at_a_frame_is_reported_and_the_leds_go_on(table, monkeypatch):
    """An I2C error at a frame: the OLED is marked failed, the LEDs keep animating."""
    companion, frames = table()
    monkeypatch.setattr(noop, "data", i2c_error, raising=False)
    still_plays(companion)                                   # the next screen fails to go out
    wait_until(lambda: "OLED failed" in warning(companion), "the OLED failure said")
    assert "OSError" not in warning(companion)               # the exception is in the log
    led = frames["led"]
    wait_until(lambda: frames["led"] > led + 3, "LED frames still flowing (the pulse)")
    still_plays(companion)


def test_an_led_strip_that_raises_at_a_frame_is_reported_on_the_oled(table, monkeypatch):
    """A strip error at a frame: the OLED says which part failed, screens keep coming."""
    companion, frames = table()
    neopixel = sys.modules["neopixel"]
    monkeypatch.setattr(neopixel, "neopixel_write", i2c_error)
    wait_until(lambda: "LED strip failed" in warning(companion), "the strip failure said")
    assert "OSError" not in warning(companion)               # the exception is in the log
    oled = frames["oled"]
    still_plays(companion)
    wait_until(lambda: frames["oled"] > oled, "OLED frames still going out")


@pytest.mark.parametrize("part", ["OLED", "LED strip"])
def test_a_driver_that_hangs_at_a_frame_never_stops_the_loop(table, monkeypatch, part):
    """A driver call that never returns: the loop answers throughout, the part is reported hung."""
    companion, frames = table()
    stuck = gate()
    if part == "OLED":
        monkeypatch.setattr(noop, "data", stuck.hang, raising=False)
        still_plays(companion)                               # a new screen: the call hangs
    else:
        monkeypatch.setattr(sys.modules["neopixel"], "neopixel_write", stuck.hang)
    assert stuck.entered.wait(3)
    hung_at = time.monotonic()
    still_plays(companion)                                   # the loop answers meanwhile
    wait_until(lambda: f"{part} failed: no answer for 0.6 s" in warning(companion),
               f"the hung {part} reported", 3.0)
    assert time.monotonic() - hung_at < 2.0
    still_plays(companion)
    if part == "OLED":
        led = frames["led"]
        wait_until(lambda: frames["led"] > led + 3, "LED frames still flowing")


def test_the_led_frame_of_a_change_goes_out_before_its_oled_frame(table, monkeypatch):
    """Even with a strip slower than the OLED, each change reaches the LEDs first."""
    companion, _ = table()
    order: list[str] = []
    neopixel = sys.modules["neopixel"]
    real_write = neopixel.neopixel_write

    def led_write(pin, buf):
        time.sleep(0.01)                                     # a strip slower than the OLED
        order.append("led")
        real_write(pin, buf)
    monkeypatch.setattr(neopixel, "neopixel_write", led_write)
    monkeypatch.setattr(noop, "data", lambda *a, **k: order.append("oled"), raising=False)
    from firmware_py.sim.hands import Hands
    hands = Hands(companion, press_s=0.03)
    checked = 0
    for _ in range(8):                                       # NEXT: a new card, often a new target
        before = companion.service.status.lights.targets
        order.clear()
        hands.press("next")
        wait_until(lambda: "oled" in order, "the OLED frame")
        if companion.service.status.lights.targets != before:
            assert "led" in order[:order.index("oled")], order
            checked += 1
    assert checked >= 4


def test_the_published_status_follows_a_change_of_screen_and_lights_at_once(tmp_path):
    """A press that changes both the OLED and the LEDs is in ``service.status`` as soon as
    the loop has handled it, with no later event or timer needed to publish it."""
    from test_faults_rig import StepClock, TableDriver, service_for
    clock = StepClock()
    service = service_for(tmp_path / "journal", RECORD, clock)
    try:
        driver = TableDriver(service, clock, RECORD)
        driver.play(stop_when=lambda v: v.mode == "turn")
        driver.press("next")                                 # buy 27: too dear, nothing lit
        driver.edge("next", True)                            # then buy 23: card and target 5;
        clock.advance(0.03)                                  # only the edges, nothing after
        driver.edge("next", False)                           # them that could publish again
        wait_until(lambda: service.status.lights.targets == {5}, "the status to show it", 2.0)
        assert [c.selected for c in service.status.screen.patches] == [False, True, False]
    finally:
        service.stop()
