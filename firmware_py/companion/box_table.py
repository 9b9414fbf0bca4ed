"""The box at the table: its turns in a game against it, and hints in a game of two.

:class:`BoxPart` is held by the :class:`~.table.Table` (``table.box``) and changes
only with it, on the loop thread. The search runs elsewhere: asking it is an
:class:`~.effects.AskBox` effect, and the answer comes back through
``Table.box_answer``. Modes:

- ``box``: the box is to move. While it thinks the screen says so and no token
  may move; then its move is shown (and journalled as a ``plan``, so a power
  cut never changes it) until the sensor sees its time token on the target
  space, which commits the whole turn. Without a sensor, OK twice does. A token
  already standing on the target when the move is first shown does not take the
  turn (the person has not seen the patch and its place yet): one OK does.
- ``box_review``: the box's last turn shown again (BACK on the person's turn).
- ``hint``: in a game of two people, what the box would play (from the menu).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..rules import Advance, Buy, IllegalActionError
from ..rules.quilt import has_square
from .buttons import HOLD, PRESS, Gesture
from .effects import AskBox
from .opponent import BoxMove, BoxRequest, check_move
from .view import BoxView, Mode

if TYPE_CHECKING:
    from .table import Table

HINT_LEVEL = "normal"       #: the level a hint is searched at


class BoxPart:
    """The box's part of the table. ``can_think``: the box's search is there."""

    def __init__(self, table: Table, can_think: bool):
        self.t = table
        self.can_think = can_think
        self.key = 0                     # the request still open (answers to others are stale)
        self.waiting = False             # a request is open
        self.move: BoxMove | None = None  # the box's move shown now
        self.state = None                # the state it was planned for (identity)
        self.problem = ""                # why the last answer was refused
        self.asked = None                # the state the open request is about (identity)
        self.fresh = False               # the move is shown and no verdict has come since
        self.hint: BoxMove | None = None
        self.journalled = False          # the move shown is the journal's last entry (a plan)

    def clear(self) -> None:
        """A new game (or a resume): no move planned."""
        self.move = self.state = None

    def view(self) -> BoxView:
        """The box's part of the table's view."""
        return BoxView(self.seat(), self.move, self.waiting, self.problem, self.hint,
                       self.wanted(), self.expected())

    # ----- asking -----------------------------------------------------------------
    def seat(self) -> int | None:
        """Player 0/1 played by the box, or None in a game of two people (or in setup)."""
        return self.t.session.setup.box_seat if self.t.session is not None else None

    def to_move(self) -> bool:
        """True when the box is to move (and no leather patch of the person is owed)."""
        seat = self.seat()
        state = self.t.state
        return seat is not None and state.to_move == seat and not state.owed

    def _still_fits(self, move: BoxMove, planned) -> bool:
        """The move planned for ``planned`` still fits the state now: the very state, or
        one alike in offer and tokens (an undo of it, or a correction of buttons) in which
        it is still legal."""
        state = self.t.state
        return planned is state or (
            planned.offer == state.offer
            and planned.players[0].position == state.players[0].position
            and planned.players[1].position == state.players[1].position
            and not self.refusal(move))

    def ready(self) -> None:
        """Entering ``box`` mode: show the move planned for this state (also after an undo
        of it, or a correction of buttons that leaves it legal), or ask for one."""
        move, planned, state = self.move, self.state, self.t.state
        if move is not None and planned is not None and self._still_fits(move, planned):
            self.state, self.fresh = state, True
            if not self.journalled:
                self.t.write({"kind": "plan", "plan": self.to_json(move)})
            return
        self.move = self.state = None
        if self.waiting and self.asked is state:
            return                  # still searching this very state (the menu was open)
        self._ask(self.t.session.box_quilt(), self.t.session.setup.level)

    def _ask(self, quilt: int | None, level: str) -> None:
        self.key += 1
        self.problem = ""
        self.asked = self.t.state
        if not self.can_think:
            self.waiting = False
            self.problem = "no search on this table"
            return
        self.waiting = True
        self.t.emit(AskBox(BoxRequest(self.key, self.t.state, quilt, level,
                                      len(self.t.session.groups))))

    def wanted(self) -> int | None:
        """The key of the open request whose answer the table would still take, or None:
        once the game moved on (an undo, a correction, a new game) or the hint was left,
        an answer would be dropped, so the search can stop (the loop tells it to)."""
        if self.waiting and self.t.session is not None and self.asked is self.t.state:
            return self.key
        return None

    def answer(self, key: int, answer) -> None:
        """The search's answer to request ``key``: a :class:`BoxMove`, or the exception it
        raised. A stale answer (the game moved on, an undo) is dropped; a move that does
        not fit the game is refused and said, never committed; one that comes while the
        menu is open is kept and shown (and journalled) when the box's turn shows again."""
        if key != self.key or not self.waiting:
            return
        self.waiting = False
        if isinstance(answer, BaseException):
            self.problem = f"{type(answer).__name__}: {answer}"
            return
        if self.t.mode == Mode.HINT:
            self.hint = answer
            return
        if self.asked is not self.t.state or not self.to_move():
            return                                    # the game moved on (an undo)
        problem = self.refusal(answer)
        if problem:
            self.problem = problem
            return
        self.move, self.state = answer, self.t.state
        if self.t.mode == Mode.BOX:                   # else kept for when it shows (the menu)
            self.fresh = True
            self.t.write({"kind": "plan", "plan": self.to_json(answer)})

    def refusal(self, move: BoxMove) -> str:
        """Why ``move`` cannot be the box's turn now ("" when it can)."""
        session = self.t.session
        problem = check_move(move, self.t.state, session.box_quilt(), self.seat())
        if problem:
            return problem
        try:
            session.check(move.group)
        except IllegalActionError as exc:
            return str(exc)
        return ""

    def to_json(self, move: BoxMove) -> dict:
        """The journal form of the box's ``move`` (in the state now)."""
        return move.to_json(self.t.state.spec, self.t.session.group_to_json(move.group))

    def _from_json(self, data: dict, group=None) -> BoxMove:
        """A journalled box move (raises ValueError when it is not a move of this game)."""
        if not isinstance(data, dict):
            raise ValueError("the box's move must be an object")
        session = self.t.session
        group = session.group_from_json(data.get("moves")) if group is None else group
        return BoxMove.from_json(data, tuple(group), self.t.state.spec)

    def replayed(self, body: dict, group) -> BoxMove | None:
        """The box's move of a journalled ``turn`` entry about to be replayed (``group``
        parsed from it), or None for a turn of a person. Raises ValueError when the entry
        holds a move the box could not have made before it (the replay keeps the entries
        before it), or a turn of the box's seat without the box's move."""
        if "box" not in body:
            if self.to_move() and group and isinstance(group[0], (Advance, Buy)):
                raise ValueError("a turn of the box without the box's move")
            return None
        move = self._from_json(body["box"], group)
        problem = self.refusal(move)
        if problem:
            raise ValueError(f"the box's turn does not fit the game: {problem}")
        return move

    def resume_plan(self, data) -> None:
        """A ``plan`` entry left last in the journal: show that move again, if it still fits."""
        try:
            move = self._from_json(data)
        except ValueError:
            return
        if not self.refusal(move):
            self.move, self.state = move, self.t.state

    # ----- the box's turn -------------------------------------------------------------
    def on_box(self, g: Gesture) -> None:
        """The box's turn: OK (twice without a sensor) takes its move by hand; holds as in play."""
        t = self.t
        if t.play_hold(g):
            return
        if g.button != "ok":
            t.notice, t.armed = "", False      # the whole instruction again
            return
        move = self.move
        if move is None:
            if not self.waiting:
                self._ask(t.session.box_quilt(), t.session.setup.level)
            return
        if not t.sensor_online or t.armed:
            self._commit()                    # no sensor (or OK twice): done by hand
            return
        t.armed = True
        t.notice = f"Box: move {t.colour(self.seat())} to {move.target}. OK again: done"

    def undone(self, move: BoxMove | None) -> None:
        """The last turn, just undone, was the box's ``move`` (None: a person's): its turn
        shows that same move again, never a new search's."""
        if move is not None:
            self.move, self.state = move, self.t.state

    def token(self, target: int) -> None:
        """The box's token stands on ``target``: its turn is done when that is its target,
        unless it stood there already when the move was first shown (moved there while
        the box thought, or before a power cut): the person has not seen the patch and
        its place yet, so it says so, and one OK (the footer) takes the turn."""
        move = self.move
        if move is None or target != move.target:
            return
        if self.fresh:
            self.t.armed = True
            self.t.notice = f"{self.t.colour(self.seat())} is on {move.target} already"
            return
        self._commit()

    def _commit(self) -> None:
        move = self.move
        if not self.t.commit(list(move.group), box=move):
            return
        if self.t.instruction:
            self.t.tip = "BACK: the box's move again"

    def expected(self):
        """The action whose space counts in ``box`` mode (None while the box thinks)."""
        return self.move.group[0] if self.move is not None else None

    def claim_refusal(self, player: int) -> str:
        """Why the menu may not give the 7x7 tile to ``player`` ("" when it may): the box
        claims its own, with its turn, once its quilt holds a 7x7 square (R11); its quilt
        is known, so a claim for it without one would contradict ``meta.box_quilt``."""
        spec = self.t.state.spec
        if player != self.seat() or has_square(self.t.session.box_quilt(), spec.bonus_square,
                                                spec.rows, spec.cols):
            return ""
        return "Box has no 7x7: it claims its own"

    # ----- the box's last turn again ------------------------------------------------------
    def last(self) -> BoxMove | None:
        """The box's move if the last group is one, else None."""
        session = self.t.session
        if session is None or not session.boxes:
            return None
        return session.boxes[-1]

    def on_box_review(self, g: Gesture) -> None:
        """The box's last turn shown again: any press goes back, hold BACK undoes it."""
        if g.kind == HOLD and g.button == "back":
            self.t.undo()
        elif g.kind == PRESS:
            self.t.to_turn()

    # ----- hints (a game of two people) -------------------------------------------------
    def hint_offered(self) -> bool:
        """True when the menu offers "Ask the box": a game of two people, a search on this
        table, and someone to move."""
        state = self.t.state
        return (self.can_think and self.seat() is None
                and state.to_move is not None and not state.owed)

    def start_hint(self) -> None:
        """Ask the box what it would play (hint mode)."""
        self.t.mode, self.hint = Mode.HINT, None
        self._ask(None, HINT_LEVEL)

    def on_hint(self, g: Gesture) -> None:
        """The hint shown: any press goes back to the game (a late answer is dropped)."""
        if g.kind == PRESS:
            self.waiting = False
            self.t.to_turn()
