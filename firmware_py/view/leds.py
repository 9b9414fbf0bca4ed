"""The LED strip renderer: :class:`~firmware_py.companion.model.Lights` and a
time in, one RGB colour per LED out. Pure: the time ``now`` (seconds, any
epoch, e.g. ``time.monotonic()``) is the only clock.

What a space shows, strongest first (a blinking layer lets the ones below
show through in its off phase):

1. ``wrong``: blinking red, 2 Hz, in anti-phase with ``expected``;
2. ``expected``: blinking white, 2 Hz (a token must go there);
3. ``targets``: steady white (where the selected action ends);
4. time tokens: green (0, 200, 0) or yellow (230, 160, 0); the ``active``
   one pulses: every 2 s it dims to 25% and back within 0.75 s (dimmest at
   0.375 s), then rests at full brightness (a calm pulse that needs few
   frames); two tokens on one space alternate, one second
   each, the active one first (pulsing during its second);
5. ``leather``: a dim warm orange; 6. ``income``: a dim blue; else off.

``celebrate`` runs a chase in the winner's colour along the spaces on top.

A :class:`Hand` (a time token the sensor sees where the game does not have it
yet, i.e. a hand moving it) shows that token steady on the spaces where it is
seen, above the targets and below the blinking layers, and takes it off the
space it left: the light follows the hand from the sensor's first reading,
long before the reading is stable enough to count as a move.

The frame is constant while nothing pulses, blinks, alternates or chases:
:func:`next_change` tells the service when to draw again (``None``: never,
until the lights change). :class:`LedFrames` plays the lights as an
animation: every animation repeats every ``CYCLE`` seconds, so its frames are
computed once per slot of the cycle and reused, and it wakes its caller only
when the frame really changes.
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

PULSE_PERIOD = 2.0      #: seconds from one pulse of the active token to the next
DIP_SECONDS = 0.75      #: each pulse dims and brightens again within this long
PULSE_MIN = 0.25        #: dimmest pulse brightness (1.0 is full)
BLINK_HZ = 2.0          #: blinks per second of expected / wrong spaces
SHARE_SECONDS = 1.0     #: each of two tokens on one space shows this long
CHASE_SPEED = 12.0      #: celebration chase, spaces per second
CHASE_GAP = 6           #: spaces between chase heads
CHASE_TAIL = 3          #: spaces of fading tail behind each head
FRAME_INTERVAL = 1 / 30  #: seconds between frames while something pulses or chases
PULSE_FPS = 8           #: at most this many frames a second for the pulse and the blinks
CYCLE = 2.0             #: seconds after which every animation repeats (pulse, blink,
                        #: two tokens sharing a space, chase)


@dataclass(frozen=True)
class Hand:
    """A time token seen where the game does not have it yet (a hand is moving it).

    ``colour``: GREEN or YELLOW; ``spaces``: where the sensor sees it (one
    space, or two while it straddles a gap); the token is no longer shown on
    the space it stands on in the game. Built by :func:`hand_of`.
    """

    colour: str
    spaces: frozenset[int]


def hand_of(lights: Lights, reading: frozenset[int] | None) -> Hand | None:
    """The token a raw sensor ``reading`` (occupied spaces, not yet stable) shows
    in the hand, or None when the reading adds no space to the game's tokens.

    The moved token is the one whose space the reading lacks (the active one
    when both or neither are missing, e.g. a token slid off a shared space);
    None when no token can have moved (no tokens, or none active and none missing).
    """
    if reading is None or not lights.tokens:
        return None
    homes = {space for _, space in lights.tokens}
    arrived = frozenset(reading) - homes
    if not arrived:
        return None
    missing = [name for name, space in lights.tokens if space not in reading]
    if len(missing) == 1:
        return Hand(missing[0], arrived)
    return Hand(lights.active, arrived) if lights.active else None


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


def led_frame(lights: Lights, now: float, layout: LedLayout,
              hand: Hand | None = None) -> list[RGB]:
    """The colour of every LED at time ``now`` (seconds): a list of
    ``layout.count`` (r, g, b) tuples, each 0..255, indexed by strip position;
    ``hand``: a token being moved (see :class:`Hand`).

    Raises ValueError when ``lights.last_space`` differs from the layout's,
    for a space outside the board, or an unknown or repeated token colour.
    """
    if lights.last_space != layout.last_space:
        raise ValueError(f"lights are for spaces 0..{lights.last_space} but the LED layout "
                         f"maps 0..{layout.last_space}")
    colours = _space_colours(lights, now, hand)
    frame = [OFF] * layout.count
    for space, led in enumerate(layout.leds):
        frame[led] = colours[space]
    return frame


def _space_colours(lights: Lights, now: float, hand: Hand | None = None) -> list[RGB]:
    """One colour per space, the layers painted weakest first."""
    colours = [OFF] * (lights.last_space + 1)
    _paint(colours, lights.income, INCOME_RGB)
    _paint(colours, lights.leather, LEATHER_RGB)
    for space, rgb in _token_colours(lights, now, hand).items():
        colours[space] = rgb
    _paint(colours, lights.targets, WHITE)
    if hand is not None:
        _paint(colours, hand.spaces, _colour(hand.colour))
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


def _token_colours(lights: Lights, now: float, hand: Hand | None = None) -> dict[int, RGB]:
    """Space -> colour of the token shown there (pulsing if active); the token
    in the ``hand`` is not shown where it stood."""
    by_space: dict[int, list[str]] = {}
    seen: set[str] = set()
    for name, space in lights.tokens:
        _colour(name)
        _check_space(space, lights.last_space)
        if name in seen:
            raise ValueError(f"token {name!r} is listed twice in {lights.tokens!r}")
        seen.add(name)
        if hand is None or name != hand.colour:
            by_space.setdefault(space, []).append(name)
    shown = {}
    for space, names in by_space.items():
        names.sort(key=lambda n: (n != lights.active, n))   # the active one first
        name = names[int(math.floor(now / SHARE_SECONDS)) % len(names)]
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
    """The active token's brightness at ``now`` (seconds): PULSE_MIN..1.0.

    Every PULSE_PERIOD seconds (from 0) it falls from 1.0 to PULSE_MIN and
    back along a cosine within DIP_SECONDS (PULSE_MIN half-way), then stays
    at 1.0 until the next pulse."""
    phase = now % PULSE_PERIOD
    if phase >= DIP_SECONDS:
        return 1.0
    wave = (1 + math.cos(2 * math.pi * phase / DIP_SECONDS)) / 2
    return PULSE_MIN + (1 - PULSE_MIN) * wave


def blink_on(now: float) -> bool:
    """True in the first half of each blink period (``expected`` lit, white);
    False in the second (``wrong`` lit, red)."""
    return (now * BLINK_HZ) % 1.0 < 0.5


def scale(rgb: RGB, level: float) -> RGB:
    """``rgb`` at brightness ``level`` (0.0..1.0), rounded to whole values."""
    return tuple(round(c * level) for c in rgb)  # type: ignore[return-value]


def next_change(lights: Lights, now: float, hand: Hand | None = None) -> float | None:
    """When the frame may next differ from the one at ``now``: ``now +
    FRAME_INTERVAL`` while a token pulses or the chase runs, the next blink or
    alternation edge (seconds, same clock as ``now``) when only those run, and
    None when the frame is constant until ``lights`` (or the ``hand``) change."""
    tokens = _shown_tokens(lights, hand)
    if lights.celebrate or any(name == lights.active for name, _ in tokens):
        return now + FRAME_INTERVAL
    edges = []
    if lights.expected or lights.wrong:
        edges.append(_next_edge(now, 0.5 / BLINK_HZ))
    if len({space for _, space in tokens}) < len(tokens):
        edges.append(_next_edge(now, SHARE_SECONDS))
    return min(edges, default=None)


def _shown_tokens(lights: Lights, hand: Hand | None) -> tuple[tuple[str, int], ...]:
    """The game's tokens still shown where they stand (not the one in the hand)."""
    if hand is None:
        return lights.tokens
    return tuple(t for t in lights.tokens if t[0] != hand.colour)


