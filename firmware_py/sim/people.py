"""Simulated people at a table: they decide a legal move, then carry it out the way
people do, and the companion must record exactly what they did.

Two players share a real :class:`~firmware_py.service.loop.Service` driven on a
stepping clock: button edges and sensor readings are posted as the gpiozero
callbacks and the sensor link post them, and time moves only when the people
wait (every timer of the loop fires at its due time). The people keep their
own game (what they really played, with the rules engine) and look at the
companion only through what the table shows: the OLED screen model and the
LED lights (where each token should stand, what blinks). Styles, chosen at
random per move:

* ``choose``: NEXT until the patch (or advance) is selected, OK, then move;
* ``first``: move first, then answer "Which move?" by picture and place;
* ``browse``: press NEXT a few times without OK, then move (and answer);
* slides at different speeds with pauses of 0.1 to 2 s on other spaces
  (candidate spaces preferred), or lift and set down;
* ``knock``: the other token is knocked a space on (or off the board) and put
  back before the move;
* ``undo``: after the move is shown, hold BACK, put the token back, redo it;
* ``quick``: the next player moves 0 to 150 ms after the token landed;
* and 15% of the questions about a move made token first (``first``, ``browse``, and
  every move made while a question is open) are left unanswered
  (:data:`LEAVE_OPEN`; quick hands and undo always answer): the player takes the
  patch and lays it on
  the quilt (3 to 8 s, a stop: see ``sensor.stop_seconds``) and the game goes on,
  the other player's turn or the same player's next one; the question is answered
  only when it comes back with the moves made since.

:func:`play_game` plays one seeded game and reports whether the saved record
equals the moves made, and how many questions the companion asked.
"""
from __future__ import annotations

import random
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from ..companion import intents
from ..companion.model import GREEN, YELLOW
from ..companion.session import Session, Setup
from ..companion.ui import BOARDS, GAMES
from ..config import validate
from ..hw.backends import Parts
from ..hw.parts import RawButton
from ..hw.sensor_link import SensorOccupancy
from ..rules import ADVANCE, DISCARD, Buy, PlaceLeather, deal, load_spec, parse_record
from ..service.loop import Service

STYLES = ("choose", "first", "browse", "knock", "undo", "quick")
LEAVE_OPEN = 0.15           # share of the questions about one's own move left unanswered
HANDLING_S = (3.0, 8.0)     # seconds to take a patch and lay it on the quilt (or take buttons)
READINGS = ("1 move or 2?", "Which moves?")     # titles of questions about several moves


class WrongRecord(AssertionError):
    """The companion showed or saved a game the people did not play."""


class Stuck(AssertionError):
    """The people could not get the companion to take their move."""


@dataclass
class Outcome:
    """One game: ``exact`` when the saved record equals the moves made; ``moves`` made;
    ``questions`` ("Which move?" questions the people had to answer with OK or BACK);
    ``shown``: questions shown at all (also those a token moving on made go away);
    ``left_open``: questions about their own move the people left unanswered;
    ``several``: questions about one move or several ("1 move or 2?") answered;
    ``problem`` says what went wrong."""

    seed: int
    exact: bool
    moves: int
    questions: int
    shown: int = 0
    problem: str = ""
    left_open: int = 0
    several: int = 0


@dataclass
class Clock:
    """The stepping clock (seconds)."""

    t: float = 1000.0

    def __call__(self) -> float:
        return self.t


@dataclass
class Board:
    """Where the two physical time tokens are: a space each, None while in the air."""

    at: list = field(default_factory=lambda: [0, 0])

    def occupied(self, extra=()) -> frozenset[int]:
        """What a perfect sensor reads (``extra``: spaces a sliding token also covers)."""
        return frozenset([s for s in self.at if s is not None] + list(extra))


