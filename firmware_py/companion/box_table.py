"""The box at the table: its turns in a game against it, and hints in a game of two.

A part of :class:`~.ui.TableUI` (a mixin: the state machine is one object owned
by the loop thread). The search runs elsewhere: :attr:`think` starts it for a
:class:`~.opponent.BoxRequest` and returns at once, and the answer comes back
on the loop thread through :meth:`BoxTable.box_answer`. Modes:

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

from ..rules import Advance, Buy, IllegalActionError
from ..rules.quilt import has_square
from .buttons import HOLD, PRESS, Gesture
from .opponent import BoxMove, BoxRequest, Think, check_move

HINT_LEVEL = "normal"       #: the level a hint is searched at


class BoxTable:
    """The box's part of the table's state machine (mixed into ``TableUI``)."""

    think: Think | None = None
    box_key = 0                      # the request still open (answers to others are stale)
    box_waiting = False              # a request is open
    box_move: BoxMove | None = None  # the box's move shown now
    box_state = None                 # the state it was planned for (identity)
    box_problem = ""                 # why the last answer was refused
    box_asked = None                 # the state the open request is about (identity)
    box_fresh = False                # the move is shown and no verdict has come since
    hint_move: BoxMove | None = None

    # ----- asking -----------------------------------------------------------------
    def box_seat(self) -> int | None:
        """Player 0/1 played by the box, or None in a game of two people (or in setup)."""
        return self.session.setup.box_seat if self.session is not None else None

    def box_to_move(self) -> bool:
        """True when the box is to move (and no leather patch of the person is owed)."""
        seat = self.box_seat()
        state = self.state
        return seat is not None and state.to_move == seat and not state.owed

    def _box_ready(self) -> None:
        """Entering ``box`` mode: show the move planned for this state (also after an undo
        of it, or a correction of buttons that leaves it legal), or ask for one."""
        move, planned, state = self.box_move, self.box_state, self.state
        if move is not None and planned is not None and (planned is state or (
                planned.offer == state.offer and planned.players[0].position
                == state.players[0].position and planned.players[1].position
                == state.players[1].position and not self._box_refusal(move))):
            self.box_state, self.box_fresh = state, True
            if not self.box_journalled:
                self._write({"kind": "plan", "plan": self._box_json(move)})
            return
        self.box_move = self.box_state = None
        if self.box_waiting and self.box_asked is state:
            return                  # still searching this very state (the menu was open)
        self._box_ask(self.session.box_quilt(), self.session.setup.level)

    def _box_ask(self, quilt: int | None, level: str) -> None:
        self.box_key += 1
        self.box_problem = ""
        self.box_asked = self.state
        if self.think is None:
            self.box_waiting = False
            self.box_problem = "no search on this table"
            return
        self.box_waiting = True
        self.think(BoxRequest(self.box_key, self.state, quilt, level, len(self.session.groups)))

    def box_wanted(self) -> int | None:
        """The key of the open request whose answer the table would still take, or None:
        once the game moved on (an undo, a correction, a new game) or the hint was left,
        an answer would be dropped, so the search can stop (the loop tells it to)."""
        if self.box_waiting and self.session is not None and self.box_asked is self.state:
            return self.box_key
        return None

    def box_answer(self, key: int, answer) -> None:
        """The search's answer to request ``key``: a :class:`BoxMove`, or the exception it
        raised. A stale answer (the game moved on, an undo) is dropped; a move that does
        not fit the game is refused and said, never committed; one that comes while the
        menu is open is kept and shown (and journalled) when the box's turn shows again."""
        if key != self.box_key or not self.box_waiting:
            return
        self.box_waiting = False
        if isinstance(answer, BaseException):
            self.box_problem = f"{type(answer).__name__}: {answer}"
            return
        if self.mode == "hint":
            self.hint_move = answer
            return
        if self.box_asked is not self.state or not self.box_to_move():
            return                                    # the game moved on (an undo)
        problem = self._box_refusal(answer)
        if problem:
            self.box_problem = problem
            return
        self.box_move, self.box_state = answer, self.state
        if self.mode == "box":                        # else kept for when it shows (the menu)
            self.box_fresh = True
            self._write({"kind": "plan", "plan": self._box_json(answer)})

    def _box_refusal(self, move: BoxMove) -> str:
        """Why ``move`` cannot be the box's turn now ("" when it can)."""
        problem = check_move(move, self.state, self.session.box_quilt(), self.box_seat())
        if problem:
            return problem
        try:
            self.session.check(move.group)
        except IllegalActionError as exc:
            return str(exc)
        return ""

    def _box_json(self, move: BoxMove) -> dict:
        return move.to_json(self.state.spec, self.session.group_to_json(move.group))

    def _box_from_json(self, data: dict, group=None) -> BoxMove:
        """A journalled box move (raises ValueError when it is not a move of this game)."""
        if not isinstance(data, dict):
            raise ValueError("the box's move must be an object")
        group = self.session.group_from_json(data.get("moves")) if group is None else group
        return BoxMove.from_json(data, tuple(group), self.state.spec)

    def _box_replayed(self, body: dict, group) -> BoxMove | None:
        """The box's move of a journalled ``turn`` entry about to be replayed (``group``
        parsed from it), or None for a turn of a person. Raises ValueError when the entry
        holds a move the box could not have made before it (the replay keeps the entries
        before it), or a turn of the box's seat without the box's move."""
        if "box" not in body:
            if self.box_to_move() and group and isinstance(group[0], (Advance, Buy)):
                raise ValueError("a turn of the box without the box's move")
            return None
        move = self._box_from_json(body["box"], group)
        problem = self._box_refusal(move)
        if problem:
            raise ValueError(f"the box's turn does not fit the game: {problem}")
        return move

    def _box_resume_plan(self, data) -> None:
        """A ``plan`` entry left last in the journal: show that move again, if it still fits."""
        try:
            move = self._box_from_json(data)
        except ValueError:
            return
        if not self._box_refusal(move):
            self.box_move, self.box_state = move, self.state

    # ----- the box's turn -------------------------------------------------------------
    def _on_box(self, g: Gesture) -> None:
        if self._play_hold(g):
            return
        if g.button != "ok":
            self.notice, self.armed = "", False      # the whole instruction again
            return
        move = self.box_move
        if move is None:
            if not self.box_waiting:
                self._box_ask(self.session.box_quilt(), self.session.setup.level)
            return
        if "sensor" in self.warnings or self.armed:
            self._box_commit()                        # no sensor (or OK twice): done by hand
            return
        self.armed = True
        who = self._colour(self.box_seat())
        self.notice = f"Box: move {who} to {move.target}. OK again: done"

    def _box_undone(self, move: BoxMove | None) -> None:
        """The last turn, just undone, was the box's ``move`` (None: a person's): its turn
        shows that same move again, never a new search's."""
        if move is not None:
            self.box_move, self.box_state = move, self.state

    def _box_token(self, target: int) -> None:
        """The box's token stands on ``target``: its turn is done when that is its target,
        unless it stood there already when the move was first shown (moved there while
        the box thought, or before a power cut): the person has not seen the patch and
        its place yet, so it says so, and one OK (the footer) takes the turn."""
        move = self.box_move
        if move is None or target != move.target:
            return
        if self.box_fresh:
            self.armed = True
            self.notice = f"{self._colour(self.box_seat())} is on {move.target} already"
            return
        self._box_commit()

    def _box_commit(self) -> None:
        move = self.box_move
        if not self._commit(list(move.group), box=move):
            return
        if self.instruction:
            self.tip = "BACK: the box's move again"

    def box_expected(self):
        """The action whose space counts in ``box`` mode (None while the box thinks)."""
        return self.box_move.group[0] if self.box_move is not None else None

    def box_claim_refusal(self, player: int) -> str:
        """Why the menu may not give the 7x7 tile to ``player`` ("" when it may): the box
        claims its own, with its turn, once its quilt holds a 7x7 square (R11); its quilt
        is known, so a claim for it without one would contradict ``meta.box_quilt``."""
        spec = self.state.spec
        if player != self.box_seat() or has_square(self.session.box_quilt(), spec.bonus_square,
                                                   spec.rows, spec.cols):
            return ""
        return "Box has no 7x7: it claims its own"

    # ----- the box's last turn again ------------------------------------------------------
    def last_box_move(self) -> BoxMove | None:
        """The box's move if the last group is one, else None."""
        if self.session is None or not self.session.boxes:
            return None
        return self.session.boxes[-1]

    def _on_box_review(self, g: Gesture) -> None:
        if g.kind == HOLD and g.button == "back":
            self._undo()
        elif g.kind == PRESS:
            self._to_turn()

    # ----- hints (a game of two people) -------------------------------------------------
    def hint_offered(self) -> bool:
        """True when the menu offers "Ask the box": a game of two people, a search on this
        table, and someone to move."""
        return (self.think is not None and self.box_seat() is None
                and self.state.to_move is not None and not self.state.owed)

    def _start_hint(self) -> None:
        self.mode, self.hint_move = "hint", None
        self._box_ask(None, HINT_LEVEL)

    def _on_hint(self, g: Gesture) -> None:
        if g.kind == PRESS:
            self.box_waiting = False                  # a late answer is dropped
            self._to_turn()
