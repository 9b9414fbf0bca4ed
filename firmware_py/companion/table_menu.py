"""The table's menu (hold OK in play) and what it opens: undo, the 7x7 special tile,
correcting buttons, ending the game, a web PIN, a hint; and the final tally's screen.

Handlers of :class:`~.table.Table` (``HANDLERS``).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..rules import ClaimSpecialTile
from .buttons import HOLD, PRESS, Gesture
from .model import GREEN, YELLOW
from .session import Correction
from .view import Mode

if TYPE_CHECKING:
    from .table import Table

MENU_ITEMS = ("Back to game", "Undo last turn", "Claim 7x7 tile", "Correct buttons", "End game now",
              "Web PIN")
"""The menu's entries; "Web PIN" asks the LAN page for a PIN to show on the OLED (only
someone at the box can ask this way, so no stranger's guessing can hold it up)."""
HINT_ITEM = "Ask the box"


def menu_items(t: Table) -> tuple[str, ...]:
    """The menu's entries for this game (no 7x7 claim in Express or once taken; "Ask the
    box" in a game of two people when the table has the search)."""
    items = list(MENU_ITEMS)
    state = t.state
    if not state.spec.bonus_square or state.special is not None:
        items.remove("Claim 7x7 tile")
    if t.box.hint_offered():
        items.insert(1, HINT_ITEM)
    return tuple(items)


def _web_pin(t: Table) -> None:
    t.pin_asked += 1
    t.to_turn()
    t.notice = "PIN asked: see corner"


_OPENS = {"Undo last turn": lambda t: t.undo(),
          "Claim 7x7 tile": lambda t: setattr(t, "mode", Mode.CLAIM),
          "Correct buttons": lambda t: setattr(t, "mode", Mode.CORRECT_WHO),
          "End game now": lambda t: setattr(t, "mode", Mode.END_CONFIRM),
          HINT_ITEM: lambda t: t.box.start_hint(),
          "Web PIN": _web_pin}
"""What each menu entry does (any other entry goes back to the game)."""


def on_menu(t: Table, g: Gesture) -> None:
    """The menu: NEXT the next entry, OK does it, BACK closes the menu."""
    items = menu_items(t)

    def ok(i: int) -> None:
        """Do the entry chosen."""
        _OPENS.get(items[i], lambda table: table.to_turn())(t)
    t.choose(g, len(items), ok, t.to_turn)


def on_claim(t: Table, g: Gesture) -> None:
    """Who has a 7x7 square (R11): the claim is journalled as a turn of its own."""
    def ok(i: int) -> None:
        """Give the tile to the player chosen (refused for the box without a 7x7)."""
        player = t.session.setup.colours.index((GREEN, YELLOW)[i])
        refusal = t.box.claim_refusal(player)
        if refusal or not t.commit([ClaimSpecialTile(player)]):
            t.to_turn()
            t.notice = refusal or t.notice
    t.choose(g, 2, ok, t.to_turn)


def on_correct_who(t: Table, g: Gesture) -> None:
    """Whose buttons to correct."""
    def ok(i: int) -> None:
        """Correct the buttons of the player chosen."""
        t.correct_player = t.session.setup.colours.index((GREEN, YELLOW)[i])
        t.correct_delta, t.mode = 0, Mode.CORRECT_AMOUNT
    t.choose(g, 2, ok, t.to_turn)


def on_correct_amount(t: Table, g: Gesture) -> None:
    """By how many buttons: NEXT +1, BACK -1 (never below 0 buttons), OK sets it."""
    buttons = t.state.players[t.correct_player].buttons
    if g.kind == HOLD and g.button == "back":
        t.to_turn()
    elif g.kind != PRESS:
        return
    elif g.button == "next":
        t.correct_delta += 1
    elif g.button == "back":
        t.correct_delta = max(-buttons, t.correct_delta - 1)
    elif g.button == "ok":
        if t.correct_delta and not t.commit([Correction(t.correct_player, t.correct_delta)]):
            return
        t.to_turn()


def on_end_confirm(t: Table, g: Gesture) -> None:
    """End the game now? "Yes" ends it with the scores as they stand."""
    def ok(i: int) -> None:
        """End, or play on."""
        if i == 1:
            t.finish()
        else:
            t.to_turn()
    t.choose(g, 2, ok, t.to_turn)


def on_end(t: Table, g: Gesture) -> None:
    """The final tally: OK starts a new game's setup, hold BACK undoes the last turn."""
    if g.kind == HOLD and g.button == "back":
        t.undo()
    elif g.kind == PRESS and g.button == "ok":
        t.session, t.mode, t.cursor, t.notice = None, Mode.SETUP_GAME, 0, ""
        t.instruction = t.tip = ""
        t.choice, t.saved_to = {}, ""


HANDLERS = {Mode.MENU: on_menu, Mode.CLAIM: on_claim, Mode.CORRECT_WHO: on_correct_who,
            Mode.CORRECT_AMOUNT: on_correct_amount, Mode.END_CONFIRM: on_end_confirm,
            Mode.END: on_end}
