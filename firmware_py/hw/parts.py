"""Adapters for the buttons, the LED strip and the OLED, each given its library object.

Each adapter is built around the real library object (a gpiozero pin factory, a
``neopixel.NeoPixel``, a luma device) and never lets a hardware error reach
the game loop. An output part whose write raises (a loose I2C wire, a brown-out
on the strip) is retried with back-off on its own thread and shows the frame
of that moment as soon as a write goes through again; only a part that keeps
failing for ``FAIL_SECONDS`` (or hangs in a call) is marked failed, with a
reason the service shows on the OLED and logs, and the game goes on without it
(design 3). A failed part is still retried, and its warning goes once it
writes again.
"""
from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass
from itertools import compress, count
from operator import ne
from typing import Callable

LOG = logging.getLogger(__name__)

HANG_SECONDS = 2.0     #: a driver call running longer than this marks its part failed
CLOSE_SECONDS = 1.0    #: how long :meth:`Part.close` waits for a busy driver
ORDER_SECONDS = 0.25   #: how long an OLED frame waits for the LED frame submitted before it
RETRY_FIRST = 0.05     #: seconds before the first retry after a failed write
RETRY_MAX = 0.8        #: the longest wait between retries (a recovered part shows within this)
FAIL_SECONDS = 1.5     #: writes failing for this long (and 3 times or more) mark the part failed
_WOKEN = object()      #: the output thread woke up (new frame, closing or an animation due)


@dataclass(frozen=True)
class RawButton:
    """A raw button edge posted by the gpiozero callback thread: ``button``
    ("next"/"ok"/"back"), ``pressed`` (True on press), ``at`` (clock seconds)."""

    button: str
    pressed: bool
    at: float


@dataclass(frozen=True)
class Animation:
    """Frames drawn on the part's output thread, for :meth:`Part.submit`:
    ``render(now)`` is the frame at ``now`` (``time.monotonic()`` seconds) and
    ``next_at(now)`` when it may next differ (None: it stays as it is until the
    next submission, e.g. an OLED screen drawn once)."""

    render: Callable[[float], object]
    next_at: Callable[[float], float | None]


