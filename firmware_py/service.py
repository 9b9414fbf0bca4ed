"""The companion service: one event-loop thread owns the game.

Hardware threads (gpiozero callbacks, the sensor reader) only :meth:`Service.post`
events. The loop classifies button edges, judges token readings, drives the
UI state machine, journals each accepted turn (inside the UI) before showing
it, and then updates the outputs: the LED frame first, then the OLED. Timers
run from the injected clock. The loop also feeds the systemd watchdog, so a
hung loop is restarted (design 6).
"""
from __future__ import annotations

import logging
import queue
import random
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from .companion.buttons import ButtonClassifier
from .companion.journal import Journal
from .companion.model import Lights, Screen
from .companion.screens import build_lights, build_screen
from .companion.tokens import TokenWatch
from .companion.ui import TableUI
from .hw.parts import RawButton
from .hw.sensor_link import SensorOccupancy, SensorStatus
from .rules import deal as deal_circle, dumps_record, load_spec, replay
from .view.leds import LedLayout, led_frame
from .view.oled import render

LOG = logging.getLogger(__name__)


@dataclass(frozen=True)
class Status:
    """A snapshot the loop publishes after each change (read from any thread).

    ``mode``: the UI mode; ``turns``: accepted turns in the current game;
    ``state``: the engine state or None; ``screen``/``lights``: what is shown;
    ``warnings``: part/journal/sensor warnings; ``saved_to``: the last saved record.
    """

    mode: str
    turns: int
    state: object
    screen: Screen
    lights: Lights
    warnings: tuple[str, ...]
    saved_to: str
    seq: int


class _Call:
    def __init__(self, fn):
        self.fn = fn
        self.done = threading.Event()
        self.result = None
        self.error: BaseException | None = None


