"""The companion service: one event-loop thread owns the game.

Hardware threads (gpiozero callbacks, the sensor reader) only :meth:`Service.post`
events. The loop classifies button edges and judges token readings, hands them
to the table (``companion.table.Table``), carries out the effects the table
returns in order (journal an entry, save a record, ask the box, forget a
reading), and then updates the outputs from the table's view: the LED frame
first, then the OLED, each
handed to the part's own output thread so a slow or hung driver never blocks
the loop (a hung one is reported as failed). Timers run from the injected clock. The loop also feeds the systemd watchdog, so a
hung loop is restarted (design 6).
"""
from __future__ import annotations

import logging
import math
import queue
import random
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Callable

from ..companion.buttons import ButtonClassifier
from ..companion.effects import AskBox, ForgetReading, Journal, SaveRecord
from ..companion.journal import JournalError, lost_text
from ..companion.model import Lights, Screen
from ..companion.screens import build_lights, build_screen
from ..companion.table import Table
from ..companion.tokens import TokenWatch
from ..companion.view import TableView
from .feed import PIN_WARNING, ShowPin, capture_view
from ..hw.channel_map import ChannelMap
from ..hw.parts import Animation, RawButton
from ..hw.sensor_link import SensorOccupancy, SensorStatus
from .keeper import Keeper, Saved
from ..rules import deal as deal_circle, load_spec
from ..view.leds import Hand, LedFrames, LedLayout, hand_of

LOG = logging.getLogger(__name__)


@dataclass(frozen=True)
class Status:
    """A snapshot the loop publishes after each change (read from any thread).

    ``view``: the table's view; ``screen``/``lights``: what is shown; ``warnings``:
    part/journal/sensor warnings (full texts); ``seq``: counts the snapshots.
    """

    view: TableView
    screen: Screen
    lights: Lights
    warnings: tuple[str, ...]
    seq: int

    @property
    def mode(self) -> str:
        """The table's mode (a ``companion.view.Mode``)."""
        return self.view.mode

    @property
    def turns(self) -> int:
        """Accepted turn groups in the current game (0 during setup)."""
        return self.view.turns

    @property
    def state(self):
        """The engine state, or None during setup."""
        return self.view.state

    @property
    def saved_to(self) -> str:
        """Where the finished game's record was saved ("" not yet)."""
        return self.view.saved_to


