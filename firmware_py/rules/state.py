"""The immutable game state and the setup of a new game."""
from __future__ import annotations

import random
from typing import NamedTuple

from .catalogue import GameSpec, load_spec
from .errors import SpecError


class PlayerState(NamedTuple):
    """One player: time-token ``position`` (0..last space), ``buttons`` held (>= 0),
    ``income`` (buttons printed on their patches), ``quilt`` (bitmask of covered
    squares; 0 when quilts are untracked) and ``empty`` squares left.
    """

    position: int
    buttons: int
    income: int
    quilt: int
    empty: int


class GameState(NamedTuple):
    """A whole game at one moment; a frozen value, never changed in place.

    - ``players``: two :class:`PlayerState`; player 0 took the first turn.
    - ``top``: the player whose token is on top when both share a space (R4).
    - ``circle``: patch ids clockwise from the neutral token; the first three
      are on offer (R3).
    - ``blue``: Express blue patches still waiting to join the circle (R16).
    - ``leather``: leather spaces whose patch has not been won yet (R9).
    - ``owed``: one entry (the winner) per leather patch won but not yet placed.
    - ``special``: holder of the 7x7 special tile, or None (R11).
    - ``finisher``: the first player to reach the last space, or None (R14).
    - ``tracked``: True when quilts are bitmasks, False when only counted.
    - ``free``: free layout (design 2.1): any patch left may be bought, the
      neutral-token rule is not checked; False for a dealt circle (R3).
    """

    spec: GameSpec
    players: tuple[PlayerState, PlayerState]
    top: int
    circle: tuple[int, ...]
    blue: tuple[int, ...]
    leather: tuple[int, ...]
    owed: tuple[int, ...]
    special: int | None
    finisher: int | None
    tracked: bool
    free: bool = False

    @property
    def over(self) -> bool:
        """True when both tokens are on the last space and no leather patch is owed (R12)."""
        last = self.spec.last_space
        return (self.players[0].position == last and self.players[1].position == last
                and not self.owed)

    @property
    def to_move(self) -> int | None:
        """The player who acts now (R4), the leather winner while one is owed (R9), None at the end."""
        return player_to_move(self)

    @property
    def offer(self) -> tuple[int, ...]:
        """The (up to) three patch ids in front of the neutral token (R3); all left when free."""
        return self.circle if self.free else self.circle[:3]


def player_to_move(state: GameState) -> int | None:
    """:attr:`GameState.to_move` as a plain function (the engine calls it every turn).

    The leather winner while a leather patch is owed (R9); otherwise the
    player further behind, or the one on top of a shared space (R4); None
    once both tokens are on the last space.
    """
    if state.owed:
        return state.owed[0]
    a = state.players[0].position
    b = state.players[1].position
    if a < b:
        return 0
    if b < a:
        return 1
    if a == state.spec.last_space:
        return None
    return state.top


def deal(spec: GameSpec, seed: int | None) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Shuffle a circle (smallest patch last, R3) and the Express blue order (R16).

    The same seed always gives the same deal. Returns ``(circle, blue)``.
    """
    rng = random.Random(seed)
    smallest = spec.smallest_patch
    circle = [p for p in spec.circle_patches if p != smallest]
    rng.shuffle(circle)
    blue = list(spec.blue_patches)
    rng.shuffle(blue)
    return tuple(circle) + (smallest,), tuple(blue)


def _check_circle(spec: GameSpec, circle, blue, free: bool = False) -> None:
    """Every circle patch once and (dealt only) the smallest last (R3); every blue patch once.
    A free layout lists the same patches in any order."""
    if sorted(circle) != sorted(spec.circle_patches):
        raise SpecError(f"circle must hold each of the {len(spec.circle_patches)} "
                        f"{spec.game} circle patches once, got {list(circle)}")
    if not free and circle[-1] != spec.smallest_patch:
        raise SpecError(f"circle must end with the smallest patch {spec.smallest_patch} (R3), "
                        f"got {circle[-1]}")
    if sorted(blue) != sorted(spec.blue_patches):
        raise SpecError(f"blue must hold each blue patch {sorted(spec.blue_patches)} once, "
                        f"got {list(blue)}")


def new_game(game: str = "patchwork", time_board: str | None = None, *, seed: int | None = None,
             tracked: bool = True, circle=None, blue=None, spec: GameSpec | None = None,
             free: bool = False) -> GameState:
    """A new game: both tokens on space 0 with the starting buttons, player 0 on top.

    ``game`` is "patchwork" or "patchwork-express"; ``time_board`` "2014"
    (default) or "revised" for Patchwork (R15). The circle (and Express blue
    order) is dealt from ``seed`` unless given explicitly. ``tracked`` chooses
    bitmask quilts (True) or counted quilts (False); ``free`` lets any patch
    be bought (a circle laid out freely, design 2.1; its ``circle`` may list
    the patches in any order). Raises :class:`SpecError` for a circle or blue
    order that is not a full, valid set.
    """
    spec = spec or load_spec(game, time_board)
    given = circle is not None or blue is not None
    if circle is None or blue is None:
        dealt_circle, dealt_blue = deal(spec, seed)
        circle = dealt_circle if circle is None else circle
        blue = dealt_blue if blue is None else blue
    circle, blue = tuple(circle), tuple(blue)
    if given:                                       # a dealt circle is valid by construction
        _check_circle(spec, circle, blue, free)
    player = PlayerState(0, spec.starting_buttons, 0, 0, spec.quilt_size)
    return GameState(spec, (player, player), 0, circle, blue, spec.leather_spaces, (),
                     None, None, tracked, free)
