"""The simulator's hands: keys in, mock button pins and simulated token moves out.

Two small background threads, so the UI thread never waits:

- :class:`Fingers` presses and holds the NEXT/OK/BACK buttons through the real
  gpiozero mock pins (``drive_low`` ... ``drive_high``), one gesture after the
  other in the order the keys came, so no key press is lost or reordered;
- :class:`TokenHand` keeps where the two physical time tokens are (and the one
  in the air) and sends the moves to the simulated sensor process. Steps made
  with the arrow keys become one slide once the keys pause (as a hand slides a
  token across several spaces and lets go), so a slow key press never stops
  the token on a space it only passes.
"""
from __future__ import annotations

import queue
import threading
import time
from typing import Callable

from ..companion.model import GREEN, YELLOW

TOKENS = (GREEN, YELLOW)        #: the sim sensor's token 0 is green, token 1 yellow
PRESS_S = 0.06                  #: how long a short press keeps the pin low
GAP_S = 0.05                    #: pause between two gestures
HOLD_EXTRA_S = 0.3              #: a hold lasts hold_seconds plus this
SLIDE_IDLE_S = 0.5              #: arrow keys quiet this long: the hand lets go
MAX_QUEUED = 40                 #: gestures or moves waiting beyond this are dropped


class _Worker:
    """A daemon thread running queued jobs in order; errors go to ``on_error``."""

    def __init__(self, name: str, on_error: Callable[[str], None]):
        self.jobs: queue.Queue = queue.Queue()
        self.on_error = on_error
        self._busy = 0
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def put(self, job: Callable[[], None]) -> bool:
        """Queue ``job``; False (and nothing queued) when too many wait already."""
        with self._lock:
            if self._busy >= MAX_QUEUED:
                return False
            self._busy += 1
        self.jobs.put(job)
        return True

    def pending(self) -> int:
        """Jobs queued or running."""
        with self._lock:
            return self._busy

    def close(self, timeout: float = 3.0) -> None:
        """Finish the queued jobs (up to ``timeout``) and stop the thread."""
        self.jobs.put(None)
        self._thread.join(timeout)

    def _run(self) -> None:
        while True:
            job = self.jobs.get()
            if job is None:
                return
            try:
                job()
            except Exception as exc:  # noqa: BLE001  shown in the UI, the hands go on
                self.on_error(f"{type(exc).__name__}: {exc}")
            finally:
                with self._lock:
                    self._busy -= 1


class Fingers:
    """Presses the companion's buttons through its gpiozero mock pins.

    ``pins``: {"next": BCM, ...} (``companion.parts.buttons.pins``);
    ``factory``: the ``MockFactory``; ``hold_seconds``: the configured hold.
    ``down`` names the button held low right now ("" when none).
    """

    def __init__(self, pins: dict[str, int], factory, hold_seconds: float,
                 on_error: Callable[[str], None] = lambda _msg: None):
        self.pins = {name: factory.pin(bcm) for name, bcm in pins.items()}
        self.hold_s = hold_seconds + HOLD_EXTRA_S
        self.down = ""
        self._worker = _Worker("sim-fingers", on_error)

    def press(self, button: str) -> bool:
        """Queue a short press of ``button`` ("next", "ok", "back")."""
        return self._worker.put(lambda: self._gesture(button, PRESS_S))

    def hold(self, button: str) -> bool:
        """Queue a hold of ``button`` (longer than the configured hold time)."""
        return self._worker.put(lambda: self._gesture(button, self.hold_s))

    def pending(self) -> int:
        """Gestures not yet finished."""
        return self._worker.pending()

    def _gesture(self, button: str, seconds: float) -> None:
        pin = self.pins[button]
        self.down = button
        pin.drive_low()
        try:
            time.sleep(seconds)
        finally:
            pin.drive_high()
            self.down = ""
        time.sleep(GAP_S)

    def close(self) -> None:
        """Let queued gestures finish, then stop (every pin is left released)."""
        self._worker.close()