class Part:
    """Base of an output part: ``name``, ``failed`` (a reason, or "").

    :meth:`show` hands a frame to the driver on the calling thread. The
    service uses :meth:`submit` instead: frames go to the part's own output
    thread, which keeps only the latest one, so a slow or hanging driver never
    blocks the game loop; an :class:`Animation` is played there too (a pulsing
    LED needs no work from the loop). A write that raises is tried again
    after ``RETRY_FIRST`` seconds, doubling up to ``RETRY_MAX``, with the
    newest frame (an animation's frame of that moment); writes failing for
    ``FAIL_SECONDS`` mark the part failed. :meth:`check` (called by the loop)
    marks the part failed when one driver call has run for ``HANG_SECONDS``;
    ``on_failure`` (set by the service, called from any thread) is told when
    the part fails and when a failed part writes again.
    """

    name = "part"

    def __init__(self):
        self.failed = ""
        self.on_failure: Callable[["Part"], None] | None = None
        self._cond = threading.Condition()
        self._thread: threading.Thread | None = None
        self._pending: tuple | None = None    # (ticket, frame, (part, ticket) to wait for)
        self._tickets = 0                     # frames submitted so far
        self._done = 0                        # ticket of the last frame handed and returned
        self._busy_since: float | None = None  # time.monotonic() since a frame is in flight
        self._closing = False
        self._last_frame = None               # the last frame of an animation shown
        self._retry_at: float | None = None   # back-off: no write before this time
        self._retry_item = None               # what to write then (unless a newer frame came)
        self._failing_since: float | None = None
        self._failures = 0                    # failed writes in a row
        self.writes_failed = 0                #: failed writes since start (for tests, logs)
        self.write_error = ""                 #: why the last write failed ("" once one went out)
        self.on_frame: Callable | None = None  #: sees every frame that went out
        # wakes the output thread: a raw lock used as a binary semaphore (held = nothing
        # new); an animation's timed wait on it costs half of a Condition's timed wait
        self._wake = threading.Lock()
        self._wake.acquire()

    def _write(self, frame) -> None:         # pragma: no cover - overridden
        """Hand ``frame`` to the driver (may raise whatever the driver raises)."""

    def _close_driver(self) -> None:         # pragma: no cover - overridden
        """Switch the hardware off (never raises)."""

    def show(self, frame) -> bool:
        """Hand ``frame`` to the driver now; True when it went out. Never raises: a
        failed write schedules a retry (see the class) and may mark the part failed."""
        with self._cond:
            self._busy_since = time.monotonic()
        try:
            self._write(frame)
        except Exception as exc:  # noqa: BLE001  a driver may raise anything
            self._write_failed(exc)
            return False
        finally:
            with self._cond:
                self._busy_since = None
        self._wrote()
        if self.on_frame is not None:
            self.on_frame(frame)
        return True

    def _write_failed(self, exc: BaseException) -> None:
        """Count a failed write, schedule the retry, mark failed once it keeps failing."""
        now = time.monotonic()
        self.write_error = f"{self.name} failed: {type(exc).__name__}"
        self.writes_failed += 1
        self._failures += 1
        if self._failing_since is None:
            self._failing_since = now
            LOG.warning("%s: write failed (%s: %s); retrying", self.name, type(exc).__name__, exc)
        delay = min(RETRY_MAX, RETRY_FIRST * 2 ** (self._failures - 1))
        with self._cond:
            self._retry_at = now + delay
        if now - self._failing_since >= FAIL_SECONDS and self._failures >= 3:
            self._fail(exc)

    def _wrote(self) -> None:
        """A write went through: forget the failures; a failed part is back."""
        self.write_error = ""
        if self._failing_since is None and not self.failed:
            return
        LOG.warning("%s: writing again after %d failed writes", self.name, self._failures)
        self._failing_since, self._failures = None, 0
        if self.failed:
            self.failed = ""
            self._tell()

    def _fail(self, exc: BaseException | str) -> None:
        """Mark the part failed (the first reason stays while it keeps failing)."""
        if self.failed:
            return
        LOG.error("%s failed: %s", self.name, exc)
        self.failed = (f"{self.name} failed: {exc}" if isinstance(exc, str)
                       else f"{self.name} failed: {type(exc).__name__}")
        self._tell()

    def _tell(self) -> None:
        if self.on_failure is not None:
            try:
                self.on_failure(self)
            except Exception:  # noqa: BLE001  the listener's bug must not kill an output thread
                LOG.exception("%s: on_failure listener failed", self.name)

    # ----- the output thread --------------------------------------------------------
    def submit(self, frame, after: tuple["Part", int] | None = None) -> int:
        """Queue ``frame`` for the output thread and return its ticket; never blocks.

        Only the latest frame waiting is kept (an older one not yet handed to
        the driver is dropped). ``frame`` may be an :class:`Animation`: its
        first frame goes out at once (that is the ticket), later ones when due
        and different, until the next submission. ``after`` = (part, ticket): hand this frame over
        only once that part's frame ``ticket`` went out (or ``ORDER_SECONDS``
        passed), so an OLED frame follows the LED frame of the same change.
        """
        with self._cond:
            if self._closing:
                return self._tickets
            self._tickets += 1
            self._pending = (self._tickets, frame, after)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name=f"output-{self.name}",
                                                daemon=True)
                self._thread.start()
            self._signal()
            return self._tickets

    def _signal(self) -> None:
        """Wake the output thread (a second signal before it woke is the same one)."""
        try:
            self._wake.release()
        except RuntimeError:                  # already signalled
            pass

    @property
    def tickets(self) -> int:
        """The ticket of the last frame submitted (0: none yet), for :meth:`wait_sent`."""
        with self._cond:
            return self._tickets

    def wait_sent(self, ticket: int, timeout: float) -> bool:
        """Wait until frame ``ticket`` (or a later one) went out, the part failed, or ``timeout``."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while self._done < ticket and not self.failed:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._cond.wait(left)
            return True

    def flush(self, timeout: float = CLOSE_SECONDS) -> bool:
        """Wait until every submitted frame went out (True) or ``timeout`` passed (False)."""
        return self.wait_sent(self._tickets, timeout)

    def hang_in(self) -> float | None:
        """Seconds until the frame in flight counts as hung (0 when it does), or None."""
        with self._cond:
            since = self._busy_since
        if since is None or self.failed:
            return None
        return max(0.0, since + HANG_SECONDS - time.monotonic())

    def check(self) -> str:
        """Mark the part failed if a frame has been in flight for ``HANG_SECONDS``; returns ``failed``."""
        if self.hang_in() == 0.0:
            self._fail(f"no answer for {HANG_SECONDS:g} s")
        return self.failed

    def _run(self) -> None:
        playing, due = None, None             # the animation being played, its next frame
        while True:
            job = self._take(playing, due)
            if job is None:
                return
            if job is _WOKEN:
                continue
            ticket, item, after, fresh = job
            if after is not None:
                after[0].wait_sent(after[1], ORDER_SECONDS)
            frame, playing = self._frame_of(item)
            if frame is not None and (fresh or frame != self._last_frame):
                if self.show(frame):
                    self._last_frame = frame if playing is not None else None
                else:                           # try again later, with the newest frame
                    self._last_frame = None
                    self._retry_item = item
            with self._cond:                    # said sent at once: an OLED frame waiting
                self._done = max(self._done, ticket)   # for it need not wait for the pulse
                self._cond.notify_all()
            due = self._due(playing)            # after the frame went out: a change shows first

    def _take(self, playing, due: float | None):
        """The next job (ticket, item, after, fresh): the frame submitted, else the
        frame a retry is for, else the animation's next frame once ``due``; during a
        back-off nothing is written before it ends; None when closing with nothing
        queued; ``_WOKEN`` after waiting (the caller asks again)."""
        with self._cond:
            if self._closing and self._pending is None:
                return None
            now = time.monotonic()
            if self._retry_at is not None and now < self._retry_at and not self._closing:
                left = self._retry_at - now         # backing off after a failed write
            else:
                retry = None
                if self._retry_at is not None:
                    self._retry_at = None
                    retry, self._retry_item = self._retry_item, None
                if self._pending is not None:
                    ticket, item, after = self._pending
                    self._pending = None
                    return ticket, item, after, True
                if retry is not None:
                    return self._done, retry, None, True
                left = None if due is None else due - now
                if left is not None and left <= 0:  # the next frame of the animation
                    return self._done, playing, None, False
        self._wake.acquire(True, -1 if left is None else left)
        return _WOKEN

    def _frame_of(self, item) -> tuple:
        """(frame to show, animation playing or None); None, None if the renderer failed."""
        if not isinstance(item, Animation):
            return item, None
        try:
            return item.render(time.monotonic()), item
        except Exception as exc:  # noqa: BLE001  a renderer bug must not kill the thread
            self._fail(exc)
            return None, None

    def _due(self, playing: Animation | None) -> float | None:
        """When the animation's next frame is due (None: nothing plays, or it stays).
        Asked only after the current frame was handed to the driver, so the work of
        preparing the rest of an animation never delays the first frame of a change."""
        if playing is None:
            return None
        try:
            return playing.next_at(time.monotonic())
        except Exception as exc:  # noqa: BLE001  a renderer bug must not kill the thread
            self._fail(exc)
            return None

    def close(self) -> None:
        """Send what is queued, then switch the part off; waits at most ``CLOSE_SECONDS``
        for a busy driver (a hung one is left behind, never waited for)."""
        with self._cond:
            self._closing = True
            thread = self._thread
            self._cond.notify_all()
            self._signal()
        if thread is not None:
            thread.join(CLOSE_SECONDS)
            if thread.is_alive():
                LOG.warning("%s: driver still busy at shutdown; not switched off", self.name)
                return
        if not self.failed:
            self._close_driver()


class PinError(RuntimeError):
    """A button's GPIO line could not be claimed: ``button`` ("next"/"ok"/"back"), ``pin``
    (BCM number) and the library's error. The text names all three, e.g. "BCM 27 (OK
    button): GPIO busy"; :func:`.diagnose.cause` turns a busy line into what to do."""

    def __init__(self, button: str, pin: int, error: BaseException):
        super().__init__(f"BCM {pin} ({button.upper()} button): {error}")
        self.button, self.pin, self.error = button, pin, error