class Service:
    """The running companion.

    ``cfg``: validated config; ``parts``: built hardware parts (``hw.backends``);
    ``folder``: journal and records folder; ``clock``: monotonic seconds;
    ``deal``: optional ``game -> (circle, blue)`` (default: a fresh random deal);
    ``notifier``: an ``sdnotify.Notifier`` or None.
    """

    def __init__(self, cfg: dict, parts, folder: str | Path, *, clock: Callable[[], float] = time.monotonic,
                 deal: Callable | None = None, notifier=None):
        self.cfg = cfg
        self.parts = parts
        self.clock = clock
        self.folder = Path(folder)
        self.queue: queue.SimpleQueue = queue.SimpleQueue()
        self.journal = Journal(self.folder)
        self.buttons = ButtonClassifier(cfg["buttons"]["hold_seconds"],
                                        cfg["buttons"]["debounce_ms"] / 1000)
        self.watch = TokenWatch(cfg["sensor"]["stable_ms"] / 1000, cfg["sensor"]["guidance_seconds"])
        self.ui = TableUI(self.journal.append, deal or _random_deal, self._save_record)
        self.notifier = notifier
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._last_screen: Screen | None = None
        self._last_lights: Lights | None = None
        self._last_frame = None
        self._next_frame = 0.0
        self._last_verdict = None
        self._layouts: dict[int, LedLayout] = {}
        self._channel_maps: dict[int, dict[int, int]] = {}
        self._next_watchdog = 0.0
        self._seq = 0
        self.status: Status | None = None
        self.ready = threading.Event()
        self.problems: list[str] = []

    # ----- life cycle -----------------------------------------------------------------
    def post(self, event) -> None:
        """Queue an event for the loop (thread-safe; called by hardware threads)."""
        self.queue.put(event)

    def call(self, fn: Callable, timeout: float = 10.0):
        """Run ``fn()`` on the loop thread and return its result (for tools and tests)."""
        call = _Call(fn)
        self.post(call)
        if not call.done.wait(timeout):
            raise TimeoutError("the service loop did not answer")
        if call.error is not None:
            raise call.error
        return call.result

    def resume(self) -> list[str]:
        """Load the journal and rebuild the game; returns the problems found (for the log/OLED)."""
        loaded = self.journal.load()
        self.problems = loaded.problems + list(self.parts.failures)
        for problem in loaded.problems:
            LOG.warning("%s", problem)
            self.ui.warnings["journal"] = "journal repaired"
        for failure in self.parts.failures:
            self.ui.warnings[failure.split(" failed")[0]] = failure.split(":")[0]
        self.ui.resume(loaded.entries)
        return self.problems

    def start(self) -> "Service":
        """Resume and run the loop on its own thread; returns once the first frame is out."""
        self.resume()
        self._thread = threading.Thread(target=self.run, name="companion-loop", daemon=True)
        self._thread.start()
        self.ready.wait(10)
        return self

    def stop(self, timeout: float = 5.0) -> None:
        """Stop the loop (from another thread) and wait for it."""
        self._stop.set()
        self.post(None)
        if self._thread is not None:
            self._thread.join(timeout)

    def run(self) -> None:
        """The event loop (blocking) until :meth:`stop`."""
        self._refresh(self.clock(), force=True)
        self.ready.set()
        if self.notifier is not None:
            self.notifier.ready("playing")
        while not self._stop.is_set():
            timeout = self._timeout(self.clock())
            try:
                event = self.queue.get(timeout=timeout)
            except queue.Empty:
                event = None
            now = self.clock()
            if event is not None:
                self._handle(event, now)
            self._tick(now)

    # ----- the loop's work ---------------------------------------------------------------
    def _timeout(self, now: float) -> float:
        deadlines = [self._next_frame if self._animating() else None,
                     self.buttons.next_deadline(), self.watch.next_deadline(now),
                     self._next_watchdog if self._watchdog_period() else None]
        due = [d for d in deadlines if d is not None]
        return max(0.0, min(due) - now) if due else 1.0

    def _handle(self, event, now: float) -> None:
        if isinstance(event, RawButton):
            for gesture in self.buttons.edge(event.button, event.pressed, event.at):
                self.ui.gesture(gesture)
        elif isinstance(event, SensorOccupancy):
            self.watch.reading(self._spaces(event.occupied), now)
        elif isinstance(event, SensorStatus):
            self.ui.sensor_status(event.online, event.reason)
        elif isinstance(event, _Call):
            try:
                event.result = event.fn()
            except BaseException as exc:  # noqa: BLE001  handed back to the caller
                event.error = exc
            event.done.set()

    def _tick(self, now: float) -> None:
        for gesture in self.buttons.tick(now):
            self.ui.gesture(gesture)
        if self.ui.consume_reading:       # an undo or a cancel: the board as it is makes no move
            self.watch.consume()
            self.ui.consume_reading = False
        self._judge(now)
        self._refresh(now)
        self._feed_watchdog(now)

    def _judge(self, now: float) -> None:
        expect = self.ui.expectation()
        if expect is None:
            return
        verdict = self.watch.judge(expect, now)
        key = (verdict, expect, self.ui.mode, len(self.ui.session.groups))
        if key != self._last_verdict:
            self._last_verdict = key
            self.ui.verdict(verdict)

    def _refresh(self, now: float, force: bool = False) -> None:
        screen = build_screen(self.ui)
        lights = build_lights(self.ui)
        if force or lights != self._last_lights or (self._animating() and now >= self._next_frame):
            self._show_leds(lights, now)
        if force or screen != self._last_screen:
            self._last_screen = screen
            if self.parts.oled is not None:
                self.parts.oled.show(render(screen))
                self._part_warning(self.parts.oled)
        if force or screen is not self._last_screen or lights is not self._last_lights:
            self._publish(screen, lights)

    def _show_leds(self, lights: Lights, now: float) -> None:
        self._last_lights = lights
        self._next_frame = now + 1.0 / self.cfg["leds"]["fps"]
        if self.parts.strip is None:
            return
        frame = led_frame(lights, now, self._layout(lights.last_space))
        if frame != self._last_frame:
            self._last_frame = frame
            self.parts.strip.show(frame)
            self._part_warning(self.parts.strip)

    def _part_warning(self, part) -> None:
        if part.failed:
            self.ui.warnings[part.name] = part.failed

    def _animating(self) -> bool:
        lights = self._last_lights
        return bool(lights and (lights.active or lights.expected or lights.wrong or lights.celebrate))

    def _spaces(self, channels: frozenset[int]) -> frozenset[int]:
        """Sensor channels -> time-board spaces through ``sensor.map`` (identity when unset)."""
        state = self.ui.state
        last = state.spec.last_space if state is not None else 53
        table = self._channel_maps.get(last)
        if table is None:
            spec = self.cfg["sensor"]["map" if last == 53 else "map_express"]
            table = ({c: s for s, c in enumerate(LedLayout.parse(spec, 1 << 16, last).leds)}
                     if spec else {})
            self._channel_maps[last] = table
        if not table:
            return frozenset(c for c in channels if c <= last)
        return frozenset(table[c] for c in channels if c in table)

    def _layout(self, last_space: int) -> LedLayout:
        layout = self._layouts.get(last_space)
        if layout is None:
            leds = self.cfg["leds"]
            spec = leds["map"] if last_space == 53 else leds["map_express"]
            layout = LedLayout.parse(spec, leds["count"], last_space)
            self._layouts[last_space] = layout
        return layout

    def _publish(self, screen: Screen, lights: Lights) -> None:
        self._seq += 1
        ui = self.ui
        self.status = Status(ui.mode, len(ui.session.groups) if ui.session else 0, ui.state, screen,
                             lights, tuple(ui.warnings.values()), ui.saved_to, self._seq)

    def _watchdog_period(self) -> float | None:
        return self.notifier.watchdog_period if self.notifier is not None else None

    def _feed_watchdog(self, now: float) -> None:
        period = self._watchdog_period()
        if period and now >= self._next_watchdog:
            self.notifier.watchdog()
            self._next_watchdog = now + period

    # ----- records --------------------------------------------------------------------
    def _save_record(self, session) -> str:
        """Write the finished game's record (untracked style) next to the journal."""
        record = session.record(meta={"saved": time.strftime("%Y-%m-%dT%H:%M:%S")})
        _, result = replay(record)
        record = type(record)(**{**record.__dict__, "result": {"scores": result.scores,
                                                              "winner": result.winner}}) \
            if result.over else record
        folder = self.folder / "records"
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"game-{time.strftime('%Y%m%d-%H%M%S')}-{len(session.groups)}.json"
        tmp = path.with_suffix(".tmp")
        tmp.write_text(dumps_record(record) + "\n", "utf-8")
        tmp.replace(path)
        return str(path)


def _random_deal(game: str):
    """A fresh shuffled circle (and Express blue order) from the OS's randomness."""
    return deal_circle(load_spec(game), random.SystemRandom().randrange(2**63))
