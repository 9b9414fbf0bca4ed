"""Reading moves from the token sensor (design section 5), in pure code.

The sensor reports which spaces are occupied, never which token is where. A
reading counts only once it has been stable for ``stable_s``; it is then
compared with the occupancies that the legal moves of the player to move
would produce, never with earlier readings, so a slide or a lift-and-set-down
is one move. Readings and times go in, verdicts come out; no clock, no I/O.
"""
from __future__ import annotations

from dataclasses import dataclass

WAIT = "wait"          # nothing to decide yet (unstable, or a reading already consumed)
STILL = "still"        # the board matches the game
MOVE = "move"          # the mover's token stands on a candidate target
ONTO = "onto"          # one token visible on the opponent's space: moved onto it, or lifted?
LIFTED = "lifted"      # a token is in the air (not yet long enough for guidance)
MISMATCH = "mismatch"  # the board disagrees with the game for ``guidance_s``


@dataclass(frozen=True)
class Expectation:
    """Where the game says the tokens are and what the player to move may do.

    ``positions``: (player 0's space, player 1's space); ``mover``: 0, 1 or
    None (nobody may move); ``targets``: the spaces the mover's legal actions
    end on (each 0..last space).
    """

    positions: tuple[int, int]
    mover: int | None
    targets: frozenset[int]


@dataclass(frozen=True)
class Verdict:
    """The decision about the stable reading: ``kind`` (module constants),
    ``target`` for MOVE/ONTO, ``expected`` spaces a token must return to and
    ``wrong`` spaces that must be cleared (for MISMATCH and LIFTED)."""

    kind: str
    target: int | None = None
    expected: frozenset[int] = frozenset()
    wrong: frozenset[int] = frozenset()


class TokenWatch:
    """Tracks readings over time and judges the stable one against an :class:`Expectation`.

    ``stable_s`` (seconds, ~0.15): how long a reading must stay unchanged to
    count. ``guidance_s`` (~2): how long a disagreeing reading stays before
    MISMATCH guidance. Times are seconds of one monotonic clock.
    """

    def __init__(self, stable_s: float = 0.15, guidance_s: float = 2.0):
        self.stable_s = stable_s
        self.guidance_s = guidance_s
        self.occupied: frozenset[int] | None = None
        self.since = 0.0
        self._consumed: frozenset[int] | None = None

    def reading(self, occupied: frozenset[int], now: float) -> None:
        """A new sensor reading (the set of occupied spaces) at ``now``."""
        if occupied != self.occupied:
            self.occupied = frozenset(occupied)
            self.since = now

    def consume(self, now: float | None = None) -> None:
        """Ignore the current reading until it changes (after an undo, a cancel or
        a move entered by buttons), so one reading never makes two moves.

        With ``now``, the guidance delay restarts then: the players get
        ``guidance_s`` to put the tokens back before the board is called wrong.
        """
        self._consumed = self.occupied
        if now is not None and self.occupied is not None:
            self.since = now

    def next_deadline(self, now: float) -> float | None:
        """When :meth:`judge` may next give a different verdict, or None."""
        if self.occupied is None:
            return None
        for delay in (self.stable_s, self.guidance_s):
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
        if expect.mover is not None:
            verdict = self._as_move(reading, expect)
            if verdict is not None:
                return verdict
        return self._guidance(reading, home, now)

    def _as_move(self, reading: frozenset[int], expect: Expectation) -> Verdict | None:
        mover = expect.mover
        other = expect.positions[1 - mover]
        for target in sorted(expect.targets):
            if target != other and reading == frozenset((target, other)):
                return Verdict(MOVE, target)
        if other in expect.targets and reading == frozenset((other,)):
            return Verdict(ONTO, other)
        return None

    def _guidance(self, reading, home, now, consumed: bool = False) -> Verdict:
        expected = home - reading
        wrong = reading - home
        if now - self.since < self.guidance_s - 1e-9:
            return Verdict(WAIT if consumed or wrong else LIFTED, None, expected, wrong)
        return Verdict(MISMATCH, None, expected, wrong)
