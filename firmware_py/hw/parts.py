"""Adapters for the buttons, the LED strip and the OLED, each given its library object.

Each adapter is built around the real library object (a gpiozero pin factory, a
``neopixel.NeoPixel``, a luma device) and never lets a hardware error reach
the game loop: a failure marks the part as failed, with a reason the service
shows on the OLED and logs, and the game goes on without it (design 3).
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Callable

LOG = logging.getLogger(__name__)


@dataclass(frozen=True)
class RawButton:
    """A raw button edge posted by the gpiozero callback thread: ``button``
    ("next"/"ok"/"back"), ``pressed`` (True on press), ``at`` (clock seconds)."""

    button: str
    pressed: bool
    at: float


class Part:
    """Base of an output part: ``name``, ``failed`` (a reason, or "")."""

    name = "part"

    def __init__(self):
        self.failed = ""

    def _fail(self, exc: BaseException) -> None:
        if not self.failed:
            LOG.error("%s failed: %s", self.name, exc)
        self.failed = f"{self.name} failed: {type(exc).__name__}"


class ButtonPanel:
    """The NEXT/OK/BACK push buttons as gpiozero ``Button`` objects.

    ``pins``: {"next": BCM, "ok": BCM, "back": BCM}; buttons wire to GND and use
    the internal pull-up. gpiozero's own debounce is off (its mock pins ignore
    it anyway, design 6): every raw edge is posted as :class:`RawButton` with
    ``clock()`` time and classified by :mod:`firmware_py.companion.buttons`.
    Raises gpiozero's errors if a pin cannot be claimed.
    """

    def __init__(self, pins: dict[str, int], post: Callable[[object], None],
                 clock: Callable[[], float], pin_factory=None):
        from gpiozero import Button
        self.buttons = {}
        self.pins = dict(pins)
        for name, pin in pins.items():
            button = Button(pin, pull_up=True, bounce_time=None, pin_factory=pin_factory)
            button.when_pressed = self._edge(name, True, post, clock)
            button.when_released = self._edge(name, False, post, clock)
            self.buttons[name] = button

    @staticmethod
    def _edge(name: str, pressed: bool, post, clock):
        def callback():
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

    def show(self, frame: list[tuple[int, int, int]]) -> None:
        """Send ``frame``; a library error marks the strip failed (never raises)."""
        if self.failed:
            return
        try:
            pixels = self.pixels
            for i, colour in enumerate(frame):
                pixels[i] = colour
            pixels.show()
        except Exception as exc:  # noqa: BLE001  a driver may raise anything
            self._fail(exc)
            return
        if self.on_frame is not None:
            self.on_frame(frame)

    def close(self) -> None:
        """Switch every LED off (on shutdown, so a stopped service leaves nothing lit)."""
        if not self.failed:
            try:
                self.pixels.fill((0, 0, 0))
                self.pixels.show()
            except Exception as exc:  # noqa: BLE001
                self._fail(exc)


class Oled(Part):
    """The OLED through a luma device (ssd1306/sh1106, 128x64).

    :meth:`show` hands a whole 128x64 mode "1" image to ``device.display``.
    ``on_frame`` (optional) sees every image shown.
    """

    name = "OLED"

    def __init__(self, device, on_frame: Callable | None = None):
        super().__init__()
        self.device = device
        self.on_frame = on_frame

    def show(self, image) -> None:
        """Display ``image``; a library or bus error marks the OLED failed (never raises)."""
        if self.failed:
            return
        try:
            self.device.display(image)
        except Exception as exc:  # noqa: BLE001
            self._fail(exc)
            return
        if self.on_frame is not None:
            self.on_frame(image)

    def close(self) -> None:
        """Clear and switch the display off (on shutdown)."""
        if not self.failed:
            try:
                self.device.clear()
                self.device.hide()
            except Exception as exc:  # noqa: BLE001
                self._fail(exc)
