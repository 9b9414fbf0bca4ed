"""Plays a game record at the simulated table, move by move, as two people would.

Setup through the menus, the deal paged through, then for each move: action A
by moving the token (choosing it first when the target is ambiguous), patches
bought either by choosing with NEXT/OK and then moving, or by moving first and
confirming (answering "Which move?" when the companion asks), the 7x7 claimed
from the menu, corrections made with "Correct buttons" from the menu, Express
leather patches placed (OK) or set aside (NEXT). Tokens alternately slide and
are lifted. A free-layout record is set up with "free layout" (no deal) and each
patch is bought the way a free layout works: the token moves first and the patch
is picked among those whose time matches the distance, confirmed with OK.
"""
from __future__ import annotations

from ..companion import intents
from ..companion.model import GREEN, YELLOW
from ..rules import ADVANCE, Buy, GameRecord, untracked_copy
from .hands import DriveError, Hands

SETUP_GAMES = ("patchwork", "patchwork-express")
SETUP_BOARDS = ("2014", "revised")


class TablePlayer:
    """Drives :class:`Hands` through ``record`` (tracked or untracked)."""

    def __init__(self, hands: Hands, record: GameRecord):
        self.hands = hands
        self.record = record
        self.plan = untracked_copy(record).moves

    # ----- helpers -----------------------------------------------------------------------
    def _call(self, fn):
        return self.hands.service.call(fn)

    def _view(self):
        """The table's view now (taken on the loop thread)."""
        return self._call(lambda: self.hands.service.view)

    def progress(self) -> int:
        """How many record moves the companion has accepted in this game."""
        view = self._view()
        return len(view.session.record().moves) if view.session else -1

    def choose(self, index: int) -> None:
        """Pick option ``index`` on a "choose" screen (NEXT index times, then OK)."""
        self.hands.press("next", index)
        self.hands.press("ok")

    # ----- setup -------------------------------------------------------------------------
    def setup(self) -> None:
        """Answer the start screens and page through the dealt circle (or choose free layout)."""
        h = self.hands
        h.wait(lambda s: s.mode == "setup_game", "the game question")
        self.choose(SETUP_GAMES.index(self.record.game))
        if self.record.game == "patchwork":
            self.choose(SETUP_BOARDS.index(self.record.time_board))
        h.wait(lambda s: s.mode in ("setup_players", "setup_first"), "who plays")
        if h.status().mode == "setup_players":
            self.choose(0)                               # two players
        first = YELLOW if self.record.players[0].lower() == YELLOW else GREEN
        self.choose((GREEN, YELLOW).index(first))
        if self.record.free:
            self.choose(1)                               # free layout: no deal
            h.wait(lambda s: s.mode == "turn", "the first turn")
            return
        self.choose(0)                                   # deal the circle
        h.wait(lambda s: s.mode == "deal", "the deal")
        h.press("next", len(self.record.circle) - 1)
        h.press("ok")
        h.wait(lambda s: s.mode == "turn", "the first turn")

    # ----- play --------------------------------------------------------------------------
    def play(self) -> None:
        """Play every move of the record (resuming where the companion stands)."""
        if self._view().session is None:
            self.setup()
        state = self._view().state
        self.hands.place_tokens([p.position for p in state.players])
        self.hands.await_board({p.position for p in state.players})
        done = self.progress()
        if list(self.plan[:done]) != list(self._view().session.record().moves):
            raise DriveError("the journal holds a different game than the record")
        for index in range(done, len(self.plan)):
            self.step(index, self.plan[index])
        self.hands.wait(lambda s: s.mode == "end", "the final tally")

    def step(self, index: int, move) -> None:
        """Make record move ``index`` at the table and wait until it is accepted."""
        h = self.hands
        h.wait(lambda s: s.mode in ("turn", "leather"), f"move {index}: the turn screen")
        state = self._view().state
        if isinstance(move, dict) and "bonus" in move:
            self._claim(move["bonus"])
        elif isinstance(move, dict) and "adjust" in move:
            self._adjust(move["adjust"], move["buttons"])
        elif isinstance(move, dict) and "leather" in move:
            if state.spec.bonus_square == 0:
                h.press("next")                          # Express: set aside
        elif move == "advance":
            self._turn(index, state, ADVANCE)
        else:
            self._turn(index, state, Buy(move["buy"]))
        try:
            h.wait(lambda s: self.progress() > index, f"move {index} ({move}) to be accepted")
        except DriveError as exc:
            raise DriveError(f"move {index} {move}: {exc}") from None
        self._leather_prompt(index)

    def _leather_prompt(self, index: int) -> None:
        nxt = self.plan[index + 1] if index + 1 < len(self.plan) else None
        if self.hands.status().mode == "leather" and nxt != {"leather": "discard"}:
            self.hands.press("ok")                       # Express: place it

    def _turn(self, index: int, state, action) -> None:
        h = self.hands
        mover = state.to_move
        target = intents.target_of(state, action)
        onto = target == state.players[1 - mover].position
        ambiguous = len(intents.candidates_at(state, target)) > 1
        choose_first = (index % 2 == 0 or (action == ADVANCE and ambiguous)) and not state.free
        if choose_first:
            options = intents.turn_options(state)
            h.press("next", options.index(action) + 1)
            h.press("ok")
        h.move(mover, target, "lift" if index % 3 == 2 else "slide")
        h.await_board({target, state.players[1 - mover].position})
        if onto or not choose_first:        # asked, or taken at once: either is fine
            self._confirm(index, action)

    def _confirm(self, index: int, action) -> None:
        h = self.hands
        h.wait(lambda s: s.mode == "confirm" or self.progress() > index,
               f"move {index}: the confirm question")
        if self.progress() > index:
            return
        view = self._view()
        candidates, cursor = list(view.candidates), view.cursor
        h.press("next", (candidates.index(action) - cursor) % len(candidates))
        h.press("ok")

    def _adjust(self, player: int, buttons: int) -> None:
        """Menu, "Correct buttons", the player's colour, NEXT (+1) or BACK (-1) per button, OK."""
        h = self.hands
        h.hold("ok")
        h.wait(lambda s: s.mode == "menu", "the menu")
        items = self._view().menu
        self.choose(items.index("Correct buttons"))
        colour = self._view().session.setup.colours[player]
        self.choose((GREEN, YELLOW).index(colour))
        h.wait(lambda s: s.mode == "correct_amount", "the amount question")
        h.press("next" if buttons > 0 else "back", abs(buttons))
        h.press("ok")

    def _claim(self, player: int) -> None:
        h = self.hands
        h.hold("ok")
        h.wait(lambda s: s.mode == "menu", "the menu")
        items = self._view().menu
        self.choose(items.index("Claim 7x7 tile"))
        colour = self._view().session.setup.colours[player]
        self.choose((GREEN, YELLOW).index(colour))
