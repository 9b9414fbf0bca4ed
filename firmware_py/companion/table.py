"""The table: button gestures and token verdicts in, effects and a view out.

One :class:`Table` holds the game at the box. It is owned by the service's loop
thread and, like the sensor link's session, does no I/O, reads no clock and starts
no thread: every input (:meth:`Table.gesture`, :meth:`Table.verdict`,
:meth:`Table.box_answer`, :meth:`Table.resume`) returns the effects the loop must
carry out in order (:mod:`.effects`: journal this entry, save this record, ask the
box, forget this reading), and :meth:`Table.view` gives the :class:`~.view.TableView`
everything else reads. Nothing in the game changes on a rejected input: an illegal
choice only sets a notice.

What each mode does with a gesture lives beside it: :mod:`.table_setup` (the setup
steps), :mod:`.table_play` (turns, questions, leather), :mod:`.table_menu` (the menu
and what it opens), :mod:`.box_table` (the box's turns and hints); where the tokens
must be is :mod:`.table_expect`'s.
"""
from __future__ import annotations

from types import MappingProxyType
from typing import Callable

from ..rules import DISCARD, Buy, DiscardLeather, IllegalActionError, PlaceLeather
from . import intents, table_expect, table_menu, table_play, table_setup
from .box_table import BoxPart
from .buttons import HOLD, PRESS, Gesture
from .effects import Effect, ForgetReading, Journal, SaveRecord
from .session import Correction, Session, Setup
from .tokens import Verdict
from .view import Game, Mode, TableView

Handler = Callable[["Table", Gesture], None]

HANDLERS: dict[Mode, Handler] = {
    **table_setup.HANDLERS, **table_play.HANDLERS, **table_menu.HANDLERS,
    Mode.BOX: lambda t, g: t.box.on_box(g), Mode.BOX_REVIEW: lambda t, g: t.box.on_box_review(g),
    Mode.HINT: lambda t, g: t.box.on_hint(g),
}
"""What a gesture does in each mode (every mode has its handler)."""


