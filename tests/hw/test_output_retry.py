"""Transient output errors: the LED strip and the OLED retry with back-off.

The real drivers are used (``neopixel.NeoPixel`` on Blinka's OS-agnostic
board, a luma ``ssd1306`` device); failures are injected at the driver's
boundary with the hardware: ``neopixel_write`` (the strip's data line) and the
luma serial interface's ``data`` (the I2C bus). One OSError must not disable a
part; a recovered part shows the newest frame within 2 s; only a part that
keeps failing is reported failed, and its warning goes when it writes again.
"""
from __future__ import annotations

import errno
import os
import sys
import threading
import time

import pytest
from luma.core.interface.serial import noop
from luma.oled.device import ssd1306
from PIL import Image, ImageDraw

from firmware_py.hw import parts
from firmware_py.hw.parts import Animation, LedStrip, Oled
from firmware_py.sim.hands import Hands

from test_faults_rig import GOLDEN_RECORDS, start_table, wait_until


class Faults:
    """Fail the next ``count`` calls (or every call until :meth:`heal`), then pass
    them to ``real``; keeps what went through and when each call came."""

    def __init__(self, real=None):
        self.real = real
        self.lock = threading.Lock()
        self.left = 0
        self.forever = False
        self.failed_at: list[float] = []
        self.passed: list[tuple[float, object]] = []

    def fail(self, count: int = 1, forever: bool = False) -> None:
        with self.lock:
            self.left, self.forever = count, forever

    def heal(self) -> None:
        with self.lock:
            self.left, self.forever = 0, False

    def __call__(self, *args):
        with self.lock:
            failing = self.forever or self.left > 0
            if failing:
                self.left -= 1
                self.failed_at.append(time.monotonic())
        if failing:
            raise OSError(errno.EREMOTEIO, "Remote I/O error")
        self.passed.append((time.monotonic(), bytes(args[-1]) if args else None))
        if self.real is not None:
            return self.real(*args)
        return None


@pytest.fixture
def pixels(monkeypatch):
    os.environ.setdefault("BLINKA_FORCEBOARD", "OS_AGNOSTIC_BOARD")
    os.environ.setdefault("BLINKA_FORCECHIP", "OS_AGNOSTIC")
    import board
    import neopixel
    faults = Faults(neopixel.neopixel_write)
    monkeypatch.setattr(neopixel, "neopixel_write", faults)
    strip = neopixel.NeoPixel(board.NEOPIXEL, 8, brightness=1.0, auto_write=False,
                              pixel_order=neopixel.RGB)
    return strip, faults


def _bus(faults: Faults):
    """A luma serial interface (luma's own ``noop``) whose data writes go through ``faults``."""
    class Bus(noop):
        def data(self, data):
            faults(data)
    return Bus()


def _image(text: str):
    image = Image.new("1", (128, 64))
    ImageDraw.Draw(image).text((4, 20), text, fill=1)
    return image


def _bytes_of(image) -> bytes:
    """What a healthy ssd1306 sends over the bus for ``image`` (its last data write)."""
    seen = Faults()
    ssd1306(_bus(seen), width=128, height=64).display(image)
    return seen.passed[-1][1]


def _frame(colour) -> list:
    return [colour] * 8


def _rgb(buffer: bytes) -> tuple:
    return tuple(buffer[:3])


# ------------------------------------------------------------------ the strip
def test_one_failed_led_write_is_retried_and_the_newest_frame_goes_out(pixels):
    strip_pixels, faults = pixels
    strip = LedStrip(strip_pixels)
    told = []
    strip.on_failure = lambda part: told.append(part.failed)
    try:
        strip.submit(_frame((1, 2, 3)))
        assert strip.flush(2)
        faults.fail(1)
        strip.submit(_frame((9, 9, 9)))            # this write fails
        wait_until(lambda: faults.failed_at, "the failed write")
        strip.submit(_frame((40, 50, 60)))         # newer, during the back-off
        wait_until(lambda: _rgb(faults.passed[-1][1]) == (40, 50, 60), "the newest frame", 2.0)
        assert faults.passed[-1][0] - faults.failed_at[-1] < 2.0
        assert strip.failed == "" and strip.writes_failed == 1 and told == []   # never reported
    finally:
        strip.close()


def test_a_recovered_strip_shows_the_current_animation_frame(pixels):
    strip_pixels, faults = pixels
    strip = LedStrip(strip_pixels)
    start = time.monotonic()

    def render(now):
        return _frame((int((now - start) * 10) % 200 + 1, 0, 0))   # changes every 0.1 s
    try:
        faults.fail(3)
        strip.submit(Animation(render, lambda now: now + 0.05))
        wait_until(lambda: len(faults.failed_at) == 3, "three failed writes")
        wait_until(lambda: faults.passed and faults.passed[-1][0] > faults.failed_at[-1],
                   "a write after the failures", 2.0)
        when, buffer = faults.passed[-1]
        assert abs(_rgb(buffer)[0] - render(when)[0][0]) <= 1     # the frame of that moment
        assert strip.failed == ""
    finally:
        strip.close()


