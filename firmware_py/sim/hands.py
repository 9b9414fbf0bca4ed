"""Simulated hands at the table: press the buttons and move the time tokens.

Buttons are gpiozero mock pins (``MockFactory``) driven low and high as a
finger would (buttons wire to GND with pull-ups); tokens are moved by the
simulated sensor process. Waiting is done on the service's published status,
never by guessing sleeps alone.
"""
from __future__ import annotations

import time
from typing import Callable


class DriveError(RuntimeError):
    """The companion did not reach the expected state in time."""


class Hands:
    """Two players' hands.

    ``companion``: a running :class:`firmware_py.service.assembly.Companion` on the sim
    backend; ``press_s``: how long a short press lasts (seconds);
    ``timeout``: how long to wait for the companion to react (seconds).
    """

    def __init__(self, companion, press_s: float = 0.06, timeout: float = 20.0):
        self.companion = companion
        self.service = companion.service
        self.factory = companion.parts.pin_factory
        self.sensor = companion.parts.sim_sensor
        self.pins = companion.parts.buttons.pins
        self.press_s = press_s
        self.hold_s = self.service.cfg["buttons"]["hold_seconds"] + 0.25
        self.timeout = timeout

    def _pin(self, button: str):
        return self.factory.pin(self.pins[button])

    def press(self, button: str, times: int = 1) -> None:
        """Short-press ``button`` ("next", "ok", "back") ``times`` times."""
        for _ in range(times):
            pin = self._pin(button)
            pin.drive_low()
            time.sleep(self.press_s)
            pin.drive_high()
            time.sleep(self.press_s)
            self.settle()

    def settle(self) -> None:
        """Wait until the loop has handled every event posted so far."""
        self.service.call(lambda: None)

    def hold(self, button: str) -> None:
        """Hold ``button`` for longer than the configured hold time."""
        pin = self._pin(button)
        pin.drive_low()
        time.sleep(self.hold_s)
        pin.drive_high()
        time.sleep(self.press_s)
        self.settle()

    def move(self, token: int, to: int, style: str = "slide") -> None:
        """Move time token ``token`` (0/1) to space ``to`` by sliding or lifting; waits until done."""
        self.sensor.command("move", token=token, to=to, style=style)
        self.sensor.sync()

    def await_board(self, spaces) -> None:
        """Wait until the companion has seen ``spaces`` occupied long enough to judge it."""
        want = frozenset(spaces)
        watch = self.service.watch
        deadline = time.monotonic() + self.timeout
        while time.monotonic() < deadline:
            seen, since = self.service.call(lambda: (watch.occupied, watch.since))
            if seen == want and self.service.clock() - since > watch.stable_s + 0.02:
                self.settle()
                return
            time.sleep(0.01)
        raise DriveError(f"the companion never saw tokens on {sorted(want)}")

    def place_tokens(self, spaces: list[int]) -> None:
        """Put both tokens where they stand (a reset of the board)."""
        self.sensor.command("reset", tokens=list(spaces))
        self.sensor.sync()

    def status(self):
        """The service's latest published status."""
        return self.service.status

    def wait(self, predicate: Callable, what: str, timeout: float | None = None):
        """Wait until ``predicate(status)``; raise :class:`DriveError` naming ``what``."""
        deadline = time.monotonic() + (timeout or self.timeout)
        while time.monotonic() < deadline:
            status = self.status()
            if status is not None and predicate(status):
                return status
            time.sleep(0.005)
        raise DriveError(f"timed out waiting for {what}; the companion shows "
                         f"{self.status().mode!r}: {self.status().screen.title!r} "
                         f"{self.status().screen.lines}")
