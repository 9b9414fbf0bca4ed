"""The simulator's hands at a table, driven by named gestures.

Shared by the terminal simulator (keys) and the browser simulator (taps, drags,
keys): a gesture such as ``("press", "ok")`` or ``("step", 1)`` goes to the
companion's real inputs through :mod:`.tui_hands` (the buttons' gpiozero mock
pins, the simulated sensor process's tokens), never around them. :meth:`Desk.act`
answers with a line to show the person, or None; :meth:`Desk.follow`, called
with each published status, lets a slide go once the hand pauses and hands the
token of the player to move to the hand.
"""
from __future__ import annotations

import time
from typing import Callable

from ..companion.model import GREEN, YELLOW
from .tui_hands import Fingers, TokenHand

FOLLOW_GRACE_S = 0.5        #: a token taken by hand this recently is not swapped for the mover's
BUTTONS = ("next", "ok", "back")
COLOURS = (GREEN, YELLOW)

#: key name (textual's names; the browser page sends the same) -> (gesture, argument)
KEYMAP = {
    "n": ("press", "next"), "o": ("press", "ok"), "enter": ("press", "ok"),
    "b": ("press", "back"), "backspace": ("press", "back"),
    "N": ("hold", "next"), "shift+n": ("hold", "next"), "O": ("hold", "ok"),
    "shift+o": ("hold", "ok"), "B": ("hold", "back"), "shift+b": ("hold", "back"),
    "g": ("pick", GREEN), "y": ("pick", YELLOW),
    "left": ("step", -1), "right": ("step", 1), "up": ("step", "up"), "down": ("step", "down"),
    "home": ("jump", "home"), "end": ("jump", "end"),
    "l": ("lift", None), "d": ("down", None), "space": ("toggle", None),
    "r": ("tidy", None), "q": ("quit", None), "ctrl+c": ("quit", None),
    "question_mark": ("help", None), "h": ("help", None), "f1": ("help", None),
    "U": ("cable", None), "shift+u": ("cable", None),
}

Said = tuple[str, float] | None     #: (a line for the person, seconds to show it) or None


class GestureError(ValueError):
    """A gesture the desk does not know, or with an argument out of range (says which)."""


