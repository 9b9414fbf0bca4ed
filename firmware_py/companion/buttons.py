"""Button gestures from raw edges: debounce, short press and hold, in pure code.

gpiozero's mock pins never debounce and fire ``when_pressed`` at once, so a
long press would also trigger the short action (design 6): the adapters post
raw edges with times, and this classifier decides.
"""
from __future__ import annotations

from dataclasses import dataclass

PRESS = "press"
HOLD = "hold"


@dataclass(frozen=True)
class Gesture:
    """A classified gesture: ``button`` name ("next", "ok", "back") and ``kind`` ("press" or "hold")."""

    button: str
    kind: str


class _Button:
    __slots__ = ("accepted", "raw", "since", "held_fired")

    def __init__(self):
        self.accepted = False     # debounced level: True while pressed
        self.raw = False          # last raw level seen
        self.since = -1e9         # time of the last accepted change
        self.held_fired = False


class ButtonClassifier:
    """Turns raw edges into gestures.

    ``debounce_s`` (seconds, 0..0.1): edges within this window after an
    accepted change are chatter and ignored; the level is re-read when the
    window closes. ``hold_s`` (seconds, 0.3..5): a press held this long is a
    hold, fired once while still held; a shorter one is a press, fired on
    release. Times are seconds from any monotonic clock.
    """

    def __init__(self, hold_s: float = 1.0, debounce_s: float = 0.02):
        if not 0 <= debounce_s <= 0.1 or not 0 < hold_s <= 5:
            raise ValueError("debounce_s must be 0..0.1 s and hold_s 0..5 s")
        self.hold_s = hold_s
        self.debounce_s = debounce_s
        self._buttons: dict[str, _Button] = {}

    def edge(self, button: str, pressed: bool, now: float) -> list[Gesture]:
        """A raw edge of ``button`` (True = pressed) at ``now``; returns the gestures it completes."""
        b = self._buttons.setdefault(button, _Button())
        b.raw = pressed
        if now - b.since < self.debounce_s:
            return []
        return self._accept(button, b, pressed, now)

    def tick(self, now: float) -> list[Gesture]:
        """Advance time to ``now``: settles chatter and fires holds that are due."""
        out: list[Gesture] = []
        for name, b in self._buttons.items():
            if b.raw != b.accepted and now - b.since >= self.debounce_s:
                out += self._accept(name, b, b.raw, now)
            if b.accepted and not b.held_fired and now - b.since >= self.hold_s:
                b.held_fired = True
                out.append(Gesture(name, HOLD))
        return out

    def next_deadline(self) -> float | None:
        """The next time :meth:`tick` may have work (a hold or a chatter window), or None."""
        times = []
        for b in self._buttons.values():
            if b.raw != b.accepted:
                times.append(b.since + self.debounce_s)
            if b.accepted and not b.held_fired:
                times.append(b.since + self.hold_s)
        return min(times) if times else None

    def _accept(self, name: str, b: _Button, pressed: bool, now: float) -> list[Gesture]:
        if pressed == b.accepted:
            return []
        fired, held_for = b.held_fired, now - b.since
        b.accepted, b.since, b.held_fired = pressed, now, False
        if pressed or fired:
            return []
        # a hold whose tick came late is still a hold, never a short press
        return [Gesture(name, HOLD if held_for >= self.hold_s else PRESS)]
