"""``patchwork-companion selftest``: the pure checks, and whole runs on simulated parts.

The simulated runs use the libraries' own stand-ins (gpiozero MockFactory pins
pressed from a thread, the real neopixel object on Blinka's OS-agnostic board,
a real luma ssd1306 over ``noop``, the simulated sensor process on a pty).
"""
from __future__ import annotations

import os
import threading
import time

import pytest
from PIL import Image

from firmware_py.bench import selftest
from firmware_py.config import default_text, load_config
from firmware_py.bench.selftest import (CHECKER, Hands, Result, exit_status, image_mismatch,
                                  led_frames, pattern_image, start_failure)


def fingers(skip: tuple[str, ...] = ()):
    """A ``press`` hook: presses the asked button's mock pin from another thread."""
    def press(button, parts):
        if button in skip:
            return
        pin = parts.pin_factory.pin(parts.buttons.pins[button])

        def run():
            time.sleep(0.02)
            pin.drive_low()
            time.sleep(0.05)
            pin.drive_high()
        threading.Thread(target=run, daemon=True).start()
    return press


def write_config(tmp_path, *edits: tuple[str, str]) -> str:
    text = default_text()
    for old, new in edits:
        assert old in text
        text = text.replace(old, new)
    path = tmp_path / "config.toml"
    path.write_text(text)
    return str(path)


def by_part(lines: list[str]) -> dict[str, str]:
    """Summary lines -> {part: status}."""
    out = {}
    for line in lines:
        status, _, rest = line.partition("  ")
        if status in ("PASS", "FAIL", "SKIP"):
            out[rest.split(":")[0]] = status
    return out


# ----------------------------------------------------------------------------- pure
def test_led_frames_light_each_led_alone_then_all_then_none():
    frames = led_frames(4)
    assert [label for label, _ in frames] == ["LED 0 alone", "LED 1 alone", "LED 2 alone",
                                              "LED 3 alone", "all lit", "all off"]
    assert frames[2][1] == [(0, 0, 0), (0, 0, 0), (255, 255, 255), (0, 0, 0)]
    assert frames[4][1] == [(255, 255, 255)] * 4
    assert frames[5][1] == [(0, 0, 0)] * 4


def test_pattern_has_border_checkerboard_and_text():
    image = pattern_image()
    assert image.mode == "1" and image.size == (128, 64)
    px = image.load()
    assert all(px[x, 0] and px[x, 63] for x in range(128))
    assert all(px[0, y] and px[127, y] for y in range(64))
    assert px[2, 2] and not px[2 + CHECKER, 2] and px[2 + CHECKER, 2 + CHECKER]
    assert not px[2, 2 + CHECKER]
    text_lit = sum(1 for x in range(1, 127) for y in range(35, 62) if px[x, y])
    assert text_lit > 150                       # two lines of text in the lower half


def test_image_mismatch_names_the_differing_box():
    want = pattern_image()
    assert image_mismatch(want.copy(), want) is None
    bad = want.copy()
    bad.putpixel((40, 50), 0 if want.getpixel((40, 50)) else 255)
    assert image_mismatch(bad, want) == "pixels differ in the box (40, 50, 41, 51)"
    assert image_mismatch(None, want) == "no image reached the device"
    assert "64x128" in image_mismatch(Image.new("1", (64, 128)), want)


def test_result_lines_exit_status_and_start_failures():
    assert Result("OLED ssd1306 @0x3C", "PASS").line() == "PASS  OLED ssd1306 @0x3C"
    assert Result("LED strip", "FAIL", "no pin").line() == "FAIL  LED strip: no pin"
    assert exit_status([Result("a", "PASS"), Result("b", "SKIP")]) == 0
    assert exit_status([Result("a", "PASS"), Result("b", "FAIL")]) == 1
    failures = ["LED strip failed to start: ValueError", "pin factory failed to start: x"]
    assert start_failure(failures, "LED strip") == "LED strip failed to start: ValueError"
    assert start_failure(failures, "pin factory", "buttons") == "pin factory failed to start: x"
    assert start_failure(failures, "OLED") is None


