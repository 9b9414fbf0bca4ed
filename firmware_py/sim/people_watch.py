"""How the simulated people see their move taken: they look at what the table shows
(the OLED screen model, the LED lights), answer its questions by picture and place,
and put the tokens where the lights say (see :mod:`firmware_py.sim.people`)."""
from __future__ import annotations

import re

from ..companion import intents
from ..rules import Buy

READINGS = ("1 move or 2?", "Which moves?")     # titles of questions about several moves


class WrongRecord(AssertionError):
    """The companion showed or saved a game the people did not play."""


class Stuck(AssertionError):
    """The people could not get the companion to take their move."""


class Watching:
    """The people's eyes on the table: settling a move, answering, fixing the board.

    A part of :class:`~firmware_py.sim.people.People`: it reads ``table``, ``rng``,
    ``truth``, ``pending`` and the answer counters, and makes a dropped move again
    with ``_move``.
    """

    # ----- seeing it taken ------------------------------------------------------------------
    def _shows(self, state) -> bool:
        """The turn (or end) screen shows ``state``: each player's space, buttons, empty
        squares and who moves."""
        screen = self.table.screen
        if screen.kind not in ("turn", "end") or len(screen.players) != 2:
            return False
        colours = self.truth.setup.colours
        for i, line in enumerate(screen.players):
            p = state.players[i]
            if (line.colour, line.position, line.buttons, line.empty) != \
                    (colours[i], p.position, p.buttons, p.empty):
                return False
            if screen.kind == "turn" and line.active != (state.to_move == i):
                return False
        return True

    def settle(self, states, moves, leave: bool = False) -> None:
        """Look at the table until it shows the last of ``states``: answer questions about
        ``moves`` ((state before, action) pairs) by picture and place, fix the board as the
        lights say. A shown game that is none of the states passed through is a wrong record.
        With ``leave``, a question about the last move is left open (kept in
        :attr:`pending`) unless the game is over or a leather patch is owed."""
        t = self.table
        before = moves[0][0] if moves else None
        for _ in range(60):
            t.wait(self.rng.uniform(0.3, 0.8))
            screen = t.screen
            if self._settled(states[-1]):
                self._taken = []
                return
            if leave and self._leaves_open(screen, states[-1], moves):
                self.pending = (list(states), list(moves))
                return
            if self._react(screen, states, moves, before):
                return                                     # the leather question: next
        raise Stuck(f"the table never showed the move; it shows {t.screen.kind} "
                    f"{t.screen.title!r} {t.screen.lines} {t.screen.notice!r}")

    def _settled(self, last) -> bool:
        """The table shows ``last`` (a state) and its lights ask for nothing."""
        t = self.table
        return self._shows(last) and not t.lights.expected and not t.lights.wrong

    def _leaves_open(self, screen, last, moves) -> bool:
        """``screen`` asks about this colour's last move (of ``moves``) and the game, at
        ``last``, is neither over nor owes a leather patch: the question may stay open."""
        return screen.kind == "prompt" and bool(screen.options) and self._own(moves) \
            and not last.over and not last.owed

    def _react(self, screen, states, moves, before) -> bool:
        """Do what ``screen`` asks once: answer a question, make a dropped move again or
        fix the board as the OLED says. True when the leather question is next (settling
        ends there). Raises :class:`WrongRecord` when the table shows a game that is none
        of ``before`` and ``states``."""
        if screen.kind == "prompt" and screen.options:
            self._answer_shown(screen, moves)
        elif self._redo(moves):
            pass
        elif screen.kind == "prompt" and self.state.owed:
            return True
        elif screen.kind in ("turn", "end"):
            self._check_played(screen, [before] if before else [], states)
        elif screen.kind == "mismatch":                    # the OLED says what to fix
            self._fix_board()
        return False

    def _answer_shown(self, screen, moves) -> None:
        """Answer the question ``screen`` asks: about several moves ("1 move or 2?") by
        :meth:`_answer_reading`, else by :meth:`_answer`."""
        if screen.title in READINGS:
            self._answer_reading(moves)
        else:
            self._answer(moves)

    def _check_played(self, screen, before: list, states) -> None:
        """Raise :class:`WrongRecord` unless the game ``screen`` shows is one of ``before``
        and ``states`` (the states passed through)."""
        if not any(self._shows(s) for s in before + list(states)):
            raise WrongRecord(f"the table shows a game not played: {screen.players}")

    def _redo(self, moves) -> bool:
        """A move the table dropped (the token went back, as asked): make it again."""
        t = self.table
        for state, action in moves:
            if self._shows(state) and not t.lights.expected and not t.lights.wrong \
                    and t.board.at == [p.position for p in state.players]:
                self._move(state, action, lift=True)
                return True
        return False

    def _answer(self, moves) -> None:
        """Answer "Which move?": NEXT until the selected option is a wanted move (the patch's
        picture and place match, or action A), then OK; NO (BACK) when none is offered."""
        t = self.table
        about = self._about(moves)
        if not about and self._patience > 0:            # about another space: look again
            self._patience -= 1
            return
        self._patience = 2
        for _ in range(len(t.screen.options) + 1):
            screen = t.screen
            if screen.kind != "prompt" or not screen.options:
                return
            picked = next((c for c in screen.patches if c.selected), None)
            for move in about:
                if self._is(picked, *move):
                    t.answered += 1
                    self._taken.append(move)
                    t.press("ok")
                    return
            t.press("next")
        t.answered += 1
        t.press("back")

    def _own(self, moves) -> bool:
        """The question shown is about the colour that made the last of ``moves``."""
        found = re.match(r"(Green|Yellow)\b", (self.table.screen.lines or ("",))[0])
        state = moves[-1][0] if moves else None
        return bool(found) and state is not None and \
            self.truth.setup.colours[state.to_move] == found.group(1).lower()

    def _answer_reading(self, moves) -> None:
        """Answer "1 move or 2?": NEXT until the selected reading (the line's words,
        the pictures and places of its patches) is exactly the moves this colour made
        since the table last took one of theirs, then OK; NO (BACK) when none is."""
        t = self.table
        for _ in range(len(t.screen.options) + 1):
            screen = t.screen
            if screen.kind != "prompt" or screen.title not in READINGS:
                return
            made = self._untaken_run(moves, screen.lines[0])
            if made and self._reads_as(screen, made):
                t.answered += 1
                self.several += 1
                self._taken += made
                t.press("ok")
                return
            t.press("next")
        t.answered += 1
        t.press("back")

    def _untaken_run(self, moves, line: str) -> list:
        """The last run of moves in a row by the colour the ``line`` names that the table
        has not taken yet."""
        found = re.match(r"(Green|Yellow)\b", line)
        colours = self.truth.setup.colours
        run: list = []
        for move in moves:
            state = move[0]
            if found and colours[state.to_move] == found.group(1).lower() \
                    and not self._was_taken(move):
                run.append(move)
            elif run:
                run = []
        return run

    @staticmethod
    def _reads_as(screen, made) -> bool:
        """The selected reading (line and pictures) says the moves ``made``, in order."""
        said = re.match(r"(?:Green|Yellow)(?::|, one move:) (.*)\?$", screen.lines[0])
        if not said:
            return False
        parts = said.group(1).split(", then ")
        cards = [c for c in screen.patches if c.selected]
        buys = [(s, a) for s, a in made if isinstance(a, Buy)]
        if len(parts) != len(made) or len(cards) != len(buys):
            return False
        for part, (state, action) in zip(parts, made):
            words = re.fullmatch(r"(\d)(?:st|nd|rd|th) patch at (\d+)|advance to (\d+)", part)
            if not words:
                return False
            target = intents.target_of(state, action)
            if isinstance(action, Buy):
                if words.group(1) is None or (int(words.group(1)), int(words.group(2))) != \
                        (intents.place_of(state, action), target):
                    return False
            elif words.group(3) is None or int(words.group(3)) != target:
                return False
        return all(card.shape == state.spec.patches[a.patch].shape
                   and card.index == intents.place_of(state, a)
                   for card, (state, a) in zip(cards, buys))

    def _was_taken(self, move) -> bool:
        return any(move is taken for taken in self._taken)

    def _about(self, moves) -> list:
        """The moves a question is about: the line names the colour and the space(s)."""
        found = re.match(r"(Green|Yellow) on ([\d or]+):", (self.table.screen.lines or ("",))[0])
        if not found:
            return []
        colour = found.group(1).lower()
        spaces = {int(n) for n in found.group(2).split(" or ")}
        colours = self.truth.setup.colours
        return [m for m in moves if colours[m[0].to_move] == colour
                and intents.target_of(*m) in spaces and not self._was_taken(m)]

    @staticmethod
    def _is(card, state, action) -> bool:
        if isinstance(action, Buy):
            patch = state.spec.patches[action.patch]
            return card is not None and card.shape == patch.shape and \
                card.index == intents.place_of(state, action)
        return card is None

    def _fix_board(self) -> None:
        """Put each token where the LEDs show its colour should stand."""
        t = self.table
        colours = self.truth.setup.colours
        where = dict(t.lights.tokens)
        for i in (0, 1):
            space = where.get(colours[i])
            if space is not None and t.board.at[i] != space:
                t.board.at[i] = None
                t.show(dwell=self.rng.uniform(0.1, 0.4))
                t.board.at[i] = space
                t.show(dwell=0.2)

    def until(self, predicate, what: str, tries: int = 40) -> None:
        """Wait (fixing the board as asked) until ``predicate(screen)``."""
        t = self.table
        for _ in range(tries):
            t.wait(0.3)
            if predicate(t.screen):
                return
            if t.screen.kind == "mismatch":
                self._fix_board()
        raise Stuck(f"never saw {what}; the table shows {t.screen.kind} {t.screen.title!r}")
