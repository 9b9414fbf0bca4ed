"""The LED strip renderer: :class:`~firmware_py.companion.model.Lights` and a
time in, one RGB colour per LED out. Pure: the time ``now`` (seconds, any
epoch, e.g. ``time.monotonic()``) is the only clock.

What a space shows, strongest first (a blinking layer lets the ones below
show through in its off phase):

1. ``wrong``: blinking red, 2 Hz, in anti-phase with ``expected``;
2. ``expected``: blinking white, 2 Hz (a token must go there);
3. ``targets``: steady white (where the selected action ends);
4. time tokens: green (0, 200, 0) or yellow (230, 160, 0); the ``active``
   one pulses, brightness 25%..100% at 1 Hz (dimmest at whole seconds); two
   tokens on one space alternate, one second each (the active one pulsing
   during its second);
5. ``leather``: a dim warm orange; 6. ``income``: a dim blue; else off.

``celebrate`` runs a chase in the winner's colour along the spaces on top.

The frame is constant while nothing pulses, blinks, alternates or chases:
:func:`next_change` tells the service when to draw again (``None``: never,
until the lights change).
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from ..companion.model import GREEN, YELLOW, Lights

RGB = tuple[int, int, int]

OFF: RGB = (0, 0, 0)
TOKEN_RGB: dict[str, RGB] = {GREEN: (0, 200, 0), YELLOW: (230, 160, 0)}
WHITE: RGB = (170, 170, 170)
RED: RGB = (220, 0, 0)
LEATHER_RGB: RGB = (40, 14, 0)
INCOME_RGB: RGB = (0, 6, 40)

PULSE_HZ = 1.0          #: active token pulses per second
PULSE_MIN = 0.25        #: dimmest pulse brightness (1.0 is full)
BLINK_HZ = 2.0          #: blinks per second of expected / wrong spaces
SHARE_SECONDS = 1.0     #: each of two tokens on one space shows this long
CHASE_SPEED = 12.0      #: celebration chase, spaces per second
CHASE_GAP = 6           #: spaces between chase heads
CHASE_TAIL = 3          #: spaces of fading tail behind each head
FRAME_INTERVAL = 1 / 30  #: seconds between frames while something pulses or chases


@dataclass(frozen=True)
class LedLayout:
    """Which LED sits under each time-board space.

    ``leds[space]`` is the strip index (0..``count``-1) under ``space``
    (0..``last_space``); LEDs not listed stay off. Raises ValueError for a
    count below 1, an LED outside the strip or an LED used twice.
    """

    leds: tuple[int, ...]
    count: int

    def __post_init__(self) -> None:
        if not isinstance(self.count, int) or isinstance(self.count, bool) or self.count < 1:
            raise ValueError(f"LED count must be a whole number >= 1, not {self.count!r}")
        owner: dict[int, int] = {}
        for space, led in enumerate(self.leds):
            if not isinstance(led, int) or isinstance(led, bool):
                raise ValueError(f"LED for space {space} must be a whole number, not {led!r}")
            if not 0 <= led < self.count:
                raise ValueError(f"LED {led} for space {space} is outside the strip "
                                 f"(0..{self.count - 1})")
            if led in owner:
                raise ValueError(f"LED {led} is given to both space {owner[led]} "
                                 f"and space {space}")
            owner[led] = space

    @property
    def last_space(self) -> int:
        """The highest space mapped (``len(leds) - 1``)."""
        return len(self.leds) - 1

    @classmethod
    def parse(cls, spec: str | Sequence[int], count: int, last_space: int) -> LedLayout:
        """A layout from configuration.

        ``spec`` is a string of comma-separated ranges and numbers, each range
        running either way ("0-53", "53-0", "0-26, 40-66"), or a list of LED
        indices, one per space from space 0. ``count`` is the number of LEDs
        on the strip, ``last_space`` the board's last space (53 or 29).
        Raises ValueError naming the bad value: unreadable text, a wrong
        number of LEDs for the spaces, an LED outside 0..count-1, a duplicate.
        """
        leds = _parse_ranges(spec) if isinstance(spec, str) else tuple(spec)
        if len(leds) != last_space + 1:
            raise ValueError(f"LED layout {spec!r} gives {len(leds)} LEDs but the board has "
                             f"{last_space + 1} spaces (0..{last_space})")
        return cls(leds, count)


def _parse_ranges(spec: str) -> tuple[int, ...]:
    """"0-3, 9-7" -> (0, 1, 2, 3, 9, 8, 7); ValueError naming a bad part."""
    leds: list[int] = []
    for part in spec.split(","):
        ends = [end.strip() for end in part.split("-")]
        if not 1 <= len(ends) <= 2 or not all(end.isdigit() for end in ends):
            raise ValueError(f"bad LED range {part.strip()!r} in {spec!r}: expected "
                             "'first-last' or a number, e.g. '0-53' or '53-0'")
        first, last = int(ends[0]), int(ends[-1])
        step = 1 if last >= first else -1
        leds.extend(range(first, last + step, step))
    return tuple(leds)


def led_frame(lights: Lights, now: float, layout: LedLayout) -> list[RGB]:
    """The colour of every LED at time ``now`` (seconds): a list of
    ``layout.count`` (r, g, b) tuples, each 0..255, indexed by strip position.

    Raises ValueError when ``lights.last_space`` differs from the layout's,
    for a space outside the board, or an unknown or repeated token colour.
    """
    if lights.last_space != layout.last_space:
        raise ValueError(f"lights are for spaces 0..{lights.last_space} but the LED layout "
                         f"maps 0..{layout.last_space}")
    colours = _space_colours(lights, now)
    frame = [OFF] * layout.count
    for space, led in enumerate(layout.leds):
        frame[led] = colours[space]
    return frame


def _space_colours(lights: Lights, now: float) -> list[RGB]:
    """One colour per space, the layers painted weakest first."""
    colours = [OFF] * (lights.last_space + 1)
    _paint(colours, lights.income, INCOME_RGB)
    _paint(colours, lights.leather, LEATHER_RGB)
    for space, rgb in _token_colours(lights, now).items():
        colours[space] = rgb
    _paint(colours, lights.targets, WHITE)
    if blink_on(now):
        _paint(colours, lights.expected, WHITE)
    else:
        _paint(colours, lights.wrong, RED)
    if lights.celebrate:
        _chase(colours, _colour(lights.celebrate), now)
    return colours


def _paint(colours: list[RGB], spaces: frozenset[int], rgb: RGB) -> None:
    for space in spaces:
        _check_space(space, len(colours) - 1)
        colours[space] = rgb


def _check_space(space: int, last: int) -> None:
    if not 0 <= space <= last:
        raise ValueError(f"space {space} is not on the board (0..{last})")


def _colour(name: str) -> RGB:
    try:
        return TOKEN_RGB[name]
    except KeyError:
        raise ValueError(f"unknown token colour {name!r}; expected "
                         f"{' or '.join(TOKEN_RGB)}") from None


def _token_colours(lights: Lights, now: float) -> dict[int, RGB]:
    """Space -> colour of the token shown there (pulsing if active)."""
    by_space: dict[int, list[str]] = {}
    seen: set[str] = set()
    for name, space in lights.tokens:
        _colour(name)
        _check_space(space, lights.last_space)
        if name in seen:
            raise ValueError(f"token {name!r} is listed twice in {lights.tokens!r}")
        seen.add(name)
        by_space.setdefault(space, []).append(name)
    shown = {}
    for space, names in by_space.items():
        name = sorted(names)[int(math.floor(now / SHARE_SECONDS)) % len(names)]
        level = pulse(now) if name == lights.active else 1.0
        shown[space] = scale(_colour(name), level)
    return shown


def _chase(colours: list[RGB], rgb: RGB, now: float) -> None:
    """Heads every ``CHASE_GAP`` spaces moving up the board, fading tails."""
    head = now * CHASE_SPEED
    for space in range(len(colours)):
        behind = (head - space) % CHASE_GAP
        if behind < CHASE_TAIL:
            colours[space] = scale(rgb, 1.0 - behind / CHASE_TAIL)


def pulse(now: float) -> float:
    """The active token's brightness at ``now``: PULSE_MIN..1.0, sinusoidal
    at PULSE_HZ, PULSE_MIN at whole seconds and 1.0 half-way between."""
    wave = (1 - math.cos(2 * math.pi * PULSE_HZ * now)) / 2
    return PULSE_MIN + (1 - PULSE_MIN) * wave


def blink_on(now: float) -> bool:
    """True in the first half of each blink period (``expected`` lit, white);
    False in the second (``wrong`` lit, red)."""
    return (now * BLINK_HZ) % 1.0 < 0.5


def scale(rgb: RGB, level: float) -> RGB:
    """``rgb`` at brightness ``level`` (0.0..1.0), rounded to whole values."""
    return tuple(round(c * level) for c in rgb)  # type: ignore[return-value]


def next_change(lights: Lights, now: float) -> float | None:
    """When the frame may next differ from the one at ``now``: ``now +
    FRAME_INTERVAL`` while a token pulses or the chase runs, the next blink or
    alternation edge (seconds, same clock as ``now``) when only those run, and
    None when the frame is constant until ``lights`` change."""
    if lights.celebrate or any(name == lights.active for name, _ in lights.tokens):
        return now + FRAME_INTERVAL
    edges = []
    if lights.expected or lights.wrong:
        edges.append(_next_edge(now, 0.5 / BLINK_HZ))
    if len({space for _, space in lights.tokens}) < len(lights.tokens):
        edges.append(_next_edge(now, SHARE_SECONDS))
    return min(edges, default=None)


def _next_edge(now: float, period: float) -> float:
    """The first multiple of ``period`` strictly after ``now``."""
    return (math.floor(now / period) + 1) * period