@pytest.mark.parametrize("order", ["GRB", "RGB", "GRBW", "RGBW"])
def test_pixel_values_read_back_from_a_real_neopixel_object(order, monkeypatch):
    monkeypatch.setenv("BLINKA_FORCEBOARD", "OS_AGNOSTIC_BOARD")
    monkeypatch.setenv("BLINKA_FORCECHIP", "OS_AGNOSTIC")
    import board
    import neopixel
    pixels = neopixel.NeoPixel(board.NEOPIXEL, 3, brightness=0.25, auto_write=False,
                               pixel_order=getattr(neopixel, order))
    frame = [(255, 255, 255), (0, 0, 0), (255, 0, 0)]
    for i, colour in enumerate(frame):
        pixels[i] = colour
    pixels.show()
    assert selftest.pixel_mismatch(pixels, frame, 0.25) is None
    assert selftest.pixel_mismatch(pixels, frame, 0.5) == "brightness is 0.25, configured cap 0.5"
    assert (selftest.pixel_mismatch(pixels, [(0, 0, 0)] * 3, 0.25)
            == "LED 0 holds (255, 255, 255), expected (0, 0, 0)")


# ------------------------------------------------------------------ simulated runs
def test_selftest_in_simulation_passes_every_part(tmp_path):
    lines: list[str] = []
    status = selftest.main(write_config(tmp_path), seconds=5, say=lines.append,
                           hands=Hands(press=fingers(), sensor=selftest.sim_tokens))
    assert status == 0, "\n".join(lines)
    parts = by_part(lines)
    assert parts == {"LED strip": "PASS", "OLED ssd1306 @0x3C": "PASS",
                     "button NEXT (BCM 5)": "PASS", "button OK (BCM 6)": "PASS",
                     "button BACK (BCM 13)": "PASS", "sensor": "PASS"}
    text = "\n".join(lines)
    assert ("PASS  LED strip: 54 LEDs on D18 (neopixel, GRB), cap 0.25; verified in simulation"
            in text)
    assert "PASS  OLED ssd1306 @0x3C: 128x64 test pattern shown; verified in simulation" in text
    for name in ("NEXT", "OK", "BACK"):
        assert f"  {name} pressed" in lines
    # the simulated hands put tokens on spaces 3 and 7 and took them off: seen live
    assert any(line.startswith("  occupied: [3]") for line in lines)
    assert any(line.startswith("  occupied: [3, 7]") for line in lines)
    sensor = next(line for line in lines if line.startswith("PASS  sensor"))
    assert "firmware 1.1.0-sim, 54 spaces" in sensor
    assert "CRC errors 0" in sensor and "frames ok " in sensor
    # the simulated sensor's STAT answer (200 Hz over 5 s) is printed and in the verdict
    assert "  scan: scan rate 200.0 Hz, worst scan 1.8 ms, worst gap 5.4 ms (over 5 s)" in lines
    assert "scan rate 200.0 Hz" in sensor and "SLOW" not in sensor


def test_scan_line_flags_a_slow_sensor_and_an_old_firmware():
    from firmware_py.hw.sensor_protocol import ScanStats
    assert "SLOW" in selftest.scan_line(ScanStats(0, 5000, 250, 3000, 21000))     # 50 Hz
    assert "SLOW" in selftest.scan_line(ScanStats(0, 5000, 1000, 3000, 25000))    # a 25 ms hiccup
    assert "SLOW" not in selftest.scan_line(ScanStats(0, 5000, 1000, 3000, 6000))
    assert "firmware before 1.1.0" in selftest.scan_line(None)


def test_leds_checked_against_the_neopixel_pixel_values(monkeypatch):
    """A strip whose driver drops one write fails, naming the frame and the LED."""
    import neopixel
    real_setitem = neopixel.NeoPixel.__setitem__

    def lossy(self, index, value):
        if index == 7 and value == (255, 255, 255):
            return                                     # LED 7 never takes white
        real_setitem(self, index, value)
    monkeypatch.setattr(neopixel.NeoPixel, "__setitem__", lossy)
    cfg = load_config(None)
    cfg["display"]["driver"] = "none"
    results = selftest.run_selftest(cfg, seconds=0.2, say=lambda line: None,
                                    hands=Hands(press=fingers()))
    led = next(r for r in results if r.part == "LED strip")
    assert led.line() == ("FAIL  LED strip: LED 7 alone: LED 7 holds (0, 0, 0), "
                          "expected (255, 255, 255)")
    assert next(r for r in results if r.part == "OLED").status == "SKIP"