class ButtonPanel:
    """The NEXT/OK/BACK push buttons as gpiozero input devices.

    ``pins``: {"next": BCM, "ok": BCM, "back": BCM}; buttons wire to GND and use
    the internal pull-up. gpiozero's own debounce is off (its mock pins ignore
    it anyway, design 6): every raw edge is posted as :class:`RawButton` with
    ``clock()`` time and classified by :mod:`firmware_py.companion.buttons`,
    which also decides holds; so each button is a ``DigitalInputDevice`` (a
    ``Button`` without its hold thread, which polls ten times a second).
    Raises :class:`PinError` naming the button and its BCM pin when a pin cannot be
    claimed (gpiozero's or the pin library's error is its cause); the pins claimed
    before it are released.
    """

    def __init__(self, pins: dict[str, int], post: Callable[[object], None],
                 clock: Callable[[], float], pin_factory=None):
        from gpiozero import DigitalInputDevice
        self.buttons = {}
        self.pins = dict(pins)
        for name, pin in pins.items():
            try:
                button = DigitalInputDevice(pin, pull_up=True, bounce_time=None,
                                            pin_factory=pin_factory)
            except Exception as exc:
                self.close()
                raise PinError(name, pin, exc) from exc
            button.when_activated = self._edge(name, True, post, clock)
            button.when_deactivated = self._edge(name, False, post, clock)
            self.buttons[name] = button

    @staticmethod
    def _edge(name: str, pressed: bool, post, clock):
        def callback():
            """Post this button's raw edge with the clock's time (gpiozero's thread)."""
            post(RawButton(name, pressed, clock()))
        return callback

    def close(self) -> None:
        """Release the GPIO pins."""
        for button in self.buttons.values():
            button.close()