class Table:
    """The companion and the physical table: buttons, tokens, the clock."""

    def __init__(self, folder: Path, game: str, seed: int, cfg: dict | None = None):
        self.clock = Clock()
        self.seed = seed
        cfg = cfg or validate({"backend": "sim"}, "people")
        self.cfg = cfg
        self.service = Service(cfg, Parts(), folder, clock=self.clock,
                               deal=lambda g: deal(load_spec(g), seed))
        self.service.resume()
        self.board = Board()
        self._seq = 0
        self._shown: frozenset[int] | None = None
        self.shown = 0
        self.answered = 0
        self._asked = None
        self.service.step()

    # ----- time and inputs ----------------------------------------------------------------
    def wait(self, dt: float) -> None:
        """Let ``dt`` seconds pass, running the loop at every timer it asks for."""
        end = self.clock.t + dt
        while True:
            due = self.service.step()
            self._count_question()
            if due is None or self.clock.t + max(due, 0.001) >= end:
                break
            self.clock.t += max(due, 0.001)
        self.clock.t = end
        self.service.step()
        self._count_question()

    def _count_question(self) -> None:
        screen = self.screen
        asked = None
        if screen.kind == "prompt" and screen.options:
            asked = (screen.options, screen.lines)
        if asked is not None and asked != self._asked:
            self.shown += 1
        self._asked = asked

    def press(self, button: str, hold: bool = False) -> None:
        """A short press (or a hold) of ``button``."""
        self.service.post(RawButton(button, True, self.clock()))
        self.wait(self.cfg["buttons"]["hold_seconds"] + 0.1 if hold else 0.05)
        self.service.post(RawButton(button, False, self.clock()))
        self.wait(0.05)

    def show(self, extra=(), dwell: float = 0.0) -> None:
        """Post what the sensor reads now (when it changed), then wait ``dwell``."""
        now = self.board.occupied(extra)
        if now != self._shown:
            self._shown = now
            self._seq = (self._seq + 1) % 65536
            self.service.post(SensorOccupancy(now, self._seq, False, self.clock()))
        self.wait(dwell)

    # ----- what the table shows ------------------------------------------------------------
    @property
    def screen(self):
        """The OLED screen model shown now."""
        return self.service.status.screen

    @property
    def lights(self):
        """The LED lights shown now."""
        return self.service.status.lights


