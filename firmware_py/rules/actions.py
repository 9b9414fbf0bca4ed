"""Actions a player takes and the events that applying them causes.

Actions and events are small frozen values. Squares are bit indices
``row * cols + col`` of the player's quilt (see :mod:`.quilt`).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple


@dataclass(frozen=True, slots=True)
class Advance:
    """Action A: move to the space in front of the opponent, 1 button per space (R5)."""


@dataclass(frozen=True, slots=True)
class Buy:
    """Action B: take patch ``patch`` (an id) from the three on offer (R3).

    ``mask`` is the placement bitmask on the buyer's quilt when quilts are
    tracked, ``None`` when they are not.
    """

    patch: int
    mask: int | None = None


@dataclass(frozen=True, slots=True)
class PlaceLeather:
    """Place the leather patch just won on ``square`` (bit index), or ``None`` untracked (R9)."""

    square: int | None = None


@dataclass(frozen=True, slots=True)
class DiscardLeather:
    """Set the leather patch just won aside: Express by choice, Patchwork on a full quilt (R9, R10)."""


@dataclass(frozen=True, slots=True)
class ClaimSpecialTile:
    """Untracked quilts only: ``player`` (0 or 1) declares a completed 7x7 square (R11).

    It takes no turn; the tile goes to the player if nobody holds it yet.
    """

    player: int


Action = Advance | Buy | PlaceLeather | DiscardLeather | ClaimSpecialTile
ADVANCE = Advance()
DISCARD = DiscardLeather()


def _event(cls):
    """Make a NamedTuple event compare equal only to events of its own class.

    Events are created on every action, so they are light tuples rather than
    dataclasses; this keeps ``ButtonsEarned(1, 4) != LeatherWon(1, 4)``.
    """
    def eq(a, b):
        """Equal only to an event of the same class with the same values."""
        return type(a) is type(b) and tuple.__eq__(a, b)

    def ne(a, b):
        """Negation of eq."""
        return not eq(a, b)

    def hash_(a):
        """Hash of the class name and the values."""
        return hash((cls.__name__, *a))

    cls.__eq__, cls.__ne__, cls.__hash__ = eq, ne, hash_
    return cls


@_event
class PatchBought(NamedTuple):
    """``player`` took patch ``patch`` and paid ``cost`` buttons."""

    player: int
    patch: int
    cost: int


@_event
class ButtonsEarned(NamedTuple):
    """Action A paid ``buttons`` (one per space actually moved, R5)."""

    player: int
    buttons: int


@_event
class TokenMoved(NamedTuple):
    """``player``'s time token went from space ``start`` to ``end`` (0..last space)."""

    player: int
    start: int
    end: int


@_event
class IncomePaid(NamedTuple):
    """Income space ``space`` paid ``buttons`` to ``player`` (R7, R8)."""

    player: int
    space: int
    buttons: int


@_event
class LeatherWon(NamedTuple):
    """``player`` moved onto or past leather space ``space`` and must place it (R9)."""

    player: int
    space: int


@_event
class LeatherPlaced(NamedTuple):
    """``player`` placed a leather patch (``square`` is None when untracked)."""

    player: int
    square: int | None


@_event
class LeatherDiscarded(NamedTuple):
    """``player`` set a leather patch aside (Express choice, or a full quilt, R10)."""

    player: int


@_event
class SpecialTileAwarded(NamedTuple):
    """``player`` took the 7x7 special tile (R11)."""

    player: int


@_event
class BluePatchesJoined(NamedTuple):
    """Express: the blue patches ``patches`` joined the circle behind the neutral token (R16)."""

    patches: tuple[int, ...]


@_event
class GameEnded(NamedTuple):
    """Both time tokens are on the last space (R12); ``winner`` by score, then R14."""

    winner: int


Event = (PatchBought | ButtonsEarned | TokenMoved | IncomePaid | LeatherWon | LeatherPlaced
         | LeatherDiscarded | SpecialTileAwarded | BluePatchesJoined | GameEnded)