class LedFrames:
    """``lights`` (and a ``hand``) played as an animation, for an output thread.

    Frames are taken at slots of ``1 / rate`` seconds, ``rate`` being ``fps``
    while the chase runs and at most ``PULSE_FPS`` for the pulse and blinks;
    as every animation repeats every ``CYCLE`` seconds, each slot's frame is
    computed once and reused. :meth:`render` gives the frame at ``now``
    (seconds of any clock that counts from a whole multiple of ``CYCLE``, e.g.
    ``time.monotonic()``), :meth:`next_at` when it next changes (None: never).
    Raises ValueError as :func:`led_frame` does (on the first :meth:`render`).
    """

    def __init__(self, lights: Lights, layout: LedLayout, hand: Hand | None = None,
                 fps: float = 1 / FRAME_INTERVAL):
        self.lights, self.layout, self.hand = lights, layout, hand
        self.still = next_change(lights, 0.0, hand) is None
        self.rate = float(fps if lights.celebrate else min(fps, PULSE_FPS))
        self.slots = max(1, round(CYCLE * self.rate))
        self._frames: list[list[RGB] | None] = [None] * (1 if self.still else self.slots)
        self._ahead: list[int | None] | None = None    # slots to the next change, per slot

    def _slot(self, now: float) -> int:
        return math.floor(now * self.rate)

    def _frame(self, slot: int) -> list[RGB]:
        index = 0 if self.still else slot % self.slots
        frame = self._frames[index]
        if frame is None:
            frame = led_frame(self.lights, index / self.rate, self.layout, self.hand)
            self._frames[index] = frame
        return frame

    def render(self, now: float) -> list[RGB]:
        """The frame (``layout.count`` RGB tuples) of the slot holding ``now``."""
        return self._frame(self._slot(now))

    def next_at(self, now: float) -> float | None:
        """The start of the first slot after ``now`` whose frame differs (None: still)."""
        if self.still:
            return None
        if self._ahead is None:
            self._ahead = self._changes()
        slot = self._slot(now)
        ahead = self._ahead[slot % self.slots]
        return None if ahead is None else (slot + ahead) / self.rate + 1e-6  # inside that slot

    def _changes(self) -> list[int | None]:
        """For each slot, how many slots later the frame next differs (None: never).
        Equal neighbouring frames are made one list, so the output thread's
        comparison of the frame with the last one shown stops at once."""
        frames = [self._frame(i) for i in range(self.slots)]
        for i in range(1, self.slots):
            if frames[i] == frames[i - 1]:
                frames[i] = self._frames[i] = frames[i - 1]
        ahead: list[int | None] = [None] * self.slots
        for i in range(self.slots):
            ahead[i] = next((d for d in range(1, self.slots + 1)
                             if frames[(i + d) % self.slots] != frames[i]), None)
        return ahead


def _next_edge(now: float, period: float) -> float:
    """The first multiple of ``period`` strictly after ``now``."""
    return (math.floor(now / period) + 1) * period
