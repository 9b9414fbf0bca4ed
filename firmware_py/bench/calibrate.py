"""``patchwork-companion calibrate``: learn the sensor channel and the LED under each space.

The maker is walked through the board (on the OLED and the terminal):

1. **Sensor channels**: "Put a token on space 12 (of 0..53), take it off when
   it blinks", for every space in turn. The one channel that newly reports a
   token is that space's; no channel (the maker presses OK: "it is on, nothing
   happens"), several channels, or a channel that already belongs to another
   space is rejected, and the space is asked again once the token is off.
2. **LEDs**: LED 0 is lit and the maker puts the token on the space above it,
   then the same for the strip's last LED. When the two ends are the board's
   two ends, the map is the range between them, direction included ("0-53"
   or "53-0"). Otherwise every remaining LED is lit in turn and the maker
   puts the token on the space above it (NEXT: no space above this LED)
   until every space has its LED; the sensor (calibrated in step 1) says
   which space the token is on.

The learned maps go into ``sensor.map`` and ``leds.map`` (``*_express`` for
Patchwork Express): with ``--write`` into the config file with tomlkit,
keeping comments and every other key, after checking the result with
:func:`firmware_py.config.validate`, written atomically (Ctrl-C leaves the
file as it was); without ``--write`` the TOML lines are printed.

The learning logic (:class:`Settler`, :class:`Calibrator`) is pure: readings
and the maker's button presses in, the next :class:`Ask` out.
"""
from __future__ import annotations

import queue
import sys
import textwrap
import threading
import time
import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable

from ..disk import write_durably

GAMES = {"patchwork": (53, ""), "patchwork-express": (29, "_express")}  #: last space, key suffix

CLEAR, PLACE, ABOVE, LIFT, DONE, FAILED = "clear", "place", "above", "lift", "done", "failed"
PI_HINT = ("stop the service first (sudo systemctl stop patchwork-companion): it holds the "
           "buttons, the LEDs, the OLED and the sensor")


# ===================================================================== pure logic
@dataclass(frozen=True)
class Ask:
    """What the maker is asked to do now.

    ``kind``: "clear" (take every token off), "place" (put a token on
    ``space``), "above" (put a token on the space above the lit LED ``led``),
    "lift" (take the token off; ``accepted`` says the reading was taken, so
    the prompt blinks, and ``found`` is the channel learned for ``space`` or
    the space learned for ``led``), "done", or "failed" (``note`` says why).
    ``note``: why the last reading was rejected ("" when it was not).
    """

    kind: str
    space: int | None = None
    led: int | None = None
    note: str = ""
    accepted: bool = False
    found: int | None = None

    def text(self, last_space: int) -> str:
        """The prompt for the OLED and the terminal."""
        note = f"{self.note}. " if self.note else ""
        if self.kind == CLEAR:
            return f"{note}Take every token off the board (OK when it is clear)"
        if self.kind == PLACE:
            return (f"{note}Put a token on space {self.space} (of 0..{last_space}), "
                    "take it off when it blinks")
        if self.kind == ABOVE:
            return (f"{note}Put a token on the space above the lit LED {self.led}, take it "
                    "off when it blinks (NEXT: no space above it)")
        if self.kind == LIFT:
            if not self.accepted:
                return f"{note}Take the token off to try again"
            if self.led is not None:
                return f"Got it: LED {self.led} is under space {self.found}. Take the token off"
            return f"Got it: space {self.space} is channel {self.found}. Take the token off"
        return f"Calibration failed: {self.note}" if self.kind == FAILED else "Calibration done"


class Settler:
    """Debounces sensor readings: a reading counts once it stayed unchanged ``stable_s`` seconds.

    :meth:`feed` every reading with its time; :meth:`poll` returns each new
    settled reading once (a frozenset of channels), else None.
    """

    def __init__(self, stable_s: float):
        self.stable_s = stable_s
        self._value: frozenset[int] | None = None
        self._since = 0.0
        self._given: frozenset[int] | None = None

    def feed(self, occupied, now: float) -> None:
        """A reading ``occupied`` (channels) at ``now`` (seconds)."""
        occupied = frozenset(occupied)
        if occupied != self._value:
            self._value, self._since = occupied, now

    def poll(self, now: float) -> frozenset[int] | None:
        """The reading, when it has settled and differs from the last one given."""
        if self._value is None or self._value == self._given or now - self._since < self.stable_s:
            return None
        self._given = self._value
        return self._value

    def due(self, now: float) -> float | None:
        """Seconds until :meth:`poll` may have a new reading, or None."""
        if self._value is None or self._value == self._given:
            return None
        return max(0.0, self._since + self.stable_s - now)