@dataclass(frozen=True)
class BoxAnswer:
    """The box's search answered request ``key`` with ``answer`` (a ``BoxMove`` or the
    exception it raised); posted by the search thread."""

    key: int
    answer: object


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
    ``notifier``: an ``sdnotify.Notifier`` or None; ``wall``: the wall clock (an
    aware ``datetime``) for the records' start and end times; ``feed``: a
    ``feed.FeedPublisher`` handed a capture after every rebuild (never waited for),
    or None; ``planner``: the box's search, ``(BoxRequest, clock) -> BoxMove``
    (``ai.table``), run on a thread of its own for each request, its answer posted
    back (a newer request, or any change after which the table would drop the answer,
    ends the search early: its clock jumps past the budget); None: no game against the
    box and no hints.

    The journal, the snapshot and the history of finished games are the
    :class:`~.keeper.Keeper`'s (``self.keeper``; ``self.journal`` and
    ``self.history`` are its): a write the disk refuses is kept in memory and
    tried again every few seconds (:data:`~.keeper.RETRY_S`).

    The table (``companion.table.Table``) is the loop's alone: everything else reads
    :attr:`view` (on the loop thread, e.g. through :meth:`call`) or :attr:`status`.
    The warnings shown in the OLED's corner are the loop's (``self.warnings``, key ->
    full text); ``known_names()`` gives the stored player names the table offers at
    setup (``companion.names``; default: none).
    """

    def __init__(self, cfg: dict, parts, folder: str | Path, *, clock: Callable[[], float] = time.monotonic,
                 deal: Callable | None = None, notifier=None,
                 wall: Callable[[], datetime] = lambda: datetime.now().astimezone(), feed=None,
                 planner: Callable | None = None):
        self.cfg = cfg
        self.parts = parts
        self.clock = clock
        self.wall = wall
        self.folder = Path(folder)
        self.queue: queue.SimpleQueue = queue.SimpleQueue()
        self.keeper = Keeper(self.folder, clock, wall, lambda: self.post(None))
        self.warnings: dict[str, str] = {}
        self.journal = self.keeper.journal
        self.history = self.keeper.history
        self.buttons = ButtonClassifier(cfg["buttons"]["hold_seconds"],
                                        cfg["buttons"]["debounce_ms"] / 1000)
        sensor = cfg["sensor"]
        self.watch = TokenWatch(sensor["stable_ms"] / 1000, sensor["guidance_seconds"],
                                stop_s=sensor["stop_seconds"])
        self.planner = planner
        self._search_over = threading.Event()     # set: the running search is not needed
        self._searching: int | None = None        # the key of the request being searched
        self.table = Table(deal or _random_deal, can_think=planner is not None)
        self._view: TableView | None = None       # the table's view, until its next input
        self.known_names: Callable[[], list[str]] = list
        self._doers = {Journal: self._journal, SaveRecord: self._save, AskBox: self._ask_box,
                       ForgetReading: self._forget}
        self.notifier = notifier
        self.feed = feed              # a feed.FeedPublisher (its own thread) or None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._last_screen: Screen | None = None
        self._last_lights: Lights | None = None
        self._last_hand: Hand | None = None
        self._reading: frozenset[int] | None = None   # the sensor's latest spaces, stable or not
        self._last_verdict = None
        self._changed = True          # the table or a warning changed: rebuild screen and lights
        self._layouts: dict[int, LedLayout] = {}
        self._channel_maps: dict[int, ChannelMap] = {}
        self._next_watchdog = 0.0
        self._seq = 0
        self._pin_until: float | None = None   # a web PIN is shown on the OLED until then
        self.status: Status | None = None
        self.ready = threading.Event()
        self.problems: list[str] = []
        self.on_sensor_needs: Callable | None = None   # (channels, game name): told on change
        self._needs_told: tuple | None = None

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

    def _think(self, request) -> None:
        """Start the box's search for ``request`` on a thread of its own (the loop goes on);
        its answer, or the error it raised, is posted back as a :class:`BoxAnswer`. The
        search still running for an older request is ended (its answer is stale)."""
        self._search_over.set()
        over = self._search_over = threading.Event()
        self._searching = request.key

        def clock() -> float:
            """The search's seconds; past any budget once a newer request came."""
            return math.inf if over.is_set() else time.perf_counter()

        def work():
            """Search, then post the answer to the loop."""
            try:
                answer = self.planner(request, clock)
            except Exception as exc:  # noqa: BLE001  said on the OLED, the game goes on
                LOG.exception("the box's search failed")
                answer = exc
            self.post(BoxAnswer(request.key, answer))
        threading.Thread(target=work, name="box-search", daemon=True).start()

    def resume(self) -> list[str]:
        """Load the journal and rebuild the game; returns the problems found (for the log/OLED).

        Says when the folder is not writable; repairs damaged journal files
        (quarantined first); files a game that ended before a restart if its record
        is not in the history yet. Reads nothing of the history.
        """
        self.problems = []
        with _start_timeout_extended(self.notifier):    # a huge journal must not get us killed
            loaded = self.keeper.load(self._problem)
        self._outcomes()
        self._take_parts(self.parts.failures)
        self._resume_entries(loaded.entries)
        self.keeper.resumed(self.view)
        self._outcomes()
        return self.problems

    def parts_built(self, failures: list[str]) -> None:
        """On the loop thread (:meth:`call`), once ``Parts.finish`` built the parts
        left for after start-up: report their ``failures`` (the strings of
        ``Parts.failures``) as :meth:`resume` does and show the game on them."""
        self._take_parts(failures)
        self._refresh(self.clock(), force=True)

    def _take_parts(self, failures: list[str]) -> None:
        """Report start ``failures`` (problems and OLED warnings); watch the outputs."""
        for failure in failures:
            self.problems.append(failure)
            self._warn(failure.split(" failed")[0], failure.split(":")[0])
        for part in (self.parts.strip, self.parts.oled):
            if part is not None:
                part.on_failure = lambda _part: self.post(None)   # wake the loop to say so

    def _problem(self, text: str) -> None:
        LOG.warning("%s", text)
        self.problems.append(text)

    def _resume_entries(self, entries: list[dict]) -> None:
        """Rebuild the UI from the longest prefix of ``entries`` that replays; an entry
        that does not (a bug, a changed catalogue) is reported and cut off, never fatal
        (the journal keeps its bytes in quarantine)."""
        for keep in range(len(entries), -1, -1):
            try:
                effects = self.table.resume(entries[:keep])
            except Exception as exc:  # noqa: BLE001  any replay error: keep the good prefix
                error = exc
                continue
            if keep < len(entries):
                self._problem(f"{self.journal.path}: entry {keep + 1} of the game cannot be "
                              f"replayed ({type(error).__name__}: {error}); resumed from the "
                              f"entry before it")
                self._warn("journal damage", _cut_off_text(entries, keep))
                self.journal.reset_to(entries[:keep])
            self._fed(effects, self.clock())
            break

    def start(self) -> "Service":
        """Resume and run the loop on its own thread; returns once it runs (READY) and the
        first frame went to the parts built so far."""
        self.resume()
        self._thread = threading.Thread(target=self.run, name="companion-loop", daemon=True)
        self._thread.start()
        self.ready.wait(10)
        return self

    def stop(self, timeout: float = 5.0) -> None:
        """Stop the loop (from another thread) and wait for it."""
        self._stop.set()
        self._search_over.set()         # a search of the box still running ends too
        self.post(None)
        if self._thread is not None:
            self._thread.join(timeout)
        self.keeper.stop()

    def step(self) -> float | None:
        """One turn of the loop on the calling thread: every queued event, then the timers;
        returns the seconds until the next timer is due (None: nothing is due).

        For simulations that own the clock (a stepping clock) and call :meth:`resume`
        instead of :meth:`start`; never while the loop thread runs.
        """
        if self.status is None:
            self._refresh(self.clock(), force=True)
        self._turn(None, self.clock())
        return self._timeout(self.clock())

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
            try:
                self._turn(event, now)
            except Exception:  # noqa: BLE001  one bad event must never stop the game
                LOG.exception("the event loop caught an error; the game goes on")
                self._warn("loop", "internal error: see log")

    def _turn(self, event, now: float) -> None:
        """One turn of the loop: the event, every event already queued, then the timers."""
        if event is not None:
            self._handle(event, now)
        for _ in range(256):            # every edge already queued before the timers:
            try:                        # a release waiting behind a late loop is
                event = self.queue.get_nowait()   # never taken for a hold
            except queue.Empty:
                break
            if event is not None:
                self._handle(event, self.clock())
        self._tick(now)
        self._end_unneeded_search()

    def _end_unneeded_search(self) -> None:
        """After every turn of the loop: a search whose answer the table would now drop (an
        undo or any other change while the box thinks, a hint left) is told to stop, so it
        frees its core at its next iteration instead of running out its budget."""
        if self._searching is not None and self.view.box.wanted != self._searching:
            self._search_over.set()
            self._searching = None

    # ----- the loop's work ---------------------------------------------------------------
    def _timeout(self, now: float) -> float | None:
        deadlines = [self.buttons.next_deadline(), self.watch.next_deadline(now), self._pin_until,
                     self._next_watchdog if self._watchdog_period() else None, self.keeper.retry_at]
        due = [d - now for d in deadlines if d is not None]
        due += [h for h in (p.hang_in() for p in self._outputs()) if h is not None]
        return max(0.0, min(due)) if due else None    # nothing due: sleep until an event

    def _touch(self) -> None:
        """Something shown may have changed: the next refresh rebuilds the screen and the
        lights (when nothing happened, a tick leaves the outputs alone)."""
        self._changed = True

    @property
    def view(self) -> TableView:
        """The table's view now (loop thread only; taken once per change of the table)."""
        if self._view is None:
            self._view = self.table.view()
        return self._view

    # ----- the table's effects and the keeper's outcomes ------------------------------------
    def _fed(self, effects: list, now: float) -> None:
        """The table took an input and returned ``effects``: carry them out in order."""
        self._view = None
        self._touch()
        for effect in effects:
            self._doers[type(effect)](effect, now)

    def _journal(self, effect: Journal, now: float) -> None:
        """Write the entry before anything shows it; a refusal is a warning (the keeper
        keeps the entry and retries)."""
        try:
            self.keeper.write(effect.body)
        except JournalError as exc:
            self._outcomes()
            self._warn("journal", exc.notice)    # "not saving: disk full (/folder)"
        else:
            self._outcomes()
            self._clear("journal")

    def _save(self, effect: SaveRecord, now: float) -> None:
        """File the finished game; tell the table where its record went."""
        try:
            path = self.keeper.save_record(effect.game)
        except OSError as exc:
            path = ""
            self._warn("record", f"record not saved: {exc.strerror or exc}")
        self._outcomes()
        self._tell_saved(path)

    def _ask_box(self, effect: AskBox, now: float) -> None:
        self._think(effect.request)

    def _forget(self, effect: ForgetReading, now: float) -> None:
        self.watch.consume(now)     # the board as it is makes no move

    def _outcomes(self) -> None:
        """Apply what the keeper reports: warnings, and where a record went."""
        outcomes = self.keeper.outcomes()
        if outcomes:
            self._touch()
        for outcome in outcomes:
            if isinstance(outcome, Saved):
                self._tell_saved(outcome.path)
            elif outcome.text is None:
                self._clear(outcome.key)
            else:
                self._warn(outcome.key, outcome.text)

    def _tell_saved(self, path: str) -> None:
        self.table.record_saved(path)
        self._view = None
        self._touch()

    def _warn(self, key: str, text: str) -> None:
        """Show warning ``text`` under ``key`` (the OLED's corner, the feed, the log's words)."""
        if self.warnings.get(key) != text:
            self.warnings[key] = text
            self._touch()
        self.table.sensor_status("sensor" not in self.warnings)

    def _clear(self, key: str) -> None:
        """Take the warning under ``key`` away (if shown)."""
        if self.warnings.pop(key, None) is not None:
            self._touch()
        self.table.sensor_status("sensor" not in self.warnings)

    def sensor_status(self, online: bool, reason: str = "") -> None:
        """The sensor link is online or not (``reason``: why, shown while offline); loop
        thread (or before the loop runs). Without a sensor, the buttons alone take moves."""
        if online:
            self._clear("sensor")
        else:
            self._warn("sensor", reason or "sensor offline")

    def _wall_text(self) -> str:
        return self.wall().isoformat(timespec="seconds")

    def _gesture(self, gesture, now: float) -> None:
        """Hand one button gesture to the table (with the stored names when it asks)."""
        names = tuple(self.known_names()) if self.view.asks_names else ()
        self._fed(self.table.gesture(gesture, self._wall_text(), names), now)

    def _handle(self, event, now: float) -> None:
        if isinstance(event, SensorOccupancy):
            spaces = self._spaces(event.occupied)
            if spaces == self._reading:     # a heartbeat repeating the board: nothing to do
                return
            self._reading = spaces          # lit at once (the hand), judged once stable
        self._touch()
        if isinstance(event, RawButton):
            for gesture in self.buttons.edge(event.button, event.pressed, event.at):
                self._gesture(gesture, now)
        elif isinstance(event, SensorOccupancy):
            self.watch.reading(self._reading, now)
        elif isinstance(event, SensorStatus):
            self.sensor_status(event.online, event.reason)
            if not event.online:
                # nobody watches the board now: the last reading (maybe half a slide) must
                # not become "stable" by time alone; the snapshot after the link is back will
                # be judged afresh (a consumed reading stays consumed)
                self.watch.occupied = None
                self._reading = None
            if event.online and event.degraded:      # warn before the link is declared dead
                self._warn("sensor link", "sensor link errors")
            else:
                self._clear("sensor link")
        elif isinstance(event, ShowPin):       # display only: the game is not touched
            self._warn(PIN_WARNING, f"PIN {event.pin}")
            self._pin_until = now + event.seconds
        elif isinstance(event, BoxAnswer):
            self._fed(self.table.box_answer(event.key, event.answer), now)
        elif isinstance(event, _Call):
            try:
                event.result = event.fn()
            except BaseException as exc:  # noqa: BLE001  handed back to the caller
                event.error = exc
            event.done.set()

    def _tick(self, now: float) -> None:
        if self._pin_until is not None and now >= self._pin_until:
            self._pin_until = None
            self._clear(PIN_WARNING)
            self._touch()
        for gesture in self.buttons.tick(now):
            self._touch()
            self._gesture(gesture, now)
        self._judge(now)
        for part in self._outputs():
            part.check()
            self._part_warning(part)
        self._refresh(now)
        self.keeper.tick(now)       # the snapshot once the turn is shown; retries when due
        self._outcomes()
        self._feed_watchdog(now)

    def _judge(self, now: float) -> None:
        """Judge the board against the table's expectation; a new verdict goes to the table."""
        view = self.view
        expect = view.expectation
        if expect is None:
            return
        verdict = self.watch.judge(expect, now)
        key = (verdict, expect, view.mode, view.turns)
        if key != self._last_verdict:
            self._last_verdict = key
            self._fed(self.table.verdict(verdict, self._wall_text()), now)

    def _refresh(self, now: float, force: bool = False) -> None:
        if not (force or self._changed):      # only time passed: the strip animates itself
            return
        self._changed = False
        view = self.view
        screen = build_screen(view, self.warnings.values())
        lights = build_lights(view)
        hand = hand_of(lights, self._reading)
        led_ticket = None
        if force or lights != self._last_lights or hand != self._last_hand:
            led_ticket = self._show_leds(lights, hand)
        if force or screen != self._last_screen:
            self._last_screen = screen
            if self.parts.oled is not None:
                after = (self.parts.strip, led_ticket) if led_ticket is not None else None
                # drawn on the OLED's thread, after the LED frame went out: the loop and
                # the strip never wait for the image
                pager = _LazyPager(screen)  # a screen too full for once alternates pages
                self.parts.oled.submit(Animation(pager.frame, pager.next_at), after)
        self._publish(view, screen, lights)     # after every rebuild: what is shown now

    def _show_leds(self, lights: Lights, hand: Hand | None) -> int | None:
        """Hand new lights (and the token in the hand, lit before its reading is stable)
        to the strip's output thread, which draws their first frame at once and then
        animates them (pulse, blink, chase; at most ``leds.fps`` frames a second, frames
        computed once per slot, drawn only when they change); returns the first
        frame's ticket (None: no strip)."""
        self._last_lights, self._last_hand = lights, hand
        if self.parts.strip is None:
            return None
        frames = LedFrames(lights, self._layout(lights.last_space), hand, self.cfg["leds"]["fps"])
        return self.parts.strip.submit(Animation(frames.render, frames.next_at))

    def _outputs(self) -> list:
        return [p for p in (self.parts.strip, self.parts.oled) if p is not None]

    def _part_warning(self, part) -> None:
        """Show a part's failure on the OLED, and take the warning away once it writes again."""
        if part.failed:
            self._warn(part.name, part.failed)
        else:
            self._clear(part.name)

    def _channel_map(self, last: int) -> ChannelMap:
        """The sensor's channel map for a board whose last space is ``last`` (``sensor.map``
        or ``sensor.map_express``; config already checked it)."""
        channel_map = self._channel_maps.get(last)
        if channel_map is None:
            spec = self.cfg["sensor"]["map" if last == 53 else "map_express"]
            channel_map = self._channel_maps[last] = ChannelMap.parse(spec, last)
        return channel_map

    def sensor_needs(self) -> tuple[int, str]:
        """``(channels, game)``: how many sensor channels the game being played (or
        chosen) reads through its map, and its name; during setup the smaller need
        of the two games. The sensor link refuses a sensor with fewer (hardware/protocol.md)."""
        view = self.view
        game = view.state.spec.game if view.state is not None else view.choice.get("game")
        needs = {"patchwork": 53, "patchwork-express": 29}
        if game not in needs:
            return min(self._channel_map(53).needs(), self._channel_map(29).needs()), "the game"
        name = "Patchwork" if game == "patchwork" else "Patchwork Express"
        return self._channel_map(needs[game]).needs(), name

    def _spaces(self, channels: frozenset[int]) -> frozenset[int]:
        """Sensor channels -> time-board spaces through ``sensor.map`` (identity when unset)."""
        state = self.view.state
        return self._channel_map(state.spec.last_space if state is not None else 53).spaces(channels)

    def _layout(self, last_space: int) -> LedLayout:
        layout = self._layouts.get(last_space)
        if layout is None:
            leds = self.cfg["leds"]
            spec = leds["map"] if last_space == 53 else leds["map_express"]
            layout = LedLayout.parse(spec, leds["count"], last_space)
            self._layouts[last_space] = layout
        return layout

    def _publish(self, view: TableView, screen: Screen, lights: Lights) -> None:
        if self.on_sensor_needs is not None:
            needs = self.sensor_needs()
            if needs != self._needs_told:
                self._needs_told = needs
                self.on_sensor_needs(*needs)
        self._seq += 1
        self.status = Status(view, screen, lights, tuple(self.warnings.values()), self._seq)
        if self.feed is not None:              # immutable values only; built on its thread
            self.feed.submit(capture_view(view, self.warnings, screen, lights))

    def _watchdog_period(self) -> float | None:
        return self.notifier.watchdog_period() if self.notifier is not None else None

    def _feed_watchdog(self, now: float) -> None:
        period = self._watchdog_period()
        if period and now >= self._next_watchdog:
            self.notifier.watchdog()
            self._next_watchdog = now + period

