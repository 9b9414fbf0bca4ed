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
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ..companion import intents
from ..companion.model import GREEN, YELLOW
from ..companion.session import Session, Setup
from ..companion.table_setup import BOARDS, GAMES
from ..rules import ADVANCE, DISCARD, Buy, PlaceLeather, deal, load_spec, parse_record
from .people_table import Board, Clock, Table  # noqa: F401  (also read from here)
from .people_watch import READINGS, Stuck, Watching, WrongRecord  # noqa: F401

STYLES = ("choose", "first", "browse", "knock", "undo", "quick")
LEAVE_OPEN = 0.15           # share of the questions about one's own move left unanswered
HANDLING_S = (3.0, 8.0)     # seconds to take a patch and lay it on the quilt (or take buttons)


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


class People(Watching):
    """Two players with one random source; ``truth`` is the game they really play
    (what they see and how they answer: :class:`~firmware_py.sim.people_watch.Watching`)."""

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
