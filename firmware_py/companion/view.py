"""The table's face: the values everything outside the table reads.

The table (:class:`~.table.Table`) owns the game at the box and changes only on the
loop thread. Screens, LEDs, the live feed, the keeper, the simulator and the tests
read it only through a :class:`TableView` (a frozen value taken after a change) and
learn what to do from the effects its handlers return (:mod:`.effects`).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from types import MappingProxyType
from typing import Mapping

from ..rules import GameRecord, GameState
from .opponent import BoxMove
from .session import Session, Setup, quilt_of
from .tokens import Expectation, Verdict


class Mode(StrEnum):
    """What the table is doing, which decides what a button gesture means.

    A ``StrEnum``: each mode equals its name as text ("turn"), which is what the
    live feed publishes."""

    SETUP_GAME = "setup_game"          #: which game: Patchwork or Patchwork Express
    SETUP_BOARD = "setup_board"        #: which time board (Patchwork)
    SETUP_PLAYERS = "setup_players"    #: two people, or one against the box
    SETUP_FIRST = "setup_first"        #: who starts (R4)
    SETUP_NAMES = "setup_names"        #: the players' stored names (when there are any)
    SETUP_LAYOUT = "setup_layout"      #: a dealt circle or a free layout
    DEAL = "deal"                      #: laying out the dealt circle, patch by patch
    TURN = "turn"                      #: a person is to move
    CONFIRM = "confirm"                #: "Which move?" / "1 move or 2?"
    LEATHER = "leather"                #: Express: place the leather patch won, or set it aside
    BOX = "box"                        #: the box is to move (its move shown once found)
    BOX_REVIEW = "box_review"          #: the box's last turn shown again
    HINT = "hint"                      #: what the box would play, in a game of two people
    MENU = "menu"                      #: the menu (hold OK)
    CLAIM = "claim"                    #: who takes the 7x7 special tile (R11)
    CORRECT_WHO = "correct_who"        #: whose buttons to correct
    CORRECT_AMOUNT = "correct_amount"  #: by how many buttons
    END_CONFIRM = "end_confirm"        #: end the game now?
    END = "end"                        #: the final tally


PLAY_MODES = frozenset({Mode.TURN, Mode.CONFIRM, Mode.BOX})
"""The modes in which a token on the board can make a move."""


@dataclass(frozen=True)
class Game:
    """The game in progress as a value: ``setup``, the accepted turn ``groups`` (tuples
    of engine actions and corrections), ``boxes`` (per group the box's
    :class:`~.opponent.BoxMove`, or None), ``state`` after them, ``ended`` (RFC 3339,
    "" while it goes on) and ``previous``, the state before the last group (or None)."""

    setup: Setup
    groups: tuple[tuple, ...]
    boxes: tuple[BoxMove | None, ...]
    state: GameState
    ended: str = ""
    previous: GameState | None = None

    @classmethod
    def of(cls, session: Session) -> Game:
        """The value of a session now (the session goes on changing; this does not)."""
        return cls(session.setup, tuple(session.groups), tuple(session.boxes), session.state,
                   session.ended, session.previous_state())

    def previous_state(self) -> GameState | None:
        """The engine state before the last group (None when not kept)."""
        return self.previous

    def session(self) -> Session:
        """A :class:`~.session.Session` holding this game, for building its record."""
        session = Session.restored(self.setup, self.groups, self.state, self.boxes)
        session.ended = self.ended
        return session

    def record(self, players: tuple[str, str] | None = None, meta: dict | None = None) -> GameRecord:
        """The game record so far (see :meth:`.session.Session.record`)."""
        return self.session().record(players, meta)

    def box_quilt(self) -> int:
        """The box's quilt (bitmask of covered squares; 0 in a game of two people)."""
        return quilt_of(self.boxes)


@dataclass(frozen=True)
class BoxView:
    """The box's part of the table: ``seat`` (player 0/1 it plays, None in a game of two
    people or in setup); ``move``: its move shown now (or None); ``waiting``: its search
    is running; ``problem``: why its last answer was refused ("" none); ``hint``: the
    hint found (hint mode); ``wanted``: the key of the open request whose answer the
    table would still take (None: a running search may stop); ``expected``: the action
    whose space counts in box mode (None while it thinks)."""

    seat: int | None = None
    move: BoxMove | None = None
    waiting: bool = False
    problem: str = ""
    hint: BoxMove | None = None
    wanted: int | None = None
    expected: object = None


@dataclass(frozen=True)
class TableView:
    """All that may be read of the table, taken after a change (frozen).

    ``mode``: a :class:`Mode`; ``cursor``: the option selected (0-based) on a choosing
    screen, or the patch shown while dealing; ``choice``: the setup chosen so far
    (``game``, ``time_board``, ``level``, ``first``, ``names``, ``known``, ``circle``,
    ``blue``, ``free``; read-only); ``session``: the game in progress as a :class:`Game`
    (None during setup); ``intent``: the action chosen with NEXT (a ``Buy`` or
    ``Advance``, or None) and ``armed`` once OK confirmed it; ``candidates``: the
    actions asked about ("Which move?") and ``readings`` the readings of several moves
    asked about ("1 move or 2?"); ``notice``, ``instruction``, ``tip``: the turn
    screen's words; ``mismatch``/``guide``: the token watcher's verdict shown as
    guidance (None when the board agrees); ``saved_to``: where the finished game's
    record is ("" not yet, or refused); ``correct_player``/``correct_delta``: the
    button correction being made; ``pin_asked``: how often the menu asked for a web
    PIN; ``menu``: the menu's entries for this game; ``naming``/``name_options``: the
    colour whose name is chosen now and the names offered (setup_names);
    ``box``: a :class:`BoxView`; ``expectation``: where the tokens must be and may
    go (for the token watcher; None outside play); ``asks_names``: the next gesture
    may need the stored player names (pass them in with it).
    """

    mode: Mode
    cursor: int = 0
    choice: Mapping = field(default_factory=lambda: MappingProxyType({}))
    session: Game | None = None
    intent: object = None
    armed: bool = False
    candidates: tuple = ()
    readings: tuple = ()
    notice: str = ""
    instruction: str = ""
    tip: str = ""
    mismatch: Verdict | None = None
    guide: Verdict | None = None
    saved_to: str = ""
    correct_player: int = 0
    correct_delta: int = 0
    pin_asked: int = 0
    menu: tuple[str, ...] = ()
    naming: str = ""
    name_options: tuple[str, ...] = ()
    box: BoxView = BoxView()
    expectation: Expectation | None = None
    asks_names: bool = False

    @property
    def state(self) -> GameState | None:
        """The engine state of the game in progress (None during setup)."""
        return self.session.state if self.session is not None else None

    @property
    def turns(self) -> int:
        """Turn groups accepted so far in the game in progress (0 during setup)."""
        return len(self.session.groups) if self.session is not None else 0

    def selected(self):
        """The action shown as chosen with NEXT (kept while a move is confirmed), or None."""
        return self.intent
