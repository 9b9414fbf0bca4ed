"""``patchwork-companion selftest``: check every part the config names, one at a time.

Builds the parts with :func:`firmware_py.hw.backends.build_parts` (backend
"pi" or "sim") and checks, in order:

1. the LED strip: each LED lit in turn, then all at the brightness cap, then
   off (in simulation every frame is read back from the real ``neopixel``
   object's pixel values);
2. the OLED: a test pattern (border, checkerboard, "patchwork-companion
   selftest"); in simulation the image handed to the luma device is captured
   and compared pixel for pixel;
3. the buttons: NEXT, OK and BACK are asked for in turn (on the OLED and the
   terminal); each press is reported as it happens, a button not pressed
   within ``--seconds`` fails;
4. the token sensor: the link is opened, occupancy changes are printed as
   they arrive, then the link statistics; it passes when the handshake and a
   snapshot arrive within ``--seconds``.

A part that fails to start is a FAIL with the reason; the others are still
checked. The result is one line per part (``PASS  OLED ssd1306 @0x3C``,
``FAIL  LED strip: <reason>``, ``SKIP  ...`` for a part configured "none").

On a Pi nobody can read the LEDs or the OLED back, so unless ``--yes`` is
given the maker is asked on the terminal whether they looked right. In
simulation the buttons are pressed and tokens placed by simulated hands
(:class:`Hands`); tests pass their own hands.
"""
from __future__ import annotations

import queue
import sys
import threading
import time
from dataclasses import dataclass
from typing import Callable

from PIL import Image, ImageChops, ImageDraw

from ..hw.parts import HANG_SECONDS, RawButton

BUTTONS = ("next", "ok", "back")
WHITE = (255, 255, 255)
OFF = (0, 0, 0)
CHECKER = 4                 #: checkerboard square size, px
TITLE = ("patchwork-companion", "selftest")


# ------------------------------------------------------------------- results
@dataclass(frozen=True)
class Result:
    """One part's verdict: ``part`` (e.g. "OLED ssd1306 @0x3C"), ``status``
    ("PASS", "FAIL" or "SKIP") and ``detail`` (why, or what was seen)."""

    part: str
    status: str
    detail: str = ""

    @property
    def ok(self) -> bool:
        """True unless the part failed (a skipped part is not a failure)."""
        return self.status != "FAIL"

    def line(self) -> str:
        """The summary line, e.g. ``"FAIL  LED strip: no answer for 2 s"``."""
        return f"{self.status}  {self.part}" + (f": {self.detail}" if self.detail else "")


def exit_status(results: list[Result]) -> int:
    """0 when no part failed, else 1."""
    return 0 if all(r.ok for r in results) else 1


def start_failure(failures: list[str], *names: str) -> str | None:
    """The ``build_parts`` failure reported for any of ``names`` (e.g. "OLED"), or None."""
    for failure in failures:
        for name in names:
            if failure.startswith(f"{name} failed to start"):
                return failure
    return None


def with_cause(failure: str | None) -> str | None:
    """A strip or button start ``failure`` with its cause and fix appended when
    :func:`firmware_py.hw.diagnose.cause` knows it (e.g. a missing module, /dev/pio0)."""
    if failure is None:
        return None
    from ..hw.diagnose import cause
    found = cause(failure.split(" failed to start: ", 1)[-1])
    return failure if found is None else f"{failure} -> cause: {found}"


# ---------------------------------------------------------------------- hands
@dataclass
class Hands:
    """Who acts for the maker when nobody watches (simulation, tests).

    ``press(button, parts)``: called when the selftest asks for ``button``
    ("next", "ok", "back"); it must return at once and press from another
    thread (or not at all). ``sensor(parts)``: called once the sensor link
    is online (e.g. to put tokens on the simulated board). ``confirm(question)``:
    asks the maker whether what they see is right (True = yes); None = do
    not ask (the part passes when its driver accepted every frame).
    """

    press: Callable[[str, object], None] | None = None
    sensor: Callable[[object], None] | None = None
    confirm: Callable[[str], bool] | None = None


