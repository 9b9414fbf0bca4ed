"""Precise errors of the rules engine.

Every illegal action raises a subclass of :class:`IllegalActionError` (itself a
``ValueError``) whose ``rule`` names the rulebook section or ruling it breaks.
The state passed to ``apply()`` is never changed: states are immutable values.
"""
from __future__ import annotations


class SpecError(ValueError):
    """A catalogue or time-board file is malformed (the message names the key)."""


class IllegalActionError(ValueError):
    """An action that the rules do not allow in this state.

    ``rule`` is a short reference such as ``"rulebook: Action B, step 1"`` or
    ``"R2"`` (a ruling of ``spec/rulings.md``).
    """

    rule = "rules"

    def __init__(self, message: str, rule: str | None = None):
        if rule is not None:
            self.rule = rule
        super().__init__(f"{message} ({self.rule})")


class GameOverError(IllegalActionError):
    """No turn can be taken: both time tokens are on the last space."""

    rule = "R12: the game ends when both tokens are on the last space"


class NotOnOfferError(IllegalActionError):
    """The patch is not one of the three in front of the neutral token."""

    rule = "rulebook: Action B step 1, the three patches in front of the neutral token (R3)"


class UnaffordableError(IllegalActionError):
    """The buyer holds fewer buttons than the patch costs."""

    rule = "R2: the full cost is paid from buttons held, no debt"


class PlacementError(IllegalActionError):
    """A patch or leather patch placement that is not allowed (base class)."""

    rule = "R1: any rotation or mirror image, fully inside the quilt, on empty squares"


class OffQuiltError(PlacementError):
    """A cell lies outside the quilt board."""


class OverlapError(PlacementError):
    """A cell is already covered on the buyer's quilt."""


class WrongShapeError(PlacementError):
    """The cells are not a rotation or mirror image of the patch's shape."""


class NoRoomError(PlacementError):
    """The patch fits nowhere on the buyer's quilt, so it cannot be bought."""

    rule = "R2: a patch with no legal placement cannot be bought"


class LeatherOwedError(IllegalActionError):
    """A leather patch was won and must be placed (or set aside) first."""

    rule = "R9: a leather patch won is placed at once, before any other turn"


class NoLeatherOwedError(IllegalActionError):
    """A leather action while no leather patch is waiting to be placed."""

    rule = "R9: only the leather patch just won is placed"


class DiscardNotAllowedError(IllegalActionError):
    """Setting a leather patch aside in Patchwork while the quilt has room."""

    rule = "R9/R10: in Patchwork a leather patch is set aside only when the quilt is full"


class StyleError(IllegalActionError):
    """Tracked and untracked actions mixed in one game."""

    rule = "game record: tracked and untracked styles cannot be mixed"


class SpecialTileError(IllegalActionError):
    """A 7x7 claim where the game has no special tile or the player is unknown."""

    rule = "R11: the 7x7 special tile exists in Patchwork only"


class NotYourTurnError(IllegalActionError):
    """An action attributed to the player who is not to move."""

    rule = "R4: the token furthest behind moves; on a shared space the one on top"


class AdjustError(IllegalActionError):
    """A correction of a player's buttons that is not allowed."""

    rule = "game record: a correction changes buttons by a non-zero amount, never below 0"