def test_a_strip_that_keeps_failing_is_reported_then_comes_back(pixels):
    strip_pixels, faults = pixels
    strip = LedStrip(strip_pixels)
    told = []
    strip.on_failure = lambda part: told.append(part.failed)
    try:
        faults.fail(forever=True)
        began = time.monotonic()
        strip.submit(_frame((5, 5, 5)))
        wait_until(lambda: strip.failed, "the strip reported failed", 5.0)
        assert time.monotonic() - began >= parts.FAIL_SECONDS
        assert strip.failed == "LED strip failed: OSError" and len(faults.failed_at) >= 3
        gaps = [b - a for a, b in zip(faults.failed_at, faults.failed_at[1:])]
        assert gaps == sorted(gaps) and max(gaps) <= parts.RETRY_MAX + 0.3   # backing off
        strip.submit(_frame((7, 8, 9)))
        faults.heal()
        healed = time.monotonic()
        wait_until(lambda: not strip.failed, "the strip back", 2.0)
        assert _rgb(faults.passed[-1][1]) == (7, 8, 9) and faults.passed[-1][0] - healed < 2.0
        assert told == ["LED strip failed: OSError", ""]
    finally:
        strip.close()


def test_a_frame_queued_before_close_still_goes_out(pixels):
    strip_pixels, faults = pixels
    strip = LedStrip(strip_pixels)
    gate = threading.Event()
    slow = threading.Event()

    def first_write_slow(*args):
        if not slow.is_set():
            slow.set()
            gate.wait(2)
        return faults(*args)
    import neopixel
    real, neopixel.neopixel_write = neopixel.neopixel_write, first_write_slow
    try:
        strip.submit(_frame((1, 1, 1)))
        assert slow.wait(2)                        # the first frame is in the driver
        strip.submit(_frame((2, 3, 4)))            # queued behind it
        closer = threading.Thread(target=strip.close)
        closer.start()
        time.sleep(0.05)
        gate.set()
        closer.join(3)
    finally:
        neopixel.neopixel_write = real
    sent = [_rgb(buffer) for _, buffer in faults.passed]
    assert sent == [(1, 1, 1), (2, 3, 4), (0, 0, 0)]   # the queued frame, then off


# ------------------------------------------------------------------ the OLED
def test_one_failed_oled_write_is_retried_with_the_newest_screen():
    faults = Faults()
    oled = Oled(ssd1306(_bus(faults), width=128, height=64))
    told = []
    oled.on_failure = lambda part: told.append(part.failed)
    faults.passed.clear()                          # the device's own clear at start
    try:
        faults.fail(1)
        oled.submit(_image("first"))
        wait_until(lambda: faults.failed_at, "the failed write")
        oled.submit(_image("second"))
        want = _bytes_of(_image("second"))
        wait_until(lambda: faults.passed and faults.passed[-1][1] == want,
                   "the newest screen through", 2.0)
        assert len(faults.passed) == 1               # the stale first screen never went out
        assert faults.passed[-1][0] - faults.failed_at[0] < 2.0
        assert oled.failed == "" and oled.writes_failed == 1 and told == []     # never reported
    finally:
        oled.close()


# ------------------------------------------------------------------ in the companion
@pytest.fixture
def companion(tmp_path):
    made = []

    def start():
        frames = {"led": 0}
        c = start_table(tmp_path, GOLDEN_RECORDS[0],
                        on_led_frame=lambda f: frames.__setitem__("led", frames["led"] + 1))
        made.append(c)
        return c, frames
    yield start
    for c in made:
        c.close()


def test_a_brief_strip_fault_never_reaches_the_oled(companion, monkeypatch):
    c, frames = companion()
    neopixel = sys.modules["neopixel"]
    faults = Faults(neopixel.neopixel_write)
    monkeypatch.setattr(neopixel, "neopixel_write", faults)
    warnings = []
    stop = threading.Event()

    def watch():
        while not stop.is_set():
            warnings.append(c.service.status.screen.warning)
            time.sleep(0.01)
    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        faults.fail(2)                              # the pulse's next two writes
        wait_until(lambda: len(faults.failed_at) == 2, "two failed writes")
        led = frames["led"]
        wait_until(lambda: frames["led"] > led + 3, "LED frames flowing again", 2.0)
    finally:
        stop.set()
        watcher.join()
    assert not any("LED strip" in w for w in warnings), set(warnings)
    assert c.parts.strip.failed == ""


def test_a_failed_oled_comes_back_and_its_warning_goes(companion, monkeypatch):
    c, _ = companion()
    faults = Faults()
    monkeypatch.setattr(noop, "data", lambda self, data: faults(data), raising=False)
    faults.fail(forever=True)
    Hands(c, press_s=0.03).press("next")            # a new screen to send: it fails
    wait_until(lambda: "OLED failed" in c.service.status.screen.warning,
               "the OLED failure said", 5.0)
    assert "OSError" not in c.service.status.screen.warning     # the exception is in the log
    faults.heal()
    wait_until(lambda: "OLED" not in c.service.status.screen.warning, "the warning gone", 3.0)
    assert c.parts.oled.failed == ""
    wait_until(lambda: faults.passed, "the screen sent again", 2.0)


def test_the_first_frame_of_a_change_goes_out_before_the_animation_is_prepared(pixels):
    """A change's first frame is written before the rest of its animation is worked out
    (``next_at``), so preparing a pulse never delays the light a person waits for."""
    strip_pixels, faults = pixels
    order = []
    strip = LedStrip(strip_pixels, on_frame=lambda frame: order.append("written"))

    def render(now):
        order.append("render")
        return _frame((7, 8, 9))

    def next_at(now):
        order.append("next_at")
        return None
    try:
        ticket = strip.submit(Animation(render, next_at))
        assert strip.wait_sent(ticket, 2.0)
        wait_until(lambda: "next_at" in order, "the animation's next frame asked for")
        assert order == ["render", "written", "next_at"]
    finally:
        strip.close()