def test_display_driver_raising_and_a_button_never_pressed_fail_only_those(tmp_path, monkeypatch):
    from luma.core.interface.serial import noop

    def broken_data(self, data):
        if any(data):                                 # starts (blank clear()), then the bus fails
            raise OSError(121, "Remote I/O error")
    monkeypatch.setattr(noop, "data", broken_data, raising=False)
    lines: list[str] = []
    status = selftest.main(write_config(tmp_path), seconds=0.6, say=lines.append,
                           hands=Hands(press=fingers(skip=("back",)), sensor=selftest.sim_tokens))
    assert status == 1
    assert by_part(lines) == {"LED strip": "PASS", "OLED ssd1306 @0x3C": "FAIL",
                              "button NEXT (BCM 5)": "PASS", "button OK (BCM 6)": "PASS",
                              "button BACK (BCM 13)": "FAIL", "sensor": "PASS"}
    assert "FAIL  OLED ssd1306 @0x3C: OLED failed: OSError" in lines
    assert "FAIL  button BACK (BCM 13): not pressed within 0.6 s" in lines


def test_parts_that_fail_to_start_are_reported_and_the_rest_checked(tmp_path, monkeypatch):
    import neopixel
    from luma.oled.device import sh1106

    def no_strip(*args, **kwargs):
        raise ValueError("leds.pin: board has no pin 'D99'")

    def no_oled(self, *args, **kwargs):
        raise OSError(2, "No such file or directory: '/dev/i2c-1'")
    monkeypatch.setattr(neopixel, "NeoPixel", no_strip)
    monkeypatch.setattr(sh1106, "__init__", no_oled)
    lines: list[str] = []
    config = write_config(tmp_path, ('driver = "ssd1306"', 'driver = "sh1106"'))
    status = selftest.main(config, seconds=5, say=lines.append,
                           hands=Hands(press=fingers(), sensor=selftest.sim_tokens))
    assert status == 1
    assert ("FAIL  LED strip: LED strip failed to start: leds.pin: board has no pin 'D99'"
            in lines)
    assert ("FAIL  OLED sh1106 @0x3C: OLED failed to start: [Errno 2] No such file or "
            "directory: '/dev/i2c-1'" in lines)
    assert sum(line.startswith("PASS  button") for line in lines) == 3
    assert any(line.startswith("PASS  sensor") for line in lines)


def test_pi_backend_with_a_bad_led_pin(tmp_path, monkeypatch):
    """The "pi" backend's own path: a pin the board lacks fails the strip; the mock
    pin factory's buttons and a sensor on a pty still pass, the OLED is not configured."""
    from firmware_py.sim.sensor import SimSensorProcess
    monkeypatch.setenv("BLINKA_FORCEBOARD", "OS_AGNOSTIC_BOARD")
    monkeypatch.setenv("BLINKA_FORCECHIP", "OS_AGNOSTIC")
    monkeypatch.delenv("BLINKA_SKIP_DEPENDENCY_CHECK", raising=False)
    with SimSensorProcess(tmp_path / "sensor") as sensor:
        config = write_config(tmp_path, ('backend = "sim"', 'backend = "pi"'),
                              ('pin = "D18"', 'pin = "D99"'),
                              ('pin_factory = "auto"', 'pin_factory = "mock"'),
                              ('driver = "ssd1306"', 'driver = "none"'),
                              ('ports = ["/dev/patchwork-sensor", "/dev/serial/by-id/usb-*Pico*',
                               f'ports = ["{sensor.link}", "/dev/serial/by-id/usb-*Pico*'))
        lines: list[str] = []
        status = selftest.main(config, seconds=3, yes=True, say=lines.append,
                               hands=Hands(press=fingers()))
    assert status == 1
    assert "FAIL  LED strip: LED strip failed to start: leds.pin: board has no pin 'D99'" in lines
    assert "SKIP  OLED: display.driver = none" in lines
    # on a Pi, Blinka 10 would offer to pip-install into the service's venv: selftest says no
    assert os.environ.get("BLINKA_SKIP_DEPENDENCY_CHECK") == "1"
    assert by_part(lines)["sensor"] == "PASS"
    assert [by_part(lines)[f"button {b} (BCM {p})"] for b, p in
            (("NEXT", 5), ("OK", 6), ("BACK", 13))] == ["PASS"] * 3


def test_sensor_without_a_device_fails_within_the_time_limit(tmp_path):
    lines: list[str] = []
    started = time.monotonic()
    result = selftest.check_sensor([str(tmp_path / "no-such-sensor")], 115200, 0.8,
                                   say=lines.append, show=lambda *a: None)
    assert time.monotonic() - started < 3
    assert result.status == "FAIL"
    assert result.detail.startswith("no handshake within 0.8 s (sensor offline: no device")
    assert "frames ok 0" in result.detail and "last frame never" in result.detail