class _LazyPager:
    """The OLED pages of ``screen`` (``view.oled.Pager``), made on the OLED's thread at
    its first frame: the fonts and the drawing code are not needed to start without an
    OLED, nor before the first frame."""

    def __init__(self, screen: Screen):
        self.screen = screen
        self._pager = None

    def _get(self):
        if self._pager is None:
            from ..view.oled import Pager
            self._pager = Pager(self.screen)
        return self._pager

    def frame(self, now: float):
        """The image shown at ``now`` (see ``Pager.frame``)."""
        return self._get().frame(now)

    def next_at(self, now: float) -> float | None:
        """When the next page is due, or None (see ``Pager.next_at``)."""
        return self._get().next_at(now)



EXTEND_S = 30.0        #: each EXTEND_TIMEOUT_USEC asks systemd for this many more seconds
EXTEND_EVERY_S = 10.0  #: and is sent again this often while the journal loads


def _cut_off_text(entries: list[dict], keep: int) -> str:
    """The OLED text when the game resumed from ``entries[:keep]`` because entry ``keep``
    does not replay: the turns cut off are lost ("turns 7-8 lost; resumed at turn 6");
    "journal repaired" only when no turn was cut off."""
    def turns(part: list[dict]) -> int:
        """How many turn entries ``part`` holds."""
        return sum(1 for e in part if e.get("kind") == "turn")
    cut = turns(entries[keep:])
    return lost_text(turns(entries[:keep]), cut) if cut else "journal repaired"


@contextmanager
def _start_timeout_extended(notifier):
    """While the body runs (loading the journal: seconds for a large journal of the old
    design on a Pi Zero 2 W), send systemd ``EXTEND_TIMEOUT_USEC`` at once and then every
    :data:`EXTEND_EVERY_S`, so the unit's TimeoutStartSec does not kill a start that is
    still working and restart it in a loop. Never extends the limit below the unit's
    own (systemd's rule). ``notifier``: an ``sdnotify.Notifier`` or None (nothing sent)."""
    if notifier is None:
        yield
        return
    done = threading.Event()

    def keep_extending():
        """Ask for more time until the body is done (its own thread)."""
        while True:
            notifier.extend_timeout(EXTEND_S)
            if done.wait(EXTEND_EVERY_S):
                return

    thread = threading.Thread(target=keep_extending, name="start-timeout-extender", daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join()


def _random_deal(game: str):
    """A fresh shuffled circle (and Express blue order) from the OS's randomness."""
    return deal_circle(load_spec(game), random.SystemRandom().randrange(2**63))