def compact(values: list[int]) -> str | list[int]:
    """A map value for the config: "first-last" when ``values`` run by +1 or
    -1 (e.g. [53, 52, ..., 0] -> "53-0"), else the list itself."""
    if len(values) >= 2:
        step = values[1] - values[0]
        if step in (1, -1) and all(b - a == step for a, b in zip(values, values[1:])):
            return f"{values[0]}-{values[-1]}"
    return list(values)


def two_point_range(space_of_first: int | None, space_of_last: int | None, count: int,
                    last_space: int) -> str | None:
    """The LED range from the spaces above LED 0 and LED ``count - 1``, or None.

    One LED per space in a row: LED 0 over one end of the board and the last
    LED over the other, with as many LEDs as spaces. Returns "0-53" (LED 0
    under space 0) or "53-0" (LED 0 under the last space); None otherwise.
    """
    if count != last_space + 1:
        return None
    if (space_of_first, space_of_last) == (0, last_space):
        return f"0-{last_space}"
    if (space_of_first, space_of_last) == (last_space, 0):
        return f"{last_space}-0"
    return None


class Calibrator:
    """The calibration as a state machine: events in, the next :class:`Ask` out.

    ``last_space``: 53 (Patchwork) or 29 (Express); ``led_count``: LEDs on
    the strip. Inputs: :meth:`reading` (a settled sensor reading, channels),
    :meth:`nothing` (the maker says the token is on but nothing happened, or
    the board is clear), :meth:`skip` (no space above the lit LED). ``ask`` is
    the current :class:`Ask`; once it is "done", ``channels`` (channel of each
    space) and :meth:`leds_by_space` are complete and :meth:`maps` gives the
    config values. ``led_space`` maps each LED asked about to the space above
    it (None: none).
    """

    def __init__(self, last_space: int, led_count: int):
        if last_space < 0 or led_count < 1:
            raise ValueError("need last_space >= 0 and led_count >= 1")
        self.last_space, self.led_count = last_space, led_count
        self.channels: list[int | None] = [None] * (last_space + 1)
        self.led_space: dict[int, int | None] = {}     # LED -> space above it (None: none)
        self.baseline: frozenset[int] = frozenset()
        self.ask = Ask(CLEAR)
        self.leds_value: str | list[int] | None = None
        self._after = self.ask
        self._last: frozenset[int] | None = None

    # ----------------------------------------------------------------- inputs
    def reading(self, occupied) -> Ask:
        """A settled reading: the channels that report a token now."""
        occupied = frozenset(occupied)
        self._last = occupied
        new = occupied - self.baseline
        kind = self.ask.kind
        if kind == CLEAR and not occupied:
            self.ask = Ask(PLACE, space=0)
        elif kind == LIFT and not new:
            self.ask = self._after
        elif kind == PLACE and new:
            self._channel_reading(new)
        elif kind == ABOVE and new:
            self._led_reading(new)
        return self.ask

    def nothing(self) -> Ask:
        """The maker says "it is on, nothing happens" (or "the board is clear")."""
        ask = self.ask
        if ask.kind == CLEAR and self._last:
            self.baseline = self._last
            self.ask = Ask(PLACE, space=0, note=f"ignoring channels {_names(self._last)} that "
                           "see a token on a clear board")
        elif ask.kind == PLACE:
            self.ask = replace(ask, note=f"no channel sees a token on space {ask.space}")
        elif ask.kind == ABOVE:
            self.ask = replace(ask, note="no channel sees the token")
        return self.ask

    def skip(self) -> Ask:
        """The maker says no space sits above the lit LED."""
        if self.ask.kind == ABOVE:
            self.led_space[self.ask.led] = None
            self.ask = self._next_led()
        return self.ask

    def maps(self) -> tuple[str | list[int], str | list[int]]:
        """(sensor map, LED map) as config values. Raises ValueError before "done"."""
        if self.ask.kind != DONE:
            raise ValueError(f"calibration is not done ({self.ask.kind})")
        leds = self.leds_value if self.leds_value is not None else compact(self.leds_by_space())
        return compact(list(self.channels)), leds

    def leds_by_space(self) -> list[int | None]:
        """The LED learned for each space so far (None: not yet)."""
        by_space: list[int | None] = [None] * (self.last_space + 1)
        for led, space in self.led_space.items():
            if space is not None:
                by_space[space] = led
        return by_space

    # --------------------------------------------------------------- channels
    def _channel_reading(self, new: frozenset[int]) -> None:
        space = self.ask.space
        if len(new) > 1:
            return self._reject(f"{len(new)} channels ({_names(new)}) see a token: "
                                "use one token, centred on the space")
        channel = next(iter(new))
        if channel in self.channels:
            return self._reject(f"channel {channel} is already space "
                                f"{self.channels.index(channel)}'s")
        self.channels[space] = channel
        nxt = Ask(PLACE, space=space + 1) if space < self.last_space else Ask(ABOVE, led=0)
        self._lift(nxt, channel)

    # ------------------------------------------------------------------- LEDs
    def _led_reading(self, new: frozenset[int]) -> None:
        if len(new) > 1:
            return self._reject(f"{len(new)} channels ({_names(new)}) see a token: "
                                "use one token")
        channel = next(iter(new))
        if channel not in self.channels:
            return self._reject(f"channel {channel} belongs to no space")
        space = self.channels.index(channel)
        if space in self.led_space.values():
            led = next(k for k, v in self.led_space.items() if v == space)
            return self._reject(f"space {space} already has LED {led}")
        self.led_space[self.ask.led] = space
        self._lift(self._next_led(), space)

    def _next_led(self) -> Ask:
        last_led = self.led_count - 1
        if len(self.led_space) == 1 and last_led not in self.led_space:
            return Ask(ABOVE, led=last_led)
        if len(self.led_space) == 2 or self.led_count == 1:
            self.leds_value = two_point_range(self.led_space.get(0), self.led_space.get(last_led),
                                              self.led_count, self.last_space)
            if self.leds_value is not None:
                return Ask(DONE)
        if None not in self.leds_by_space():
            return Ask(DONE)
        for led in range(self.led_count):
            if led not in self.led_space:
                return Ask(ABOVE, led=led)
        missing = [s for s, led in enumerate(self.leds_by_space()) if led is None]
        return Ask(FAILED, note=f"no LED under spaces {_names(missing)}")

    # ---------------------------------------------------------------- helpers
    def _lift(self, after: Ask, found: int) -> None:
        self._after = after
        self.ask = Ask(LIFT, space=self.ask.space, led=self.ask.led, accepted=True, found=found)

    def _reject(self, note: str) -> None:
        self._after = replace(self.ask, note=note)
        self.ask = Ask(LIFT, space=self.ask.space, led=self.ask.led, note=note)