class LedStrip(Part):
    """The WS2812 strip through a ``neopixel.NeoPixel`` created with ``auto_write=False``.

    :meth:`show` writes a whole frame (a list of (r, g, b) 0..255 per LED
    index) and sends it once. ``on_frame`` (optional) sees every frame sent.
    """

    name = "LED strip"

    def __init__(self, pixels, on_frame: Callable | None = None):
        super().__init__()
        self.pixels = pixels
        self.on_frame = on_frame
        self._sent: list | None = None      # the last frame shown in full

    def _write(self, frame: list[tuple[int, int, int]]) -> None:
        """Send ``frame`` (only the LEDs that changed are set); raises what the driver raises."""
        pixels, last = self.pixels, self._sent
        self._sent = None                            # unknown until show() returns
        changed = (range(len(frame)) if last is None or len(last) != len(frame)
                   else compress(count(), map(ne, frame, last)))   # compared in C
        for i in changed:                            # only the LEDs that changed
            pixels[i] = frame[i]
        pixels.show()
        self._sent = list(frame)

    def _close_driver(self) -> None:
        """Switch every LED off (on shutdown, so a stopped service leaves nothing lit)."""
        try:
            self.pixels.fill((0, 0, 0))
            self.pixels.show()
        except Exception as exc:  # noqa: BLE001
            self._fail(exc)
            return
        if self.on_frame is not None:            # the dark frame is a frame sent, too
            self.on_frame([(0, 0, 0)] * len(self.pixels))


class Oled(Part):
    """The OLED through a luma device (ssd1306/sh1106, 128x64).

    :meth:`show` hands a whole 128x64 mode "1" image to ``device.display``.
    ``on_frame`` (optional) sees every image shown. ``device`` may be None (the
    OLED did not answer at start): then ``build()`` makes it at the next write,
    so an OLED absent at start is retried like one that failed later (with the
    same back-off) and shows the game as soon as it answers.
    """

    name = "OLED"

    def __init__(self, device, on_frame: Callable | None = None,
                 build: Callable[[], object] | None = None):
        super().__init__()
        self.device = device
        self.on_frame = on_frame
        self._build = build

    def _write(self, image) -> None:
        """Display ``image`` (making the device first when it is not there yet); raises
        what the library or the bus raises."""
        if self.device is None:
            if self._build is None:
                raise RuntimeError("no display device")
            self.device = self._build()
        self.device.display(image)

    def _close_driver(self) -> None:
        """Clear and switch the display off (on shutdown)."""
        if self.device is None:
            return
        try:
            self.device.clear()
            self.device.hide()
        except Exception as exc:  # noqa: BLE001
            self._fail(exc)
            return
        if self.on_frame is not None:            # the cleared screen is a frame sent, too
            from PIL import Image
            self.on_frame(Image.new("1", (self.device.width, self.device.height)))