class TokenHand:
    """The two physical time tokens and the hand that moves them.

    ``sensor``: a started :class:`~firmware_py.sim.sensor.SimSensorProcess`;
    ``clock``: monotonic seconds. Called from the UI thread only; the sensor
    commands run on a worker thread in order. ``pos`` maps colour -> space
    (None while in the air); ``hand`` is the token the keys move; ``held`` the
    token in the air ("" when none) hovering over ``cursor``; ``last_space``
    bounds every move; ``picked_at`` is when a token was last taken by key.
    """

    def __init__(self, sensor, clock: Callable[[], float] = time.monotonic,
                 on_error: Callable[[str], None] = lambda _msg: None):
        self.sensor = sensor
        self.clock = clock
        self.pos: dict[str, int | None] = {GREEN: None, YELLOW: None}
        self.hand = GREEN
        self.held = ""
        self.cursor = 0
        self.last_space = 53
        self.picked_at = float("-inf")                 # clock time of the last pick by key
        self.plugged = True
        self._slide: tuple[str, int] | None = None     # (colour, where the slide began)
        self._slide_due = 0.0
        self._worker = _Worker("sim-token-hand", on_error)

    # ----- what the board shows -----------------------------------------------------
    def tokens(self) -> tuple[tuple[str, int], ...]:
        """(colour, space) of each token standing on the board."""
        return tuple((c, s) for c, s in self.pos.items() if s is not None)

    def busy(self) -> bool:
        """True while a slide waits to be let go or the sensor has moves to run."""
        return self._slide is not None or self._worker.pending() > 0

    # ----- gestures -------------------------------------------------------------------
    def reset(self, green: int, yellow: int) -> None:
        """Stand both tokens on ``green``/``yellow`` at once (tidying the board)."""
        self._slide = None
        self.held = ""
        self.pos = {GREEN: green, YELLOW: yellow}
        self._send("reset", tokens=[green, yellow])

    def pick(self, colour: str, by_key: bool = True) -> bool:
        """Take ``colour`` in hand (the arrow keys move it); False while another is in the air."""
        if self.held and self.held != colour:
            return False
        self.let_go()
        self.hand = colour
        if by_key:
            self.picked_at = self.clock()
        return True

    def step(self, delta: int) -> None:
        """Arrow key: slide the token in hand ``delta`` spaces, or aim the one in the air."""
        if self.held:
            self.cursor = self._clamp(self.cursor + delta)
            return
        here = self.pos[self.hand]
        if here is None:
            return
        to = self._clamp(here + delta)
        if to == here:
            return
        if self._slide is None:
            self._slide = (self.hand, here)
        self.pos[self.hand] = to
        self._slide_due = self.clock() + SLIDE_IDLE_S

    def aim(self, space: int) -> None:
        """Put the cursor of the token in the air on ``space`` (Home/End)."""
        if self.held:
            self.cursor = self._clamp(space)

    def lift(self) -> bool:
        """Lift the token in hand off the board (the cursor starts where it stood)."""
        if self.held or self.pos[self.hand] is None:
            return False
        self.let_go()
        self.cursor = self.pos[self.hand]
        self.held = self.hand
        self.pos[self.hand] = None
        self._send("lift", token=TOKENS.index(self.held))
        return True

    def set_down(self) -> bool:
        """Set the token in the air down on the cursor's space."""
        if not self.held:
            return False
        colour, self.held = self.held, ""
        self.pos[colour] = self.cursor
        self._send("place", token=TOKENS.index(colour), space=self.cursor)
        return True

    def let_go(self) -> None:
        """End a slide in progress now: the sensor sees it slide to where the hand is."""
        if self._slide is None:
            return
        colour, start = self._slide
        self._slide = None
        to = self.pos[colour]
        if to is not None and to != start:
            self._send("move", token=TOKENS.index(colour), to=to, style="slide")

    def cable(self, plugged: bool) -> None:
        """Pull the sensor's USB cable out (``plugged`` False) or plug it back in."""
        self.plugged = plugged
        self._send("replug" if plugged else "unplug")

    def tick(self) -> None:
        """Called often by the UI: let go of a slide once the arrow keys paused."""
        if self._slide is not None and self.clock() >= self._slide_due:
            self.let_go()

    def close(self) -> None:
        """Finish the queued moves and stop the worker."""
        self.let_go()
        self._worker.close()

    # ----- helpers --------------------------------------------------------------------
    def _clamp(self, space: int) -> int:
        return max(0, min(self.last_space, space))

    def _send(self, op: str, **fields) -> None:
        sensor = self.sensor
        self._worker.put(lambda: sensor.command(op, **fields))
