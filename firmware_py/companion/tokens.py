"""Reading moves from the token sensor (design section 5), in pure code.

The sensor reports which spaces are occupied, never which token is where. A
reading counts only once it has been stable for ``stable_s``; it is then
compared with the occupancies that the legal moves of the player to move
would produce, so a slide or a lift-and-set-down is one move. Readings and
times go in, verdicts come out; no clock, no I/O.

Beyond one move, the watch knows three situations that real hands produce:

* **a tentative move moved on** (:data:`REVISE`): the UI may pass the
  expectation from before its last, still tentative move
  (``Expectation.previous``); a reading with the waiting token unmoved and the
  mover's token on another target of that earlier expectation (or back home)
  revises that move, and so does one where the token moved on and then the
  other player moved quickly;
* **quick hands** (:data:`THEN`, :data:`ASK`): the next player moved before the
  first move's reading was stable. The recent readings show whether the
  mover's token landed first (then both moves are taken in order); when they
  cannot tell, the UI asks;
* **a stop on the way** (``Verdict.stops``): the spaces where the mover's token
  rested at least ``stop_s`` since the board last stood as the game has it
  (a hand sliding on rests less; a player who made a move there and then a
  second one of their own rested longer, to take a patch and lay it on the
  quilt). A reading reached through stops may be one move or several; the UI
  asks when more than one reading is legal (``Expectation.onward`` says
  whether a space off the one-move targets is reachable that way);
* **a disturbed board**: a move counts only if the waiting player's token
  stayed on its space in every reading since the board last stood as the game
  has it, so a knocked token, or tokens put back one at a time after hands out
  of turn, never pass for a move.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

WAIT = "wait"          # nothing to decide yet (unstable, or a reading already consumed)
STILL = "still"        # the board matches the game
MOVE = "move"          # the mover's token stands on a candidate target
ONTO = "onto"          # one token visible on the opponent's space: moved onto it, or lifted?
LIFTED = "lifted"      # a token is in the air (not yet long enough for guidance)
MISMATCH = "mismatch"  # the board disagrees with the game for ``guidance_s``
REVISE = "revise"      # the tentative last move's token moved on (``target``) or back (None)
THEN = "then"          # the mover landed on ``target`` and then the next player moved
ASK = "ask"            # two moves were made but their order cannot be told: ``choices``

TRACE = 256            # readings remembered (a slide over the whole board is ~110)


@dataclass(frozen=True)
class Expectation:
    """Where the game says the tokens are and what the player to move may do.

    ``positions``: (player 0's space, player 1's space); ``mover``: 0, 1 or
    None (nobody may move); ``targets``: the spaces the mover's legal actions
    end on (each 0..last space). ``follow``: pairs (target, spaces) giving, for
    each target after which the *other* player moves, the spaces that
    player's legal actions could end on (for quick hands; empty: not known).
    ``previous``: the expectation before the last move while that move is
    still tentative (a token moving on revises it), else None. ``onward``:
    ``onward(stops, space)`` is True when the mover may have reached ``space``
    (off ``targets``) by several turns of their own resting on some of
    ``stops`` (spaces, oldest first); None: only one move counts (a choice
    made with OK). It must compare equal for the same game state.
    """

    positions: tuple[int, int]
    mover: int | None
    targets: frozenset[int]
    follow: tuple[tuple[int, frozenset[int]], ...] = ()
    previous: "Expectation | None" = None
    onward: Callable[[tuple[int, ...], int], bool] | None = None


@dataclass(frozen=True)
class Verdict:
    """The decision about the stable reading: ``kind`` (module constants),
    ``target`` for MOVE/ONTO/THEN/REVISE, ``choices`` (target spaces) for ASK, and
    ``{target}`` for a REVISE after which the other player moved quickly (final),
    ``expected`` spaces a token must return to and ``wrong`` spaces that must
    be cleared (for MISMATCH and LIFTED). ``stops`` (MOVE, ONTO, REVISE, THEN): the
    spaces where the mover's token stood at least ``stop_s`` on the way, oldest
    first (see :meth:`TokenWatch.stops`)."""

    kind: str
    target: int | None = None
    expected: frozenset[int] = frozenset()
    wrong: frozenset[int] = frozenset()
    choices: frozenset[int] = frozenset()
    stops: tuple[int, ...] = ()


class TokenWatch:
    """Tracks readings over time and judges the stable one against an :class:`Expectation`.

    ``stable_s`` (seconds, ~0.15): how long a reading must stay unchanged to
    count. ``guidance_s`` (~2): how long a disagreeing reading stays before
    MISMATCH guidance. ``onto_s`` (default 0.8, at most ``guidance_s``): how
    long one token alone must be seen on the opponent's space before it is
    ONTO (until then it is a token in the air: any lift looks the same, and
    the question would flash while a token is carried). ``stop_s`` (default
    2.0): a rest of the mover's token on a space at least this long is a stop
    (a move may have ended there); shorter rests are a hand sliding on.
    Times are seconds of one monotonic clock.
    """

    def __init__(self, stable_s: float = 0.15, guidance_s: float = 2.0,
                 onto_s: float | None = None, stop_s: float = 2.0):
        self.stable_s = stable_s
        self.guidance_s = guidance_s
        self.onto_s = min(0.8 if onto_s is None else onto_s, guidance_s)
        self.stop_s = stop_s
        self.occupied: frozenset[int] | None = None
        self.since = 0.0
        self.trace: list[frozenset[int]] = []     # recent readings, oldest first
        self.began: list[float] = []              # when each reading of ``trace`` began
        self._consumed: frozenset[int] | None = None

    def reading(self, occupied: frozenset[int], now: float) -> None:
        """A new sensor reading (the set of occupied spaces) at ``now``."""
        if occupied != self.occupied:
            self.occupied = frozenset(occupied)
            self.since = now
            self.trace.append(self.occupied)
            self.began.append(now)
            del self.trace[:-TRACE]
            del self.began[:-TRACE]

    def consume(self, now: float | None = None) -> None:
        """Ignore the current reading until it changes (after an undo, a cancel, a
        new game or a move entered by buttons), so one reading never makes two
        moves; the readings before it are forgotten.

        With ``now``, the guidance delay restarts then: the players get
        ``guidance_s`` to put the tokens back before the board is called wrong.
        """
        self._consumed = self.occupied
        self.trace = []                 # what came before says nothing about the next move
        self.began = []
        if now is not None and self.occupied is not None:
            self.since = now

    def next_deadline(self, now: float) -> float | None:
        """When :meth:`judge` may next give a different verdict, or None."""
        if self.occupied is None:
            return None
        for delay in sorted((self.stable_s, self.onto_s, self.guidance_s)):
            if now < self.since + delay:
                return self.since + delay
        return None

    def judge(self, expect: Expectation, now: float) -> Verdict:
        """The verdict on the current reading under ``expect`` at ``now``."""
        reading = self.occupied
        if reading is None or now - self.since < self.stable_s - 1e-9:
            return Verdict(WAIT)
        home = frozenset(expect.positions)
        if reading == home:
            self._consumed = None
            return Verdict(STILL)
        if reading == self._consumed:
            return self._guidance(reading, home, now, consumed=True)
        verdict = self._explain(reading, expect)
        if verdict is not None and (verdict.kind != ONTO or now - self.since >= self.onto_s - 1e-9):
            return verdict
        return self._guidance(reading, home, now)

    def stops(self, expect: Expectation) -> tuple[int, ...]:
        """The spaces where the mover's token (of ``expect``) rested at least ``stop_s``
        since the board last stood as ``expect`` has it, oldest first: readings of the
        waiting token and one other space (or the waiting token alone: the mover on it,
        or in the air) that lasted that long. Its home space and the reading now (still
        lasting) never count."""
        mover = expect.mover
        if mover is None:
            return ()
        other, start = expect.positions[1 - mover], expect.positions[mover]
        home = frozenset(expect.positions)
        found = []
        last = len(self.trace) - (1 if self.trace and self.trace[-1] == self.occupied else 0)
        for i in range(last - 1, -1, -1):
            seen = self.trace[i]
            if seen == home:
                break
            if self.began[i + 1] - self.began[i] < self.stop_s - 1e-9 or other not in seen:
                continue
            rest = seen - {other}
            space = other if not rest else next(iter(rest)) if len(rest) == 1 else None
            if space is not None and space != start:
                found.append(space)
        return tuple(reversed(found))

    def _explain(self, reading: frozenset[int], expect: Expectation) -> Verdict | None:
        verdict = None
        if expect.mover is not None and self._unbroken(expect):
            verdict = self._with_stops(_as_move(reading, expect), expect) \
                or self._as_onward(reading, expect, MOVE)
        if verdict is None and expect.previous is not None and self._unbroken(expect.previous):
            verdict = self._with_stops(_as_revision(reading, expect.previous), expect.previous) \
                or self._as_onward(reading, expect.previous, REVISE)
        if verdict is not None:
            return verdict
        quick = self._as_two_moves(reading, expect) if expect.mover is not None else None
        if (quick is None or quick.kind != THEN) and expect.previous is not None:
            moved_on = self._as_two_moves(reading, expect.previous)
            if moved_on is not None and moved_on.kind == THEN:   # seen to land, then quick hands
                return Verdict(REVISE, moved_on.target, choices=frozenset((moved_on.target,)),
                               stops=moved_on.stops)
        return quick

    def _with_stops(self, verdict: Verdict | None, expect: Expectation) -> Verdict | None:
        """``verdict`` with the stops on the way (when the UI may read several moves)."""
        if verdict is None or verdict.target is None or expect.onward is None:
            return verdict
        stops = self.stops(expect)
        return Verdict(verdict.kind, verdict.target, choices=verdict.choices, stops=stops) \
            if stops else verdict

    def _as_onward(self, reading: frozenset[int], expect: Expectation, kind: str) -> Verdict | None:
        """The mover's token on a space no one move reaches, but several of its own turns
        through the stops on the way may: ``kind`` (MOVE or REVISE; ONTO on the waiting
        token) with those stops, or None."""
        if expect.onward is None:
            return None
        other = expect.positions[1 - expect.mover]
        rest = reading - {other}
        if other not in reading or len(rest) > 1:
            return None
        space = next(iter(rest)) if rest else other
        stops = self.stops(expect)
        if not stops or not expect.onward(stops, space):
            return None
        return Verdict(ONTO if space == other and kind == MOVE else kind, space, stops=stops)

    def _as_two_moves(self, reading: frozenset[int], expect: Expectation) -> Verdict | None:
        """The mover went to t and the other player then moved: which t explain ``reading``?"""
        other = expect.positions[1 - expect.mover]
        if other in reading:
            return None
        follow = dict(expect.follow)
        fits = []
        for t in sorted(expect.targets):
            rest = reading - {t}
            if t == other or t not in reading or len(rest) > 1:
                continue
            second = next(iter(rest)) if rest else t       # empty: stacked onto the mover's token
            if second in follow.get(t, ()):
                fits.append(t)
        home = frozenset(expect.positions)
        landed = [t for t in fits if self._landed(t, other, home)]
        if len(landed) == 1:
            return self._with_stops(Verdict(THEN, landed[0]), expect)
        if fits:
            return Verdict(ASK, choices=frozenset(landed or fits))
        return None

    def _unbroken(self, expect: Expectation) -> bool:
        """The waiting token's space stayed occupied in every reading since the board last
        stood as ``expect`` has it (so only the mover's token moved since)."""
        waiting = expect.positions[1 - expect.mover]
        home = frozenset(expect.positions)
        for seen in reversed(self.trace):
            if seen == home:
                return True
            if waiting not in seen:
                return False
        return True

    def _landed(self, target: int, other: int, home: frozenset[int]) -> bool:
        """The recent readings show the mover's token resting on ``target`` while the other
        token was still on ``other`` (never off it since the board stood at ``home``), and
        never leaving ``target`` after that."""
        landing = frozenset((target, other))
        seen_landing = False
        for seen in reversed(self.trace):
            if not seen_landing:
                seen_landing = seen == landing
                if not seen_landing and target not in seen:
                    return False
            elif seen == home:
                return True
            elif other not in seen:
                return False
        return seen_landing

    def _guidance(self, reading, home, now, consumed: bool = False) -> Verdict:
        expected = home - reading
        wrong = reading - home
        if now - self.since < self.guidance_s - 1e-9:
            return Verdict(WAIT if consumed or wrong else LIFTED, None, expected, wrong)
        return Verdict(MISMATCH, None, expected, wrong)


def _as_move(reading: frozenset[int], expect: Expectation) -> Verdict | None:
    mover = expect.mover
    other = expect.positions[1 - mover]
    for target in sorted(expect.targets):
        if target != other and reading == frozenset((target, other)):
            return Verdict(MOVE, target)
    if other in expect.targets and reading == frozenset((other,)):
        return Verdict(ONTO, other)
    return None


def _as_revision(reading: frozenset[int], before: Expectation) -> Verdict | None:
    """The tentative move's token (the mover of ``before``) moved on or back, the other unmoved."""
    other = before.positions[1 - before.mover]
    home = frozenset(before.positions)
    if len(home) == 2 and reading == home:
        return Verdict(REVISE, None)
    for target in sorted(before.targets):
        if target != other and reading == frozenset((target, other)):
            return Verdict(REVISE, target)
    return None
