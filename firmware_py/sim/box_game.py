"""A person playing a whole game against the box at the simulated table, from what it shows.

The person sets up "Play against the box" with the buttons, plays their own
turns (NEXT to a patch they can afford, OK, then their time token to the
lit space, or action A), and carries out each of the box's turns from its
screen alone: the space its time token goes to is read from the screen's
text ("Yellow to 23"), the patch is placed on the box's quilt board where
the quilt picture shows it, and the token is moved; the companion's sensor
does the rest. The box's quilt board as the person built it is kept, so a
test can compare it with what the box recorded.
"""
from __future__ import annotations

import random
import re
from dataclasses import dataclass, field

from ..companion.table_setup import PLAYERS
from .hands import DriveError, Hands

TARGET = re.compile(r"^(Green|Yellow) to (\d+)$")


@dataclass
class BoxGame:
    """What happened: ``turns`` the person and the box made, the box's quilt board as the
    person built it (bitmask), the screens of the box's turns seen (their titles and
    lines), and the problems found carrying them out."""

    person: int = 0
    box: int = 0
    quilt: int = 0
    screens: list = field(default_factory=list)
    problems: list = field(default_factory=list)


class BoxGamePlayer:
    """Plays against the box through ``hands`` (a :class:`Hands` on a running companion);
    ``level`` one of the setup's levels; ``rng`` picks the person's moves."""

    def __init__(self, hands: Hands, level: str = "easy", rng: random.Random | None = None,
                 person_first: bool = True):
        self.hands = hands
        self.level = level
        self.rng = rng or random.Random(0)
        self.person_first = person_first
        self.game = BoxGame()
        self.tokens = [0, 0]            # where each time token stands (token 0: first player)

    def choose(self, index: int) -> None:
        """Pick option ``index`` on a "choose" screen (NEXT index times, then OK)."""
        self.hands.press("next", index)
        self.hands.press("ok")

    def set_up(self) -> None:
        """Patchwork, 2014 board, the box at ``level``, who starts, a dealt circle."""
        h = self.hands
        h.wait(lambda s: s.mode == "setup_game", "the game question")
        self.choose(0)
        self.choose(0)
        h.wait(lambda s: s.mode == "setup_players", "who plays")
        self.choose([level for level, _ in PLAYERS].index(self.level))
        self.choose(0 if self.person_first else 1)
        h.wait(lambda s: s.mode == "setup_layout", "the patch circle question")
        self.choose(0)
        h.wait(lambda s: s.mode == "deal", "the deal")
        while h.status().mode == "deal":
            h.press("ok")
        self.hands.place_tokens([0, 0])

    def play(self, max_turns: int = 200) -> BoxGame:
        """Play until the final tally; raises DriveError when the table gets stuck."""
        h = self.hands
        for _ in range(max_turns):
            status = h.wait(lambda s: s.mode in ("turn", "end")
                            or (s.mode == "box" and s.screen.kind == "box"),
                            "a turn of the person or the box", timeout=60)
            if status.mode == "end":
                return self.game
            if status.mode == "box":
                self._box_turn(status)
            else:
                self._own_turn(status)
        raise DriveError(f"no end after {max_turns} turns")

    # ----- turns -----------------------------------------------------------------------
    def _seat(self, colour: str) -> int:
        """Token index of ``colour`` (the first player's token is token 0)."""
        first = "Green" if self.person_first else "Yellow"
        return 0 if colour == first else 1

    def _own_turn(self, status) -> None:
        h = self.hands
        turns = status.turns
        cards = status.screen.patches
        buyable = [i for i, card in enumerate(cards) if card.buyable]
        if buyable and self.rng.random() < 0.75:
            pick = self.rng.choice(buyable)
        else:
            pick = len(cards)                           # NEXT past the patches: action A
        h.press("next", pick + 1)
        h.press("ok")
        lit = h.wait(lambda s: len(s.lights.targets) == 1, "the lit target space").lights
        target = next(iter(lit.targets))
        token = self._seat(lit.active.capitalize())
        self._move(token, target)
        self._settle(turns)
        self.game.person += 1

    def _box_turn(self, status) -> None:
        screen = status.screen
        self.game.screens.append((screen.title, screen.lines))
        found = [TARGET.match(line) for line in screen.lines]
        found = [m for m in found if m]
        if len(found) != 1:
            raise DriveError(f"the box's screen names no single space: {screen.lines}")
        colour, target = found[0].group(1), int(found[0].group(2))
        if screen.quilt is not None:
            q = screen.quilt
            if q.before != self.game.quilt:
                self.game.problems.append(f"the quilt shown before {screen.title!r} is not "
                                          "the one on the table")
            placed = q.patch | q.leather
            if placed & self.game.quilt:
                self.game.problems.append(f"{screen.title!r}: a square shown is covered")
            self.game.quilt |= placed
        self._move(self._seat(colour), target)
        self._settle(status.turns)
        self.game.box += 1

    def _move(self, token: int, target: int) -> None:
        self.hands.move(token, target, self.rng.choice(("slide", "lift")))
        self.tokens[token] = target

    def _settle(self, turns: int) -> None:
        self.hands.wait(lambda s: s.turns > turns or s.mode == "end", "the move to be taken")