def _names(values) -> str:
    return ", ".join(str(v) for v in sorted(values))


# ============================================================== the config file
def config_keys(game: str) -> tuple[str, str]:
    """The (sensor, leds) map keys of ``game``: ("map", "map") or ("map_express", "map_express")."""
    key = "map" + GAMES[game][1]
    return key, key


def updated_toml(text: str, game: str, sensor_map, leds_map, source: str = "config") -> str:
    """``text`` (a TOML config) with the learned maps set, comments and other keys kept.

    Raises :class:`firmware_py.config.ConfigError` when the result does not
    validate (e.g. an LED beyond ``leds.count``), and tomlkit's errors for bad TOML.
    """
    import tomlkit
    from ..config import validate
    doc = tomlkit.parse(text)
    sensor_key, leds_key = config_keys(game)
    for section, key, value in (("sensor", sensor_key, sensor_map), ("leds", leds_key, leds_map)):
        if section not in doc:
            doc.add(section, tomlkit.table())
        doc[section][key] = value
    out = tomlkit.dumps(doc)
    validate(tomllib.loads(out), source)
    return out


def toml_lines(game: str, sensor_map, leds_map) -> str:
    """The learned maps as TOML lines to paste into a config file."""
    import tomlkit
    sensor_key, leds_key = config_keys(game)
    return tomlkit.dumps({"sensor": {sensor_key: sensor_map}, "leds": {leds_key: leds_map}})