def sim_press(button: str, parts, hold: float = 0.05) -> None:
    """Press ``button`` on the simulation's gpiozero mock pin from a new thread."""
    pin = parts.pin_factory.pin(parts.buttons.pins[button])

    def finger():
        """Simulated maker's hand: presses the asked button on the mock pins."""
        time.sleep(0.05)
        pin.drive_low()
        time.sleep(hold)
        pin.drive_high()
    threading.Thread(target=finger, name=f"finger-{button}", daemon=True).start()


def sim_tokens(parts) -> None:
    """Put both tokens on the simulated board and take them off again."""
    sensor = parts.sim_sensor
    if sensor is not None:
        sensor.command("place", token=0, space=3)
        sensor.command("place", token=1, space=7)
        sensor.command("lift", token=0)
        sensor.command("lift", token=1)


def ask_terminal(question: str) -> bool:
    """Ask ``question`` on the terminal; True for y/yes. Not a terminal: no answer (False)."""
    if not sys.stdin.isatty():
        return False
    try:
        return input(f"{question} [y/N] ").strip().lower() in ("y", "yes")
    except EOFError:
        return False


def default_hands(sim: bool, yes: bool) -> Hands:
    """Simulated hands in simulation; on a Pi the maker presses, and is asked
    about the LEDs and the OLED unless ``yes``."""
    if sim:
        return Hands(press=sim_press, sensor=sim_tokens)
    return Hands(confirm=None if yes else ask_terminal)


# ----------------------------------------------------------------------- LEDs
def led_frames(count: int) -> list[tuple[str, list[tuple[int, int, int]]]]:
    """The LED test as (label, frame) pairs: LED i alone for each i, all lit, all off."""
    frames = []
    for i in range(count):
        frame = [OFF] * count
        frame[i] = WHITE
        frames.append((f"LED {i} alone", frame))
    frames.append(("all lit", [WHITE] * count))
    frames.append(("all off", [OFF] * count))
    return frames


def pixel_mismatch(pixels, frame: list[tuple[int, int, int]], cap: float) -> str | None:
    """Compare a ``neopixel.NeoPixel``'s pixel values with ``frame``; None when they agree.

    Also checks that the object's brightness is the configured cap (0..1).
    """
    if abs(pixels.brightness - cap) > 1e-6:
        return f"brightness is {pixels.brightness:g}, configured cap {cap:g}"
    for i, want in enumerate(frame):
        got = as_rgb(pixels[i])
        if got != want:
            return f"LED {i} holds {got}, expected {want}"
    return None


def as_rgb(value) -> tuple[int, int, int]:
    """A pixel value read back as (r, g, b): an RGBW strip stores white in its
    W channel, which lights all three colours."""
    r, g, b, *w = tuple(value)
    white = w[0] if w else 0
    return min(255, r + white), min(255, g + white), min(255, b + white)


def check_leds(strip, cfg: dict, *, verify: bool, pace: float, confirm=None) -> Result:
    """Run :func:`led_frames` through ``strip`` (a :class:`~firmware_py.hw.parts.LedStrip`).

    ``verify``: read every frame back from the neopixel object (simulation);
    ``pace``: seconds per LED (the all-lit frame stays 20x longer);
    ``confirm``: ask the maker afterwards (None: do not ask).
    """
    leds = cfg["leds"]
    name = "LED strip"
    what = f"{leds['count']} LEDs on {leds['pin']} ({leds['driver']}, {leds['order']}), " \
           f"cap {leds['brightness']:g}"
    for label, frame in led_frames(leds["count"]):
        problem = _send(strip, frame)
        if problem is None and verify:
            problem = pixel_mismatch(strip.pixels, frame, leds["brightness"])
        if problem:
            return Result(name, "FAIL", f"{label}: {problem}")
        time.sleep(pace * (20 if label == "all lit" else 1))
    return _confirmed(name, what, verify, confirm,
                      "Did each LED light in turn, then all, then go dark?")


