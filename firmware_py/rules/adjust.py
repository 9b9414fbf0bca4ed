"""Corrections made at the table: a player's buttons changed by hand.

A correction is not a rule of the game but a fact of the table ("Green took
3 buttons too few"): the game record writes it as ``{"adjust": P, "buttons":
N}`` where it was made, and replaying applies it, so a record tallies exactly
as the table did. It takes no turn and changes nothing but that player's
buttons. Applied here, beside the engine, as a pure step: the checked
``apply()`` is not involved.
"""
from __future__ import annotations

from typing import NamedTuple

from .errors import AdjustError
from .state import GameState


class Adjust(NamedTuple):
    """Player ``player`` (0 or 1) gets ``buttons`` more (a non-zero int; negative: fewer)."""

    player: int
    buttons: int


class ButtonsAdjusted(NamedTuple):
    """The event of an :class:`Adjust`: ``player`` now holds ``total`` buttons."""

    player: int
    buttons: int
    total: int


def adjust_buttons(state: GameState, adjust: Adjust) -> tuple[GameState, tuple[ButtonsAdjusted]]:
    """Apply one correction; return ``(new_state, (ButtonsAdjusted,))``.

    Raises :class:`~.errors.AdjustError` when the player is not 0 or 1, the
    amount is not a non-zero int, or the player would hold fewer than 0
    buttons; ``state`` is never changed.
    """
    player, buttons = adjust
    if type(player) is not int or player not in (0, 1):
        raise AdjustError(f"a correction names player 0 or 1, got {player!r}")
    if type(buttons) is not int or buttons == 0:
        raise AdjustError(f"a correction changes buttons by a non-zero integer, got {buttons!r}")
    old = state.players[player]
    total = old.buttons + buttons
    if total < 0:
        raise AdjustError(f"player {player} holds {old.buttons} buttons; taking {-buttons} "
                          f"would leave {total}")
    players = list(state.players)
    players[player] = old._replace(buttons=total)
    return state._replace(players=tuple(players)), (ButtonsAdjusted(player, buttons, total),)