def write_atomically(path: Path, text: str) -> None:
    """Replace ``path`` with ``text``: a temporary file in the same folder,
    fsync, rename, fsync of the folder; an interruption leaves the old file."""
    mode = path.stat().st_mode & 0o7777 if path.exists() else 0o600
    write_durably(path, text.encode("utf-8"), mode)


# ===================================================================== the I/O
Maker = Callable[[Ask, object], None]   #: simulated hands: called with each new Ask and the parts


@dataclass
class SimMaker:
    """Simulated hands for a calibration in simulation.

    ``channel_of``: the sensor channel under each space (the simulated sensor
    reports channel numbers); ``space_above``: for each LED, the space above
    it or None. Places and lifts token 0 on the simulated sensor and presses
    NEXT on the mock pin for an LED with no space above it.
    """

    channel_of: list[int]
    space_above: list[int | None]
    placed: bool = field(default=False)

    def __call__(self, ask: Ask, parts) -> None:
        """Do what ``ask`` says on the simulated board (``parts`` from ``build_parts``)."""
        sensor = parts.sim_sensor
        if ask.kind in (CLEAR, LIFT) and self.placed:
            sensor.command("lift", token=0)
            self.placed = False
        elif ask.kind == PLACE:
            self._place(sensor, self.channel_of[ask.space])
        elif ask.kind == ABOVE:
            space = self.space_above[ask.led] if ask.led < len(self.space_above) else None
            if space is None:
                _sim_press(parts, "next")
            else:
                self._place(sensor, self.channel_of[space])

    def _place(self, sensor, channel: int) -> None:
        sensor.command("place", token=0, space=channel)
        self.placed = True


def sim_maker_from_config(cfg: dict, game: str) -> SimMaker:
    """Simulated hands for a board built the way ``cfg`` says (so calibrating
    in simulation learns the configured maps back)."""
    from ..hw.channel_map import ChannelMap
    from ..view.leds import LedLayout
    last, suffix = GAMES[game]
    channel_map = ChannelMap.parse(cfg["sensor"]["map" + suffix], last)
    channels = [channel_map.channel_of(space) for space in range(last + 1)]
    layout = LedLayout.parse(cfg["leds"]["map" + suffix], cfg["leds"]["count"], last)
    above: list[int | None] = [None] * cfg["leds"]["count"]
    for space, led in enumerate(layout.leds):
        above[led] = space
    return SimMaker(channels, above)


def _sim_press(parts, button: str) -> None:
    pin = parts.pin_factory.pin(parts.buttons.pins[button])

    def finger():
        """Simulated maker's hand: answers each request by placing tokens and pressing buttons."""
        pin.drive_low()
        time.sleep(0.06)
        pin.drive_high()
    threading.Thread(target=finger, name=f"finger-{button}", daemon=True).start()