def _send(part, frame) -> str | None:
    """Hand ``frame`` to ``part``'s output thread; the failure, or None once sent."""
    ticket = part.submit(frame)
    if not part.wait_sent(ticket, HANG_SECONDS + 1.0):
        return f"no answer within {HANG_SECONDS + 1.0:g} s"
    return part.failed or part.write_error or None   # a single failed write fails the test


def _confirmed(name: str, what: str, verified: bool, confirm, question: str) -> Result:
    if verified:
        return Result(name, "PASS", f"{what}; verified in simulation")
    if confirm is None:
        return Result(name, "PASS", f"{what}; driver accepted every frame (not checked by eye)")
    if confirm(question):
        return Result(name, "PASS", f"{what}; confirmed by eye")
    return Result(name, "FAIL", f"{what}: not confirmed by eye")


# ----------------------------------------------------------------------- OLED
def pattern_image(width: int = 128, height: int = 64) -> Image.Image:
    """The OLED test image (mode "1"): a 1 px border, a checkerboard of
    ``CHECKER`` px squares in the upper half and the words of :data:`TITLE`
    centred in the lower half."""
    from ..view.fonts import BIG
    image = Image.new("1", (width, height), 0)
    draw = ImageDraw.Draw(image)
    draw.rectangle((0, 0, width - 1, height - 1), outline=255)
    for y in range(2, height // 2, CHECKER):
        for x in range(2, width - 2, CHECKER):
            if ((x - 2) // CHECKER + (y - 2) // CHECKER) % 2 == 0:
                draw.rectangle((x, y, min(x + CHECKER, width - 2) - 1,
                                min(y + CHECKER, height // 2) - 1), fill=255)
    for i, word in enumerate(TITLE):
        BIG.draw(draw, ((width - BIG.width(word)) // 2, height // 2 + 3 + i * BIG.line), word)
    return image


def image_mismatch(got: Image.Image | None, want: Image.Image) -> str | None:
    """None when ``got`` has ``want``'s size and pixels, else what differs."""
    if got is None:
        return "no image reached the device"
    if got.size != want.size:
        return f"the device got a {got.size[0]}x{got.size[1]} image, expected {want.size}"
    box = ImageChops.difference(got.convert("1"), want).getbbox()
    return None if box is None else f"pixels differ in the box {box}"


def check_oled(oled, cfg: dict, frames: list, *, verify: bool, confirm=None) -> Result:
    """Show :func:`pattern_image` on ``oled`` (an :class:`~firmware_py.hw.parts.Oled`).

    ``frames``: the images the device accepted (``build_parts``'
    ``on_oled_frame``); with ``verify`` the last one must equal the pattern.
    """
    disp = cfg["display"]
    name = f"OLED {disp['driver']} @0x{disp['i2c_address']:02X}"
    want = pattern_image(oled.device.width, oled.device.height)
    problem = _send(oled, want)
    if problem is None and verify:
        problem = image_mismatch(frames[-1] if frames else None, want)
    if problem:
        return Result(name, "FAIL", problem)
    return _confirmed(name, f"{oled.device.width}x{oled.device.height} test pattern shown",
                      verify, confirm,
                      "Does the OLED show a border, a checkerboard and "
                      "'patchwork-companion selftest'?")


# -------------------------------------------------------------------- buttons
def check_buttons(panel, edges: queue.Queue, seconds: float, cfg: dict, *, say, show,
                  press=None) -> list[Result]:
    """Ask for NEXT, OK and BACK in turn; one :class:`Result` per button.

    ``edges``: the :class:`RawButton` edges ``panel`` posts; ``seconds``:
    time limit per button; ``say``/``show``: print a line / show lines on
    the OLED; ``press(button)``: simulated hands (None: a person presses).
    Every press is reported as it happens, whichever button it is.
    """
    from ..companion.buttons import ButtonClassifier
    buttons = cfg["buttons"]
    classifier = ButtonClassifier(buttons["hold_seconds"], buttons["debounce_ms"] / 1000)
    seen: set[str] = set()
    results = []
    for name in BUTTONS:
        if name not in seen:
            prompt = f"Press {name.upper()} (BCM {panel.pins[name]}) within {seconds:g} s"
            say(prompt)
            show("Selftest: buttons", prompt)
            if press is not None:
                press(name)
            _await_press(edges, classifier, name, seen, seconds, say)
        label = f"button {name.upper()} (BCM {panel.pins[name]})"
        results.append(Result(label, "PASS", "pressed") if name in seen else
                       Result(label, "FAIL", f"not pressed within {seconds:g} s"))
    return results


def _await_press(edges: queue.Queue, classifier, name: str, seen: set, seconds: float,
                 say) -> None:
    """Take edges until ``name`` completes a press or hold, or ``seconds`` pass."""
    deadline = time.monotonic() + seconds
    while name not in seen and (left := deadline - time.monotonic()) > 0:
        try:
            edge = edges.get(timeout=min(left, 0.05))
            gestures = classifier.edge(edge.button, edge.pressed, edge.at) \
                if isinstance(edge, RawButton) else []
        except queue.Empty:
            gestures = classifier.tick(time.monotonic())
        for gesture in gestures:
            if gesture.button not in seen:
                verb = "pressed" if gesture.kind == "press" else "held"
                say(f"  {gesture.button.upper()} {verb}")
            seen.add(gesture.button)


# --------------------------------------------------------------------- sensor
@dataclass
class SensorSeen:
    """What the sensor check saw: ``online`` (handshake done), ``reason`` (the
    last status text), ``snapshots`` and ``changes`` (frames counted)."""

    online: bool = False
    reason: str = "sensor: nothing heard"
    snapshots: int = 0
    changes: int = 0


def stats_line(stats) -> str:
    """The link statistics (:class:`~firmware_py.hw.sensor_link.LinkStats`) on one line."""
    age = "never" if stats.last_frame_age is None else f"{stats.last_frame_age:.2f} s ago"
    return (f"frames ok {stats.frames_ok}, CRC errors {stats.crc_errors}, gaps {stats.gaps}, "
            f"reconnects {stats.reconnects}, garbage lines {stats.garbage_lines}, "
            f"last frame {age}")


MIN_SCAN_HZ = 100.0        #: a token slid across a space at hand speed needs this (see the firmware README)
MAX_SCAN_GAP_US = 10000    #: ... and no gap between scans longer than this


def scan_line(scan) -> str:
    """The sensor's own scan figures (a :class:`~firmware_py.hw.sensor_protocol.ScanStats`
    or None) on one line, with a warning when they are slower than a hand needs."""
    if scan is None:
        return ("scan rate not reported (firmware before 1.1.0 has no STAT frame: "
                "copy the current sensor firmware to the Pico)")
    text = (f"scan rate {scan.rate_hz:.1f} Hz, worst scan {scan.worst_scan_us / 1000:.1f} ms, "
            f"worst gap {scan.worst_gap_us / 1000:.1f} ms (over {scan.window_ms / 1000:g} s)")
    if scan.rate_hz < MIN_SCAN_HZ or scan.worst_gap_us > MAX_SCAN_GAP_US:
        text += (f"; SLOW: a sliding hand needs {MIN_SCAN_HZ:g} Hz and gaps under "
                 f"{MAX_SCAN_GAP_US / 1000:g} ms")
    return text


def sensor_result(seen: SensorSeen, stats, seconds: float) -> Result:
    """PASS when the handshake and a snapshot arrived, else FAIL with the reason."""
    if seen.online and seen.snapshots:
        return Result("sensor", "PASS", f"{seen.reason.removeprefix('sensor online: ')}; "
                      f"{scan_line(stats.scan)}; {stats_line(stats)}")
    missing = "no handshake" if not seen.online else "no snapshot"
    return Result("sensor", "FAIL", f"{missing} within {seconds:g} s ({seen.reason}); "
                  f"{stats_line(stats)}")


def check_sensor(ports: list[str], baud: int, seconds: float, *, say, show,
                 on_online=None, watch: float = 0.0) -> Result:
    """Open the sensor link on ``ports`` and watch it for up to ``seconds``.

    Occupancy changes are printed live; the check ends ``watch`` seconds after
    it passed (handshake and a snapshot), or at ``seconds``. ``on_online()``
    is called once when the link comes online.
    """
    from ..hw.sensor_link import SensorLink
    if not ports:
        return Result("sensor", "FAIL", "no sensor port")
    events: queue.Queue = queue.Queue()
    link = SensorLink(ports, baud, events.put, time.monotonic)
    show("Selftest: sensor", "Put a token on a few spaces")

    def online() -> None:
        """Ask for the sensor's scan figures, then let the hands act."""
        link.request_scan_stats()
        if on_online is not None:
            on_online()
    link.start()
    try:
        seen = _watch_link(events, seconds, max(watch, 0.3), say, online)
    finally:
        stats = link.stats()
        link.stop()
    say(f"  scan: {scan_line(stats.scan)}")
    say(f"  link: {stats_line(stats)}")
    return sensor_result(seen, stats, seconds)


def _watch_link(events: queue.Queue, seconds: float, watch: float, say, on_online) -> SensorSeen:
    from ..hw.sensor_link import SensorOccupancy, SensorStatus
    seen, last = SensorSeen(), None
    deadline = time.monotonic() + seconds
    while (now := time.monotonic()) < deadline:
        try:
            event = events.get(timeout=min(0.05, deadline - now))
        except queue.Empty:
            continue
        if isinstance(event, SensorStatus):
            seen.reason = event.reason
            say(f"  {event.reason}")
            if event.online and not seen.online and on_online is not None:
                on_online()
            seen.online = seen.online or event.online
        elif isinstance(event, SensorOccupancy):
            seen.snapshots += event.snapshot
            seen.changes += not event.snapshot
            if event.occupied != last:
                say(f"  occupied: {sorted(event.occupied) or 'none'} (seq {event.seq})")
                last = event.occupied
        if seen.online and seen.snapshots:
            deadline = min(deadline, time.monotonic() + watch)
    return seen


# ------------------------------------------------------------------ the whole
def run_selftest(cfg: dict, *, seconds: float = 10.0, yes: bool = False, say=print,
                 hands: Hands | None = None) -> list[Result]:
    """Build the parts from ``cfg`` and check each; returns one :class:`Result` per part.

    ``seconds``: time limit per button and for the sensor (a person at a Pi
    watches the sensor that long; with ``yes`` or in simulation it ends 0.5 s
    after it passed); ``yes``: do not ask the maker about the LEDs and OLED
    (nor wait for them to look); ``say``: prints one line; ``hands``:
    who acts for the maker (default :func:`default_hands`). Never raises for
    a part that fails (KeyboardInterrupt passes through, after cleanup).
    """
    from ..hw.backends import build_parts
    sim = cfg[""]["backend"] == "sim"
    hands = hands or default_hands(sim, yes)
    edges: queue.Queue = queue.Queue()
    frames: list = []
    say(f"selftest on the {cfg['']['backend']} backend")
    if not sim:
        from .calibrate import PI_HINT
        say(PI_HINT)
    parts = build_parts(cfg, edges.put, time.monotonic, on_oled_frame=frames.append)
    try:
        watch = 0.5 if sim or yes else seconds   # a person watching gets the whole time
        return _check_all(cfg, parts, edges, frames, seconds, sim, hands, say, watch)
    finally:
        parts.close()


def _check_all(cfg, parts, edges, frames, seconds, sim, hands, say, watch) -> list[Result]:
    def show(title: str, text: str) -> None:
        """Draw the prompt on the OLED and print it."""
        _show_text(parts.oled, title, text)

    results = [_leds(cfg, parts, sim, hands, say), _oled(cfg, parts, frames, sim, hands, say)]
    results += _buttons(cfg, parts, edges, seconds, hands, say, show)
    say("sensor: opening the link")
    on_online = (lambda: hands.sensor(parts)) if hands.sensor else None
    reason = start_failure(parts.failures, "simulated sensor")
    results.append(Result("sensor", "FAIL", reason) if reason else
                   check_sensor(parts.sensor_ports, cfg["sensor"]["baud"], seconds, say=say,
                                show=show, on_online=on_online, watch=watch))
    show("Selftest done", f"{sum(r.status == 'FAIL' for r in results)} part(s) failed")
    return results


def _leds(cfg, parts, sim, hands, say) -> Result:
    if cfg["leds"]["driver"] == "none":
        return Result("LED strip", "SKIP", "leds.driver = none")
    if parts.strip is None:
        reason = with_cause(start_failure(parts.failures, "LED strip")) or "not built"
        return Result("LED strip", "FAIL", reason)
    say("LED strip: lighting each LED in turn, then all, then off")
    return check_leds(parts.strip, cfg, verify=sim, pace=0.002 if sim else 0.05,
                      confirm=hands.confirm)


def _oled(cfg, parts, frames, sim, hands, say) -> Result:
    disp = cfg["display"]
    name = f"OLED {disp['driver']} @0x{disp['i2c_address']:02X}"
    if disp["driver"] == "none":
        return Result("OLED", "SKIP", "display.driver = none")
    if parts.oled is None or parts.oled.device is None:
        return Result(name, "FAIL", start_failure(parts.failures, "OLED") or "not built")
    say("OLED: showing the test pattern")
    result = check_oled(parts.oled, cfg, frames, verify=sim, confirm=hands.confirm)
    if not sim and hands.confirm is None:
        time.sleep(1.0)          # leave the pattern up long enough to be seen
    return result


def _buttons(cfg, parts, edges, seconds, hands, say, show) -> list[Result]:
    if parts.buttons is None:
        reason = with_cause(start_failure(parts.failures, "pin factory", "buttons")) or "not built"
        return [Result(f"button {b.upper()} (BCM {cfg['buttons'][b]})", "FAIL", reason)
                for b in BUTTONS]
    press = (lambda b: hands.press(b, parts)) if hands.press else None
    return check_buttons(parts.buttons, edges, seconds, cfg, say=say, show=show, press=press)


def _show_text(oled, title: str, text: str) -> None:
    """Show ``text`` wrapped under ``title`` on the OLED, if there is a working one."""
    import textwrap
    from ..companion.model import Screen
    from ..view.oled import render
    if oled is None or oled.failed:
        return
    lines = tuple(textwrap.wrap(text, 21))
    oled.submit(render(Screen(kind="prompt", title=title, lines=lines)))


def main(config: str | None = None, seconds: float = 10.0, yes: bool = False, *,
         say=print, hands: Hands | None = None) -> int:
    """The ``selftest`` command: 0 when every part passed, 1 when one failed,
    2 for a bad config, 130 when interrupted (Ctrl-C)."""
    from ..config import load_or_report
    cfg = load_or_report(config)
    if cfg is None:
        return 2
    try:
        results = run_selftest(cfg, seconds=seconds, yes=yes, say=say, hands=hands)
    except KeyboardInterrupt:
        say("selftest interrupted")
        return 130
    say("")
    for result in results:
        say(result.line())
    return exit_status(results)
