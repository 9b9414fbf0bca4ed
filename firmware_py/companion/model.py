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
    ("7/33") or among the patches left in a free layout ("3 of 21"), 0 otherwise.
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

    @classmethod
    def of(cls, spec, pid: int, **kw) -> "PatchCard":
        """The card for patch ``pid`` of ``spec`` (a ``rules`` GameSpec's
        catalogue); ``kw`` sets the display fields above. IndexError if the
        catalogue has no such patch."""
        p = spec.patches[pid]
        return cls(p.id, p.shape, p.cost, p.time, p.income, **kw)


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
class QuiltView:
    """A quilt board picture: ``rows`` x ``cols`` squares; ``before``: squares covered
    before this turn, ``patch``: the patch placed now, ``leather``: leather patches
    placed now (bitmasks, bit ``row * cols + col``, row 0 at the top)."""

    rows: int
    cols: int
    before: int = 0
    patch: int = 0
    leather: int = 0


@dataclass(frozen=True)
class Screen:
    """One OLED screen.

    ``kind`` is one of:

    - ``"choose"``: a setup or menu question; ``title``, ``options``, ``selected``.
    - ``"deal"``: one patch of the dealt circle in ``patches[0]`` with index/total.
    - ``"turn"``: whose turn (``players``, the active one flagged), the offer in
      ``patches`` (up to 3, one maybe ``selected``), ``notice`` (what to do and
      whose it is, e.g. "Green: pay 10, take leather, +4 income"). In a free
      layout ``patches`` holds only the chosen patch, numbered among those
      left (``index``/``total``: "3 of 21"), or nothing and ``lines`` saying
      what to do.
    - ``"prompt"``: a question during play (``title``, ``lines``, ``options``).
    - ``"mismatch"``: board and game disagree; ``lines`` say what to fix.
    - ``"end"``: the final tally; ``lines`` hold the tally rows, ``players`` the totals.
    - ``"box"``: the box's turn to carry out: ``title`` what it does, ``patches[0]``
      the patch it takes, ``quilt`` where it goes on the box's quilt board,
      ``lines`` the rest to do (buttons, its token's space), ``notice`` a
      passing word shown instead of the lines.

    ``warning`` is a short status shown on any screen (e.g. "sensor offline";
    several joined by " / " show in turn).
    Text that does not fit at once is shown on pages in turn (see
    :mod:`firmware_py.view.oled`), never cut.
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
    quilt: QuiltView | None = None


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