class Desk:
    """Fingers on the buttons and a hand on the time tokens of ``companion`` (a running
    :class:`firmware_py.service.assembly.Companion` on the sim backend).

    Call every method from one thread (the UI's); ``on_error(text)`` is called from a
    hands worker thread when a gesture fails; ``clock``: monotonic seconds.
    """

    def __init__(self, companion, on_error: Callable[[str], None] = lambda _msg: None,
                 clock: Callable[[], float] = time.monotonic):
        parts = companion.parts
        self.service = companion.service
        self.clock = clock
        self.fingers = Fingers(parts.buttons.pins, parts.pin_factory,
                               self.service.cfg["buttons"]["hold_seconds"], on_error)
        self.hand = TokenHand(parts.sim_sensor, clock=clock, on_error=on_error)
        self._last_active = ""
        self._last_mode = ""
        self._gestures: dict[str, Callable[[object], Said]] = {
            "press": self.press, "hold": self.hold, "pick": self.pick, "step": self.step,
            "jump": self.jump, "lift": self.lift, "down": self.down, "toggle": self.toggle,
            "tidy": self.tidy, "cable": self.cable}

    def act(self, kind: str, arg=None) -> Said:
        """Carry out gesture ``kind`` with ``arg``; raises :class:`GestureError` for an
        unknown gesture (nothing is done then)."""
        gesture = self._gestures.get(kind)
        if gesture is None:
            raise GestureError(f"no gesture {kind!r}; known: {', '.join(sorted(self._gestures))}")
        return gesture(arg)

    def kinds(self) -> tuple[str, ...]:
        """The gestures :meth:`act` knows."""
        return tuple(self._gestures)

    # ----- buttons ------------------------------------------------------------------------
    def press(self, button) -> Said:
        """A short press of ``button`` ("next", "ok", "back") on its mock pin."""
        self.hand.let_go()
        if not self.fingers.press(_button(button)):
            return ("too many presses queued", 3.0)
        return None

    def hold(self, button) -> Said:
        """A hold of ``button`` (longer than the configured hold time)."""
        self.hand.let_go()
        if not self.fingers.hold(_button(button)):
            return ("too many presses queued", 3.0)
        return None

    # ----- tokens -------------------------------------------------------------------------
    def pick(self, colour) -> Said:
        """Take the ``colour`` token in hand."""
        if not self.hand.pick(_colour(colour)):
            return (f"set the {self.hand.held} token down first (d)", 3.0)
        return None

    def step(self, delta) -> Said:
        """Slide the token in hand ``delta`` spaces (an int), or aim the one in the air."""
        if not isinstance(delta, int) or isinstance(delta, bool):
            raise GestureError(f"a step is a whole number of spaces, got {delta!r}")
        self.hand.step(delta)
        return None

    def slide(self, colour, to: int) -> Said:
        """Take the ``colour`` token and slide it to space ``to`` (clamped to the board),
        then let go: the sensor sees it pass every space between."""
        said = self.pick(colour)
        if said:
            return said
        here = self.hand.pos[colour]
        if here is None:
            return (f"the {colour} token is in the air: set it down first", 3.0)
        self.step(to - here)
        self.hand.let_go()
        return None

    def jump(self, where) -> Said:
        """Home/End: aim the token in the air at the first or last space."""
        if where not in ("home", "end"):
            raise GestureError(f"jump goes to 'home' or 'end', got {where!r}")
        if not self.hand.held:
            return ("lift the token first (l)", 3.0)
        self.hand.aim(0 if where == "home" else self.hand.last_space)
        return None

    def lift(self, _arg=None) -> Said:
        """Lift the token in hand."""
        if not self.hand.lift():
            return ("already in the air: d sets it down", 3.0)
        return None

    def down(self, _arg=None) -> Said:
        """Set the token in the air down on the cursor."""
        if not self.hand.set_down():
            return ("nothing in the air: l lifts the token in hand", 3.0)
        return None

    def toggle(self, _arg=None) -> Said:
        """Lift the token in hand, or set the one in the air down."""
        if self.hand.held:
            self.hand.set_down()
        else:
            self.hand.lift()
        return None

    def tidy(self, _arg=None) -> Said:
        """Stand both tokens where the game says (or on 0 before a game)."""
        self.tidy_board()
        return ("tokens put where the game says", 3.0)

    def cable(self, _arg=None) -> Said:
        """Unplug or replug the sensor's USB cable (to see the companion cope)."""
        self.hand.cable(not self.hand.plugged)
        return (("sensor cable plugged back in", 3.0) if self.hand.plugged
                else ("sensor cable pulled out: U plugs it back in", 4.0))

    def tidy_board(self) -> None:
        """Put both physical tokens where the companion says they stand."""
        status = self.service.status
        where = dict(status.lights.tokens) if status is not None else {}
        self.hand.reset(where.get(GREEN, 0), where.get(YELLOW, 0))

    # ----- following the game -------------------------------------------------------------
    def follow(self, status) -> Said:
        """Called with each status the UI shows: the board's size, a slide let go once
        the hand paused; when the turn passes, the hand takes the token of the player to
        move; when a finished game gives way to a new one, the tokens go back to the start."""
        self.hand.last_space = status.lights.last_space
        self.hand.tick()
        said = None
        if self._last_mode == "end" and status.mode.startswith("setup"):
            self.hand.reset(0, 0)
            said = ("new game: both tokens are back on the start space", 3.0)
        self._last_mode = status.mode
        active = status.lights.active
        fresh_pick = self.clock() - self.hand.picked_at < FOLLOW_GRACE_S
        if active and active != self._last_active and not self.hand.held and not fresh_pick:
            self.hand.pick(active, by_key=False)
        self._last_active = active
        return said

    def close(self) -> None:
        """Let the hands finish what they were doing."""
        self.hand.close()
        self.fingers.close()


def _button(name) -> str:
    if name not in BUTTONS:
        raise GestureError(f"button must be one of {', '.join(BUTTONS)}, got {name!r}")
    return name


def _colour(name) -> str:
    if name not in COLOURS:
        raise GestureError(f"token must be {' or '.join(COLOURS)}, got {name!r}")
    return name