class _Session:
    """One calibration run on real or simulated parts: feeds the pure logic and shows its asks."""

    BLINK_S = 0.25

    def __init__(self, cfg: dict, game: str, parts, events: queue.Queue, say, maker):
        from ..companion.buttons import ButtonClassifier
        self.cfg, self.parts, self.events, self.say, self.maker = cfg, parts, events, say, maker
        self.last_space = GAMES[game][0]
        self.calibrator = Calibrator(self.last_space, cfg["leds"]["count"])
        self.settler = Settler(cfg["sensor"]["stable_ms"] / 1000)
        buttons = cfg["buttons"]
        self.classifier = ButtonClassifier(buttons["hold_seconds"], buttons["debounce_ms"] / 1000)
        self.shown: Ask | None = None
        self.started = False        # a first settled reading arrived: asks may be shown
        self.shown_at = 0.0
        self.blink_on = False

    def run(self, deadline: float | None) -> Calibrator:
        """Until the calibration is done or failed; raises TimeoutError after ``deadline``."""
        while self.calibrator.ask.kind not in (DONE, FAILED):
            now = time.monotonic()
            if deadline is not None and now > deadline:
                raise TimeoutError(f"calibration not finished in time (at {self.calibrator.ask})")
            self._handle(self._next_event(now))
            reading = self.settler.poll(time.monotonic())
            if reading is not None:
                self.started = True
                self.calibrator.reading(reading)
            self._present()
            self._blink(time.monotonic())
        self._present()
        return self.calibrator

    def _next_event(self, now: float):
        due = self.settler.due(now)
        timeout = 0.1 if due is None else min(0.1, due + 0.001)
        try:
            return self.events.get(timeout=timeout)
        except queue.Empty:
            return None

    def _handle(self, event) -> None:
        from ..hw.parts import RawButton
        from ..hw.sensor_link import SensorOccupancy, SensorStatus
        now = time.monotonic()
        if isinstance(event, SensorStatus):
            self.say(event.reason)
        elif isinstance(event, SensorOccupancy):
            self.settler.feed(event.occupied, now)
        gestures = self.classifier.edge(event.button, event.pressed, event.at) \
            if isinstance(event, RawButton) else self.classifier.tick(now)
        for gesture in gestures:
            if gesture.button == "ok" and self.shown is not None:
                self.calibrator.nothing()
            elif gesture.button == "next" and self.shown is not None:
                self.calibrator.skip()

    def _present(self) -> None:
        ask = self.calibrator.ask
        if ask == self.shown or not self.started:
            return                     # nothing new, or no reading yet: wait for the sensor
        self.shown, self.shown_at, self.blink_on = ask, time.monotonic(), False
        self.say(ask.text(self.last_space))
        self._show(ask, inverted=False)
        if self.maker is not None:
            self.maker(ask, self.parts)

    def _blink(self, now: float) -> None:
        """Blink the prompt (and the lit LED) while an accepted token waits to be lifted."""
        ask = self.shown
        if ask is None or ask.kind != LIFT or not ask.accepted:
            return
        phase = int((now - self.shown_at) / self.BLINK_S) % 2 == 1
        if phase != self.blink_on:
            self.blink_on = phase
            self._show(ask, inverted=phase)

    def _show(self, ask: Ask, inverted: bool) -> None:
        oled, strip = self.parts.oled, self.parts.strip
        if oled is not None and not oled.failed:
            oled.submit(_prompt_image(ask, self.last_space, inverted))
        if strip is not None and not strip.failed:
            frame = [(0, 0, 0)] * self.cfg["leds"]["count"]
            if ask.led is not None and not inverted:
                frame[ask.led] = (255, 255, 255)
            strip.submit(frame)


def oled_screen(ask: Ask, last_space: int) -> tuple[str, str, str, str]:
    """(title, text, footer, warning) of ``ask`` on the 128x64 OLED: the
    instruction without the terminal's long notes (a re-ask is tagged "retry")."""
    retry = "retry" if ask.note else ""
    if ask.kind == PLACE:
        return (f"Space {ask.space} of 0..{last_space}", f"Put a token on space {ask.space}, "
                "take it off when it blinks", "OK: it is on, not seen", retry)
    if ask.kind == ABOVE:
        return (f"LED {ask.led}", "Put a token on the space above the lit LED, take it off "
                "when it blinks", "NEXT: no space  OK: not seen", retry)
    if ask.kind == LIFT and ask.accepted:
        text = ask.text(last_space).removeprefix("Got it: ")
        return "Got it", text[:1].upper() + text[1:], "", ""
    if ask.kind == LIFT:
        return "Try again", ask.text(last_space), "", ""
    if ask.kind == CLEAR:
        return ("Calibrate", "Take every token off the board", "OK: it is clear",
                ask.note and "stuck")
    return "Calibrate", ask.text(last_space), "", ""


