"""The final (or running) tally with its breakdown (R13, R14)."""
from __future__ import annotations

from dataclasses import dataclass

from .engine import score, winner_of
from .state import GameState


@dataclass(frozen=True)
class PlayerTally:
    """One player's score: ``buttons`` + ``special`` (0 or the tile's points)
    - ``penalty`` x ``empty`` = ``score`` (R13)."""

    buttons: int
    special: int
    empty: int
    penalty: int
    score: int


@dataclass(frozen=True)
class Tally:
    """Both players' tallies; ``winner`` (0/1) and ``tie_break`` only once ``over``.

    ``tie_break`` is True when the scores are equal and the winner is the
    player who reached the last space first (R14).
    """

    players: tuple[PlayerTally, PlayerTally]
    over: bool
    winner: int | None
    tie_break: bool

    @property
    def scores(self) -> list[int]:
        """The two scores as a list ``[player 0, player 1]``."""
        return [p.score for p in self.players]


def tally(state: GameState) -> Tally:
    """The tally of ``state``: final when the game is over, as it stands otherwise."""
    spec = state.spec
    rows = []
    for i, p in enumerate(state.players):
        special = spec.bonus_points if state.special == i else 0
        rows.append(PlayerTally(p.buttons, special, p.empty, spec.empty_penalty * p.empty,
                                score(state, i)))
    over = state.over
    winner = winner_of(state) if over else None
    tie = over and rows[0].score == rows[1].score
    return Tally((rows[0], rows[1]), over, winner, tie)