class People:
    """Two players with one random source; ``truth`` is the game they really play."""

    def __init__(self, table: Table, rng: random.Random, game: str, board: str, first: str):
        self.table = table
        self.rng = rng
        self.game, self.board_name, self.first = game, board, first
        self.truth: Session | None = None
        self.moves = 0
        self._patience = 2
        self.pending: tuple[list, list] | None = None   # (states, moves) of a question left open
        self._taken: list = []             # moves (of ``settle``) the table took on an answer
        self.left_open = 0                 # questions left unanswered (then moved on)
        self.several = 0                   # "1 move or 2?" questions answered

    # ----- setup ---------------------------------------------------------------------------
    def set_up(self) -> None:
        """Answer the start questions and page through the deal."""
        t = self.table
        wanted = [[g for g, _ in GAMES].index(self.game)]          # option rows, as the UI
        if self.game == "patchwork":                               # lists them
            wanted.append([b for b, _ in BOARDS].index(self.board_name))
        wanted += [(GREEN, YELLOW).index(self.first), 0]           # who starts; deal for me
        for option in wanted:
            self._choose(option)
        while t.screen.kind == "deal":
            t.press("ok")
        circle, blue = deal(load_spec(self.game), self.table.seed)   # as laid out on the table
        self.truth = Session(Setup(self.game, self.board_name, self.first, tuple(circle),
                                   tuple(blue or ()), False))
        t.show(dwell=0.5)

    def _choose(self, row: int) -> None:
        """NEXT until option ``row`` of the question shown is selected, then OK."""
        t = self.table
        for _ in range(8):
            screen = t.screen
            if screen.kind == "choose" and screen.selected == row:
                t.press("ok")
                return
            t.press("next")
        raise Stuck(f"no option {row} on {t.screen.title!r}")

    # ----- the game --------------------------------------------------------------------------
    @property
    def state(self):
        """The game as the people really play it."""
        return self.truth.state

    def play(self) -> None:
        """Play until the game is over."""
        while not self.state.over:
            if self.state.owed:                          # Express: place it or set it aside
                self._leather()
                continue
            self.turn()
        self.until(lambda s: s.kind == "end", "the final tally")

    def decide(self, state):
        """A legal turn action: a patch more often than action A."""
        legal = [a for a in intents.legal_set(state) if isinstance(a, (Buy,)) or a == ADVANCE]
        buys = [a for a in legal if isinstance(a, Buy)]
        if buys and self.rng.random() < 0.7:
            return self.rng.choice(sorted(buys, key=lambda a: a.patch))
        return ADVANCE

    def turn(self) -> None:
        """Decide a move, carry it out in a random style, see it taken (or leave the
        question about it open and go on: see :data:`LEAVE_OPEN`)."""
        state = self.state
        action = self.decide(state)
        style = self.rng.choice(STYLES)
        leave = self.rng.random() < LEAVE_OPEN
        if self.pending is not None:        # a question left open: just move on
            self.table.wait(self.rng.uniform(*HANDLING_S))
            self._turn_after_open(state, action, leave)
            return
        if style == "knock":
            self._knock()
            style = self.rng.choice(("choose", "first", "browse"))
        if style in ("choose", "undo") or (style == "quick" and self.rng.random() < 0.5):
            self._select(action)
            self.table.press("ok")
        elif style == "browse":
            for _ in range(self.rng.randint(1, 4)):
                self.table.press("next")
        self._move(state, action)
        after = self._commit(action)
        if style == "quick" and not after.over and after.to_move != state.to_move \
                and not after.owed:
            self.table.wait(self.rng.uniform(0.0, 0.15))
            second = self.decide(after)
            self._move(after, second, quick=True)
            final = self._commit(second)
            self.settle([after, final], [(state, action), (after, second)])
            return
        self.settle([after], [(state, action)], leave=leave and style in ("first", "browse"))
        if style == "undo" and not after.owed and self.pending is None:
            self.table.press("back", hold=True)
            self.until(lambda s: self._shows(state), "the undone move")
            self._fix_board()
            self._move(state, action, lift=True)
            self.settle([after], [(state, action)])

    def _turn_after_open(self, state, action, leave: bool) -> None:
        """The next turn while a question about the last move stays open: the token is
        moved (no buttons: the screen still asks), and the table must now tell the
        moves apart (asking again, with what was made since)."""
        states, moves = self.pending
        self.pending = None
        self.left_open += 1
        self._move(state, action)
        after = self._commit(action)
        self.settle(states + [after], moves + [(state, action)], leave=leave)

    def _commit(self, action):
        group = [action]
        state, _ = self.truth.check(group)
        while state.owed and state.spec.bonus_square:     # Patchwork: placed at once (R9, R10)
            group.append(DISCARD if state.players[state.owed[0]].empty == 0 else PlaceLeather())
            state, _ = self.truth.check(group)
        if state.owed and state.players[state.owed[0]].empty == 0:
            group.append(DISCARD)                          # Express, full quilt
            state, _ = self.truth.check(group)
        self.truth.commit(group)
        self.moves += 1
        return state

    def _leather(self) -> None:
        place = self.rng.random() < 0.7
        self.until(lambda s: s.kind == "prompt" and not s.options, "the leather question")
        self.table.press("ok" if place else "next")
        self.truth.commit([PlaceLeather() if place else DISCARD])
        self.moves += 1
        self.settle([self.state], [])

    # ----- carrying a move out -----------------------------------------------------------------
    def _select(self, action) -> None:
        """NEXT until the turn screen shows ``action`` chosen (a patch framed, or none for A)."""
        t = self.table
        state = self.state
        place = intents.place_of(state, action)
        for presses in range(len(state.offer) + 3):
            cards = t.screen.patches
            chosen = [i + 1 for i, c in enumerate(cards) if c.selected]
            if presses and (chosen == [place] if place else not chosen):
                return
            t.press("next")
        raise Stuck(f"NEXT never showed {action} chosen")

    def _move(self, state, action, quick: bool = False, lift: bool = False) -> None:
        """Move the mover's token to where ``action`` ends."""
        t, rng = self.table, self.rng
        mover = state.to_move
        start, target = state.players[mover].position, intents.target_of(state, action)
        if lift or rng.random() < 0.3:
            t.board.at[mover] = None
            t.show(dwell=rng.uniform(0.05, 0.2) if quick else rng.uniform(0.1, 1.2))
            t.board.at[mover] = target
            t.show()
            return
        step_s = rng.uniform(0.01, 0.03) if quick else rng.uniform(0.015, 0.12)
        pauses = self._pause_spaces(state, start, target) if not quick else set()
        for space in range(start + 1, target + 1):
            t.show(extra=(space,), dwell=step_s / 2)      # between two spaces
            t.board.at[mover] = space
            t.show(dwell=rng.uniform(0.1, 2.0) if space in pauses else step_s / 2)

    def _pause_spaces(self, state, start: int, target: int) -> set[int]:
        rng = self.rng
        if target - start < 2 or rng.random() < 0.5:
            return set()
        between = list(range(start + 1, target))
        tempting = [s for s in between if s in {intents.target_of(state, a)
                                                 for a in intents.legal_set(state)
                                                 if isinstance(a, Buy) or a == ADVANCE}]
        pool = tempting if tempting and rng.random() < 0.8 else between
        return set(rng.sample(pool, min(len(pool), rng.randint(1, 2))))

    def _knock(self) -> None:
        """Someone knocks the other (waiting) token a space on, or off the board, and puts
        it back; a question the knock raised is answered NO."""
        t, rng = self.table, self.rng
        state = self.state
        who = 1 - state.to_move
        if state.players[0].position == state.players[1].position:
            who = rng.randint(0, 1)                        # sharing a space: either one
        home = state.players[who].position
        t.board.at[who] = None if rng.random() < 0.3 else min(home + 1, state.spec.last_space)
        t.show(dwell=rng.uniform(0.1, 1.5))
        if t.screen.kind == "prompt" and t.screen.options:
            t.answered += 1
            t.press("back")
        t.board.at[who] = home
        t.show()
        self.until(lambda s: self._shows(state) and not t.lights.expected, "the board put back")

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
        asking = screen.kind == "prompt" and bool(screen.options)
        if asking and screen.title in READINGS:
            self._answer_reading(moves)
        elif asking:
            self._answer(moves)
        elif self._redo(moves):
            pass
        elif screen.kind == "prompt" and self.state.owed:
            return True
        elif screen.kind in ("turn", "end"):
            self._check_played(screen, [before] if before else [], states)
        elif screen.kind == "mismatch":                    # the OLED says what to fix
            self._fix_board()
        return False

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


def play_game(seed: int, folder: str | Path | None = None) -> Outcome:
    """Play one seeded game at a simulated table; the record saved must equal the moves made."""
    rng = random.Random(seed)
    game = "patchwork" if rng.random() < 0.7 else "patchwork-express"
    board = rng.choice(("2014", "revised")) if game == "patchwork" else "standard"
    first = rng.choice((GREEN, YELLOW))
    with tempfile.TemporaryDirectory() as tmp:
        table = Table(Path(folder or tmp), game, seed)
        people = People(table, rng, game, board, first)
        try:
            people.set_up()
            people.play()
            saved = parse_record(Path(table.service.status.saved_to).read_text())
            made = people.truth.record().moves
            exact = list(saved.moves) == list(made)
            problem = "" if exact else f"saved {list(saved.moves)} but played {list(made)}"
        except (WrongRecord, Stuck) as exc:
            exact, problem = False, f"{type(exc).__name__}: {exc}"
        finally:
            table.service.stop()        # the history's index thread, before its folder goes
        return Outcome(seed, exact, people.moves, table.answered, table.shown, problem,
                       people.left_open, people.several)