def _prompt_image(ask: Ask, last_space: int, inverted: bool):
    """The OLED image of ``ask`` (inverted for the blink)."""
    from PIL import ImageChops

    from ..companion.model import Screen
    from ..view.oled import render
    title, text, footer, warning = oled_screen(ask, last_space)
    image = render(Screen(kind="prompt", title=title, lines=tuple(textwrap.wrap(text, 21)),
                          footer=footer, warning=warning))
    return ImageChops.invert(image) if inverted else image


def run_calibration(cfg: dict, game: str = "patchwork", *, say=print, maker: Maker | None = None,
                    timeout: float | None = None) -> Calibrator:
    """Build the parts from ``cfg``, open the sensor link and walk the maker through the board.

    ``game``: "patchwork" or "patchwork-express"; ``say``: prints a line;
    ``maker``: simulated hands (default in simulation: :func:`sim_maker_from_config`;
    on a Pi: None, a person); ``timeout``: seconds before TimeoutError (None:
    no limit). Returns the :class:`Calibrator` (its ``ask`` is "done" or
    "failed"). Raises RuntimeError when there is no sensor port; parts are
    closed on every exit, KeyboardInterrupt included.
    """
    from ..hw.backends import build_parts
    from ..hw.sensor_link import SensorLink
    last_space = GAMES[game][0]
    if maker is None and cfg[""]["backend"] == "sim":
        maker = sim_maker_from_config(cfg, game)
    events: queue.Queue = queue.Queue()
    parts = build_parts(cfg, events.put, time.monotonic, spaces=last_space + 1)
    link = None
    try:
        if cfg[""]["backend"] == "pi":
            say(PI_HINT)
        for failure in parts.failures:
            say(f"warning: {failure}")
        if not parts.sensor_ports:
            raise RuntimeError("no sensor port: check sensor.ports")
        link = SensorLink(parts.sensor_ports, cfg["sensor"]["baud"], events.put, time.monotonic)
        link.start()
        say(f"calibrating {game}: waiting for the sensor on {', '.join(parts.sensor_ports)}")
        deadline = None if timeout is None else time.monotonic() + timeout
        return _Session(cfg, game, parts, events, say, maker).run(deadline)
    finally:
        if link is not None:
            link.stop()
        parts.close()


def main(config: str | None = None, game: str = "patchwork", write: bool = False, *,
         say=print, maker: Maker | None = None, timeout: float | None = None) -> int:
    """The ``calibrate`` command: 0 done (and written with ``write``), 1 calibration
    failed or its result does not validate, 2 bad config or arguments, 130 Ctrl-C."""
    from ..config import load_or_report
    if write and not config:
        print("calibrate --write needs --config FILE (e.g. /etc/patchwork-companion/config.toml)",
              file=sys.stderr)
        return 2
    cfg = load_or_report(config)
    if cfg is None:
        return 2
    try:
        calibrator = run_calibration(cfg, game, say=say, maker=maker, timeout=timeout)
    except KeyboardInterrupt:
        say("calibration cancelled: nothing written")
        return 130
    except (RuntimeError, TimeoutError) as exc:
        say(f"calibration stopped: {exc}; nothing written")
        return 1
    if calibrator.ask.kind != DONE:
        say(f"{calibrator.ask.text(GAMES[game][0])}; nothing written")
        return 1
    return _finish(config, game, calibrator, write, say)


def _finish(config: str | None, game: str, calibrator: Calibrator, write: bool, say) -> int:
    from ..config import ConfigError, default_text
    sensor_map, leds_map = calibrator.maps()
    try:
        text = Path(config).read_text("utf-8") if config else default_text()
        new_text = updated_toml(text, game, sensor_map, leds_map, str(config or "config"))
    except ConfigError as exc:
        say(f"the learned maps do not validate: {exc}; nothing written")
        return 1
    if not write:
        say("learned (run with --write to put them in the config file):")
        say(toml_lines(game, sensor_map, leds_map).rstrip())
        return 0
    try:
        write_atomically(Path(config), new_text)
    except KeyboardInterrupt:
        say("calibration cancelled: nothing written")
        return 130
    say(f"wrote sensor.{config_keys(game)[0]} and leds.{config_keys(game)[1]} to {config}")
    return 0
