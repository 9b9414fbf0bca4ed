"""The table's setup steps: which game, time board, players, who starts, names, layout.

Handlers of :class:`~.table.Table` for the setup modes (``HANDLERS``). Each takes the
table and one button gesture; NEXT moves the cursor, OK takes the choice, BACK
returns to the step before.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..rules import load_spec
from .buttons import PRESS, Gesture
from .model import GREEN, YELLOW
from .opponent import BOX_NAME, LEVELS
from .view import Mode

if TYPE_CHECKING:
    from .table import Table

GAMES = (("patchwork", "Patchwork"), ("patchwork-express", "Patchwork Express"))
BOARDS = (("2014", "2014 board"), ("revised", "revised board"))
PLAYERS = (("", "Two players"),) + tuple((level, f"Box ({level})") for level in LEVELS)
"""The "Who plays?" choices: two people, or one person against the box at a level."""


def spec_for(choice) -> object:
    """The GameSpec of a (partial) setup choice (a mapping with ``game`` and maybe
    ``time_board``), for screens."""
    return load_spec(choice["game"], choice.get("time_board"))


def _after_board(t: Table) -> Mode:
    """The setup step after the game and time board: who plays, when the box can."""
    return Mode.SETUP_PLAYERS if t.box.can_think else Mode.SETUP_FIRST


def _back_to(t: Table, mode: Mode):
    """A BACK handler going to ``mode``."""
    def back() -> None:
        """Go back one setup step."""
        t.mode = mode
    return back


def on_setup_game(t: Table, g: Gesture) -> None:
    """Which game? Patchwork goes on to the time board; Express has one board."""
    def ok(i: int) -> None:
        """Take the game chosen."""
        game = GAMES[i][0]
        t.choice = {"game": game, "level": ""}
        t.mode = Mode.SETUP_BOARD if game == "patchwork" else _after_board(t)
        if game != "patchwork":
            t.choice["time_board"] = "standard"
    t.choose(g, len(GAMES), ok)


def on_setup_board(t: Table, g: Gesture) -> None:
    """Which time board (Patchwork: the 2014 board or the revised one)."""
    def ok(i: int) -> None:
        """Take the board chosen."""
        t.choice["time_board"] = BOARDS[i][0]
        t.mode = _after_board(t)
    t.choose(g, len(BOARDS), ok, _back_to(t, Mode.SETUP_GAME))


def _before_players(t: Table) -> Mode:
    return Mode.SETUP_BOARD if t.choice.get("game") == "patchwork" else Mode.SETUP_GAME


def on_setup_players(t: Table, g: Gesture) -> None:
    """Two people, or one against the box at a level."""
    def ok(i: int) -> None:
        """Take who plays."""
        t.choice["level"] = PLAYERS[i][0]
        t.mode = Mode.SETUP_FIRST
    t.choose(g, len(PLAYERS), ok, _back_to(t, _before_players(t)))


def on_setup_first(t: Table, g: Gesture) -> None:
    """Who starts (R4); then the names when some are stored, else the layout."""
    def ok(i: int) -> None:
        """Take who starts."""
        t.choice["first"] = (GREEN, YELLOW)[i]
        t.choice["names"] = {YELLOW: BOX_NAME} if t.choice.get("level") else {}
        stored = list(t.known)
        t.choice["known"] = stored
        t.mode = Mode.SETUP_NAMES if stored else Mode.SETUP_LAYOUT
    back = Mode.SETUP_PLAYERS if t.box.can_think else _before_players(t)
    t.choose(g, 2, ok, _back_to(t, back))


def naming(t: Table) -> str:
    """The colour whose name is chosen now (setup_names mode)."""
    return GREEN if GREEN not in t.choice["names"] else YELLOW


def name_options(t: Table) -> tuple[str, ...]:
    """The names offered for :func:`naming`: its colour first (the default), then the
    stored names not taken by the other player."""
    colour = naming(t)
    taken = set(t.choice["names"].values())
    return (colour.capitalize(),) + tuple(n for n in t.choice["known"] if n not in taken)


def on_setup_names(t: Table, g: Gesture) -> None:
    """Each player's name from the stored ones (see companion/names.py)."""
    options = name_options(t)

    def ok(i: int) -> None:
        """Take the name chosen."""
        t.choice["names"][naming(t)] = options[i]
        if len(t.choice["names"]) == 2:
            t.mode = Mode.SETUP_LAYOUT

    def back() -> None:
        """Back to the green player's name, or to who starts."""
        if GREEN in t.choice["names"]:
            t.choice["names"].pop(GREEN)
        else:
            t.mode = Mode.SETUP_FIRST
    t.choose(g, len(options), ok, back)


def on_setup_layout(t: Table, g: Gesture) -> None:
    """A dealt circle (laid out patch by patch next) or a free layout (the game starts)."""
    def ok(i: int) -> None:
        """Deal, and start or lay out."""
        circle, blue = t.deal(t.choice["game"])
        t.choice.update(circle=tuple(circle), blue=tuple(blue), free=(i == 1))
        if i == 1:
            t.start_game()
        else:
            t.mode, t.cursor = Mode.DEAL, 0

    def back() -> None:
        """Back to the last name chosen, or to who starts."""
        if t.choice.get("known"):
            t.choice["names"].pop(GREEN if t.choice.get("level") else YELLOW, None)
            t.mode = Mode.SETUP_NAMES
        else:
            t.mode = Mode.SETUP_FIRST
    t.choose(g, 2, ok, back)


def on_deal(t: Table, g: Gesture) -> None:
    """The dealt circle shown patch by patch; OK on the last starts the game."""
    if g.kind != PRESS:
        return
    total = len(t.choice["circle"])
    if g.button in ("next", "ok"):
        if t.cursor + 1 < total:
            t.cursor += 1
        elif g.button == "ok":
            t.start_game()
    elif g.button == "back":
        if t.cursor == 0:
            t.mode = Mode.SETUP_LAYOUT
        else:
            t.cursor -= 1


HANDLERS = {Mode.SETUP_GAME: on_setup_game, Mode.SETUP_BOARD: on_setup_board,
            Mode.SETUP_PLAYERS: on_setup_players, Mode.SETUP_FIRST: on_setup_first,
            Mode.SETUP_NAMES: on_setup_names, Mode.SETUP_LAYOUT: on_setup_layout,
            Mode.DEAL: on_deal}