class Table:
    """The table's state machine.

    ``deal(game)`` returns ``(circle, blue)`` for a new game (the patch ids in circle
    order, and the Express blue order or ()); it is given the game's name
    ("patchwork"/"patchwork-express") and must not block. ``can_think``: the box's
    search is there (setup then offers a game against the box, the menu a hint).
    """

    def __init__(self, deal: Callable, can_think: bool = False):
        self.deal = deal
        self.box = BoxPart(self, can_think)
        self.session: Session | None = None
        self.mode = Mode.SETUP_GAME
        self.cursor = 0
        self.choice: dict = {}
        self.armed = False
        self.intent = None          # the action chosen with NEXT in turn mode
        self.candidates: list = []
        self.readings: list = []    # "1 move or 2?": readings (tuples of actions) asked about
        self.notice = ""            # a passing word on the turn screen (a refusal, a target)
        self.instruction = ""       # what the last move asks of whom; kept until a move or OK
        self.tip = ""               # a one-time explanation shown with the instruction
        self.grey_told = False      # the dotted (unbuyable) patch picture was explained
        self.mismatch: Verdict | None = None
        self.guide: Verdict | None = None
        self.saved_to = ""
        self.correct_player = 0
        self.correct_delta = 0
        self.tentative = None       # the state before the last move while it is tentative
        self.events: tuple = ()     # the events of the last turn committed
        self.pin_asked = 0          # how often the menu asked for a web PIN (on the live feed)
        self.sensor_online = True   # a token sensor reports the board (else the buttons decide)
        self.wall = ""              # the wall-clock time of the input being handled (RFC 3339)
        self.known: tuple[str, ...] = ()   # the stored player names given with the input
        self._effects: list[Effect] = []

    # ----- inputs -------------------------------------------------------------------------
    def gesture(self, g: Gesture, wall: str = "", names: tuple[str, ...] = ()) -> list[Effect]:
        """Handle one classified button gesture at wall-clock time ``wall`` (RFC 3339; the
        start and end of a game are stamped with it), with the stored player ``names``
        when the view ``asks_names``. Returns the effects to carry out, in order."""
        self.wall, self.known = wall, tuple(names)
        if g.kind in (PRESS, HOLD):
            self.tentative = None   # a player acted: the last move is final
        HANDLERS[self.mode](self, g)
        return self._take()

    def verdict(self, v: Verdict, wall: str = "") -> list[Effect]:
        """Handle the token watcher's verdict on the current stable reading (at wall-clock
        time ``wall``); returns the effects to carry out, in order."""
        self.wall = wall
        shown = self.box.fresh          # the box's move was shown before this reading came
        table_play.judged(self, v)
        if shown:
            self.box.fresh = False      # it has now met the board once
        return self._take()

    def box_answer(self, key: int, answer) -> list[Effect]:
        """The box's search answered request ``key`` (a ``BoxMove`` or the exception it
        raised): see :meth:`.box_table.BoxPart.answer`. Returns the effects."""
        self.box.answer(key, answer)
        return self._take()

    def sensor_status(self, online: bool) -> None:
        """A token sensor reports the board (``online``) or not: without one, OK alone
        (twice) takes a move."""
        self.sensor_online = online

    def record_saved(self, path: str) -> None:
        """The finished game's record was filed at ``path`` ("" when the disk refused it)."""
        if self.session is not None:
            self.saved_to = path

    def resume(self, entries: list[dict]) -> list[Effect]:
        """Rebuild the game from the journal's effective entries (setup, turns, plans, end);
        returns the effects (the box may be asked for its move). Raises ValueError (or an
        engine error) when an entry does not replay; the caller keeps the good prefix."""
        self._effects = []
        if not entries or entries[0].get("kind") != "setup":
            return []
        session = Session(Setup.from_json(entries[0]["setup"]))
        ended = False
        self.tentative = None
        self.session = session
        self.box.clear()
        for body in entries[1:]:
            if body.get("kind") == "turn":
                before = session.state
                group = session.group_from_json(body["moves"])
                session.commit(group, self.box.replayed(body, group))
                self.tentative = before if body.get("tentative") else None
            elif body.get("kind") == "plan":
                self.box.resume_plan(body.get("plan"))
            elif body.get("kind") == "end":
                ended = True
                at = body.get("ended", "")
                session.ended = at if isinstance(at, str) else ""
        self.box.journalled = self.box.move is not None
        self.mode = Mode.END if ended or session.state.over else self.play_mode()
        if self.mode == Mode.END:
            self.tentative = None
        elif self.mode == Mode.BOX:
            self.box.ready()
        self.cursor = 0
        return self._take()

    # ----- the face ---------------------------------------------------------------------------
    def view(self) -> TableView:
        """All that may be read of the table now, as a frozen value."""
        session = self.session
        choice = dict(self.choice)
        for key in ("names", "known"):
            if key in choice:
                choice[key] = MappingProxyType(dict(choice[key])) if key == "names" \
                    else tuple(choice[key])
        naming = table_setup.naming(self) if self.mode == Mode.SETUP_NAMES else ""
        return TableView(
            self.mode, self.cursor, MappingProxyType(choice),
            Game.of(session) if session is not None else None,
            self.intent, self.armed, tuple(self.candidates), tuple(self.readings), self.notice,
            self.instruction, self.tip, self.mismatch, self.guide, self.saved_to,
            self.correct_player, self.correct_delta, self.pin_asked,
            table_menu.menu_items(self) if session is not None else (),
            naming, table_setup.name_options(self) if naming else (),
            self.box.view(), table_expect.expectation(self),
            self.mode == Mode.SETUP_FIRST)

    # ----- shared by the handlers ---------------------------------------------------------------
    @property
    def state(self):
        """The engine state of the game in progress (None during setup)."""
        return self.session.state if self.session else None

    def emit(self, effect: Effect) -> None:
        """Queue ``effect`` for the loop (returned by the input being handled)."""
        self._effects.append(effect)

    def write(self, body: dict) -> None:
        """Journal ``body`` (an effect); any entry but a plan drops the box's journalled plan."""
        self.box.journalled = body.get("kind") == "plan"
        self.emit(Journal(body))

    def forget_reading(self) -> None:
        """The board as it stands makes no move (an effect for the token watcher)."""
        self.emit(ForgetReading())

    def _take(self) -> list[Effect]:
        effects, self._effects = self._effects, []
        return effects

    def play_mode(self) -> Mode:
        """The mode of play now: a leather decision, the box's turn, or a person's turn."""
        state = self.state
        if state.owed and state.spec.bonus_square == 0:
            return Mode.LEATHER
        return Mode.BOX if self.box.to_move() else Mode.TURN

    def to_turn(self, keep_intent: bool = False) -> None:
        """Back to play (the person's or the box's turn, or a leather decision)."""
        self.mode = self.play_mode()
        self.candidates = []
        if not keep_intent or self.mode == Mode.BOX:
            self.intent, self.armed = None, False
        if self.mode == Mode.BOX:
            self.box.ready()

    def start_game(self) -> None:
        """Start the game chosen in setup (journalled first)."""
        c = self.choice
        names = c.get("names") or {}
        chosen = (names.get("green", "Green"), names.get("yellow", "Yellow"))
        level = c.get("level", "")
        setup = Setup(c["game"], c["time_board"], c["first"], c["circle"], c["blue"], c["free"],
                      chosen if chosen != ("Green", "Yellow") else (), started=self.wall,
                      box="yellow" if level else "", level=level)
        self.write({"kind": "setup", "setup": setup.to_json()})
        self.session = Session(setup)
        self.box.clear()
        self.forget_reading()        # the board still shows the last game: forget it
        self.to_turn()
        self.explain_grey()

    def group(self, action) -> tuple[list, object]:
        """``action`` plus the leather patches it places by itself, and the state after
        (None when ``action`` is refused: the notice says why)."""
        group = [action]
        state, _ = self.check(group)
        if state is None:
            return group, None
        while state.owed and state.spec.bonus_square:         # Patchwork: placed at once (R9)
            full = state.players[state.owed[0]].empty == 0
            group.append(DISCARD if full else PlaceLeather())  # R10 on a full quilt
            state, _ = self.check(group)
        if state.owed and state.players[state.owed[0]].empty == 0:
            group.append(DISCARD)                               # Express, full quilt: no choice
            state, _ = self.check(group)
        return group, state

    def check(self, group):
        """``session.check(group)``, a refusal said as the notice: (None, ()) then."""
        try:
            return self.session.check(group)
        except IllegalActionError as exc:
            self.notice = f"not allowed: {exc}"
            return None, ()

    def play(self, action, tentative: bool = False) -> None:
        """Commit ``action`` with what follows by itself; a ``tentative`` move stays open to
        revision until a player acts. (The move that ends the game lands on the other
        token, on the last space, so it is always chosen or answered with OK: final.)"""
        group, state = self.group(action)
        if state is not None:
            self.commit(group, tentative)

    def commit(self, group, tentative: bool = False, box=None) -> bool:
        """Journal and apply ``group`` (the box's ``box`` move when it is the box's turn);
        False when it is refused (nothing changes but the notice)."""
        state, events = self.check(group)
        if state is None:
            return False
        body = {"kind": "turn", "moves": self.session.group_to_json(group)}
        if tentative:
            body["tentative"] = True
        if box is not None:
            body["box"] = self.box.to_json(box)
        before = self.session.state
        self.write(body)
        events = self.events = self.session.commit(group, box)
        self.tentative = before if tentative else None
        self.notice = ""
        said = intents.notices(events, self.session.setup.seat_names())
        if not all(isinstance(a, (PlaceLeather, DiscardLeather)) for a in group):
            self.tip = ""               # a tip about the last move goes with the next one
        elif not said:
            said = self.instruction     # the move's instruction still stands
        self.instruction = said
        if not self.instruction and isinstance(group[0], Correction):
            buttons = self.state.players[group[0].player].buttons
            self.instruction = f"{self.who(group[0].player)}: {buttons} buttons now"
        self.mismatch = None
        if self.state.over:
            self.finish()
        else:
            self.to_turn()
            self.explain_grey()
        return True

    def explain_grey(self) -> None:
        """The first time a patch on offer cannot be bought, say once what its
        dotted picture means."""
        state = self.state
        if self.grey_told or state is None or state.to_move is None:
            return
        if any(intents.why_not(state, Buy(pid)) for pid in state.offer[:3]):
            self.grey_told = True
            self.tip = "Dotted picture: can't buy it now"

    def who(self, player: int | None) -> str:
        """The name of player 0/1 where known ("Anna", "Box"), else the colour ("Green")."""
        return self.session.setup.seat_names()[player or 0]

    def colour(self, player: int | None) -> str:
        """"Green"/"Yellow" for player 0/1 of the game in progress."""
        return self.session.setup.colours[player or 0].capitalize()

    def finish(self) -> None:
        """End the game: journal the end, then ask for its record to be saved."""
        self.session.ended = self.wall
        self.write({"kind": "end", "ended": self.session.ended})
        self.mode = Mode.END
        self.saved_to = ""
        self.emit(SaveRecord(Game.of(self.session)))

    def undo(self) -> None:
        """Take back the last turn (journalled as an undo) and say what to give back."""
        if self.session is None or not self.session.groups:
            self.notice = "nothing to undo"
            return
        if self.mode == Mode.END:
            self.write({"kind": "undo"})          # first lift the "end" entry
            self.session.ended = ""
            if not self.state.over:
                self.saved_to = ""
                self.to_turn()
                return
        self.write({"kind": "undo"})
        box = self.session.boxes[-1]
        group = self.session.undo()
        self.tentative = None
        self.forget_reading()
        self.mismatch = None
        self.box.undone(box)
        self.to_turn()
        self.notice, self.tip = "", ""
        self.instruction = self.undo_words(group)
        if self.mode == Mode.BOX:                 # its move shows again: say first what to undo
            self.notice = self.instruction

    def undo_words(self, group) -> str:
        """What to give back for the undone ``group`` (the state is the one before it)."""
        state = self.state
        first = group[0]
        if isinstance(first, Correction):
            return (f"{self.who(first.player)}: buttons back to "
                    f"{state.players[first.player].buttons}")
        try:
            _, events = self.session.check(group)
        except IllegalActionError:
            events = ()
        player = next((e.player for e in events if hasattr(e, "player")), state.to_move)
        return intents.undo_notice(events, state, self.session.setup.seat_names(), player or 0)

    def choose(self, g: Gesture, count: int, on_ok: Callable[[int], None], on_back=None) -> None:
        """A choosing screen of ``count`` options: NEXT moves the cursor, OK takes it
        (``on_ok(index)``), BACK calls ``on_back`` (if any)."""
        if g.kind != PRESS:
            return
        if g.button == "next":
            self.cursor = (self.cursor + 1) % count
        elif g.button == "ok":
            chosen, self.cursor = self.cursor, 0
            on_ok(chosen)
        elif g.button == "back" and on_back is not None:
            self.cursor = 0
            on_back()

    def play_hold(self, g: Gesture) -> bool:
        """The holds of play: OK opens the menu, BACK undoes the last turn. True when ``g``
        was a hold (handled here)."""
        if g.kind != HOLD:
            return False
        if g.button == "ok":
            self.mode, self.cursor = Mode.MENU, 0
        elif g.button == "back":
            self.undo()
        return True
