"""What the outputs show: plain frozen values the pure renderers draw.

The UI state machine builds a :class:`Screen` (for the 128x64 OLED) and a
:class:`Lights` (for the LED strip under the time board) after every change;
``view.oled.render(screen)`` and ``view.leds.led_frame(lights, now, layout)``
turn them into pixels. Nothing here knows about hardware.
"""
from __future__ import annotations

from dataclasses import dataclass, field

GREEN = "green"
YELLOW = "yellow"


@dataclass(frozen=True)
class PatchCard:
    """A patch as shown on a screen: its printed ``shape`` rows ('#'/'O' covered,
    '.' empty), ``cost`` (buttons), ``time`` (spaces), ``income`` (buttons printed).

    ``selected`` marks the cursor; ``buyable`` is False when the player to move
    cannot afford it or it has no room; ``index``/``total`` number it in a deal
    ("7/33"), 0 when not dealing.
    """

    id: int
    shape: tuple[str, ...]
    cost: int
    time: int
    income: int
    selected: bool = False
    buyable: bool = True
    index: int = 0
    total: int = 0


@dataclass(frozen=True)
class PlayerLine:
    """One player's standing: ``colour`` is "green" or "yellow"; ``score`` as it
    stands (buttons + special tile - 2 x empty, R13); ``active`` when to move."""

    name: str
    colour: str
    position: int
    buttons: int
    income: int
    empty: int
    special: bool
    score: int
    active: bool = False


@dataclass(frozen=True)
class Screen:
    """One OLED screen.

    ``kind`` is one of:

    - ``"choose"``: a setup or menu question; ``title``, ``options``, ``selected``.
    - ``"deal"``: one patch of the dealt circle in ``patches[0]`` with index/total.
    - ``"turn"``: whose turn (``players``, the active one flagged), the offer in
      ``patches`` (up to 3, one maybe ``selected``), ``notice`` (e.g. "income: take 7").
    - ``"prompt"``: a question during play (``title``, ``lines``, ``options``).
    - ``"mismatch"``: board and game disagree; ``lines`` say what to fix.
    - ``"end"``: the final tally; ``lines`` hold the tally rows, ``players`` the totals.

    ``warning`` is a short status shown on any screen (e.g. "sensor offline").
    ``footer`` is the button legend (e.g. "NEXT:more  OK:buy").
    """

    kind: str
    title: str = ""
    lines: tuple[str, ...] = ()
    options: tuple[str, ...] = ()
    selected: int = 0
    patches: tuple[PatchCard, ...] = ()
    players: tuple[PlayerLine, ...] = ()
    notice: str = ""
    warning: str = ""
    footer: str = ""


@dataclass(frozen=True)
class Lights:
    """What the LED strip shows, by time-board space (0..``last_space``).

    ``tokens`` maps colour -> space where that time token stands (or should
    stand); ``active`` is the colour that moves now (its LED pulses) or "";
    ``targets`` are spaces lit steady white (where the selected action ends);
    ``expected`` blink white (a token must go there); ``wrong`` blink red (a
    token that must leave); ``leather`` are spaces still holding a leather
    patch; ``income`` the income spaces; ``celebrate`` is set at the end.
    """

    last_space: int
    tokens: tuple[tuple[str, int], ...] = ()
    active: str = ""
    targets: frozenset[int] = field(default_factory=frozenset)
    expected: frozenset[int] = field(default_factory=frozenset)
    wrong: frozenset[int] = field(default_factory=frozenset)
    leather: frozenset[int] = field(default_factory=frozenset)
    income: frozenset[int] = field(default_factory=frozenset)
    celebrate: str = ""