@pytest.mark.parametrize("answer, status", [(True, "PASS"), (False, "FAIL")])
def test_on_a_pi_the_maker_confirms_what_cannot_be_read_back(answer, status):
    from firmware_py.hw.parts import Oled
    from luma.core.interface.serial import noop
    from luma.oled.device import ssd1306
    questions: list[str] = []

    def confirm(question):
        questions.append(question)
        return answer
    oled = Oled(ssd1306(noop()))
    try:
        result = selftest.check_oled(oled, load_config(None), [], verify=False, confirm=confirm)
    finally:
        oled.close()
    assert result.status == status
    assert questions == ["Does the OLED show a border, a checkerboard and "
                         "'patchwork-companion selftest'?"]


# ------------------------------------------------------------- causes on a Pi
def failing_run(tmp_path, seconds: float) -> list[str]:
    """Selftest in simulation (fingers press every button), which must fail; its lines."""
    lines: list[str] = []
    status = selftest.main(write_config(tmp_path), seconds=seconds, say=lines.append,
                           hands=Hands(press=fingers(), sensor=selftest.sim_tokens))
    assert status == 1
    return lines


def test_a_missing_route_module_is_named_with_its_fix(tmp_path, monkeypatch):
    """A strip whose route library is missing fails with the cause, not just the error."""
    import neopixel

    def no_backend(*args, **kwargs):
        raise ModuleNotFoundError("No module named '_rpi_ws281x'")
    monkeypatch.setattr(neopixel, "NeoPixel", no_backend)
    lines = failing_run(tmp_path, seconds=3)
    strip = next(line for line in lines if line.startswith("FAIL  LED strip"))
    assert "No module named '_rpi_ws281x'" in strip
    assert "cause: the PWM LED route needs rpi-ws281x" in strip and "install" in strip


def test_causes_for_pio0_and_gpiochip(tmp_path):
    from firmware_py.hw.diagnose import cause
    root = tmp_path
    (root / "dev").mkdir()
    (root / "etc").mkdir()
    (root / "etc/group").write_text("root:x:0:\ngpio:x:997:patchwork\n")
    assert "/dev/pio0 is missing" in cause("[Errno 2] No such file or directory: '/dev/pio0'", root)
    pio = root / "dev/pio0"
    pio.write_text("")
    os.chown(pio, 0, 0)
    pio.chmod(0o600)
    assert "group root with mode 0600" in cause("[Errno 13] Permission denied: '/dev/pio0'", root)
    os.chown(pio, 0, 997)
    pio.chmod(0o660)
    assert "group gpio may use it" in cause("[Errno 13] Permission denied: '/dev/pio0'", root)
    assert "no /dev/gpiochip0" in cause("'can not open gpiochip'", root)
    (root / "dev/gpiochip0").write_text("")
    assert "gpiochip4 is absent" in cause("'can not open gpiochip'", root)
    (root / "dev/gpiochip4").symlink_to("gpiochip0")
    assert "gpiochip0, gpiochip4" in cause("'can not open gpiochip'", root)
    assert "dtparam=spi=on" in cause("[Errno 2] No such file or directory: '/dev/spidev0.0'", root)
    assert "Pi 5" in cause("ws2811_init failed with code -3 (Hardware revision is not supported)")
    assert "needs root" in cause("ws2811_init failed with code -5 (mmap() failed)")
    assert cause("leds.pin: board has no pin 'D99'") is None


def test_a_button_line_held_by_another_process_names_the_pin_and_how_to_free_it(
        tmp_path, monkeypatch, caplog):
    """lgpio says only "GPIO busy" when another process (the running service, usually) holds
    a line: selftest and the log say which BCM pin, who probably holds it and how to stop it."""
    import logging

    from gpiozero.pins.mock import MockFactory, MockPin

    from firmware_py.hw import backends

    class HeldElsewhere(MockPin):
        """gpiozero's mock pin, as lgpio answers for a line another process claimed."""

        def __init__(self, factory, info):
            if info.name == "GPIO6":
                raise RuntimeError("GPIO busy")       # lgpio.error's text
            super().__init__(factory, info)
    monkeypatch.setattr(backends, "_pin_factory", lambda name: MockFactory(pin_class=HeldElsewhere))
    caplog.set_level(logging.ERROR)
    lines = failing_run(tmp_path, seconds=1)
    ok = next(line for line in lines if line.startswith("FAIL  button OK (BCM 6)"))
    assert "BCM 6 (OK button): GPIO busy" in ok
    assert "BCM 6 is held by another process, probably the companion's own service" in ok
    assert "sudo systemctl stop patchwork-companion" in ok
    logged = [r.getMessage() for r in caplog.records if "buttons failed to start" in r.getMessage()]
    assert logged and "BCM 6" in logged[0] and "sudo systemctl stop patchwork-companion" in logged[0]
