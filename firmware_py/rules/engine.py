"""Legal actions and ``apply()``: the rules of Patchwork and Patchwork Express.

Pure functions of immutable :class:`~.state.GameState` values: no I/O, no
clock, no randomness. ``apply()`` checks every rule and raises a precise
:class:`~.errors.IllegalActionError`; the state it was given never changes.
"""
from __future__ import annotations

from bisect import bisect_right

from . import actions as A
from . import errors as E
from .quilt import has_square, placements
from .state import GameState, PlayerState


def _buy_table(spec) -> tuple[tuple[tuple[int, A.Buy], ...], ...]:
    """Per patch id: every (mask, Buy) placement on an empty quilt (memoised per spec)."""
    table = spec.memo.get("buys")
    if table is None:
        table = tuple(tuple((m, A.Buy(p.id, m)) for m in placements(p.cells, spec.rows, spec.cols))
                      for p in spec.patches)
        spec.memo["buys"] = table
        spec.memo["masks"] = tuple(frozenset(m for m, _ in row) for row in table)
    return table


def placement_masks(spec, patch: int) -> frozenset[int]:
    """Every placement mask of ``patch`` on an empty quilt of ``spec`` (R1)."""
    _buy_table(spec)
    return spec.memo["masks"][patch]


def legal_actions(state: GameState) -> list[A.Action]:
    """Every action the player to move may take now, in a stable order.

    While a leather patch is owed: where it may go (each empty square when
    tracked) and, when allowed, setting it aside (R9, R10). Otherwise action A
    first, then each affordable patch on offer with each distinct placement
    (tracked) or once (untracked, when its area fits the empty squares).
    Empty at the end of the game. The 7x7 claim is a declaration, not listed.
    """
    if state.owed:
        return _leather_actions(state)
    mover = state.to_move
    if mover is None:
        return []
    player = state.players[mover]
    spec = state.spec
    out: list[A.Action] = [A.ADVANCE]
    if state.tracked:
        table = _buy_table(spec)
        quilt = player.quilt
        for pid in state.offer:
            if spec.patches[pid].cost <= player.buttons:
                out += [buy for mask, buy in table[pid] if not mask & quilt]
    else:
        buys = _untracked_buys(spec)
        patches = spec.patches
        for pid in state.offer:
            patch = patches[pid]
            if patch.cost <= player.buttons and patch.area <= player.empty:
                out.append(buys[pid])
    return out


def _untracked_buys(spec) -> tuple[A.Buy, ...]:
    buys = spec.memo.get("untracked_buys")
    if buys is None:
        buys = spec.memo["untracked_buys"] = tuple(A.Buy(p.id) for p in spec.patches)
    return buys


def _leather_actions(state: GameState) -> list[A.Action]:
    player = state.players[state.owed[0]]
    express = state.spec.bonus_square == 0
    if player.empty == 0:
        return [A.DISCARD]
    if state.tracked:
        free = ~player.quilt
        out: list[A.Action] = [A.PlaceLeather(sq) for sq in range(state.spec.quilt_size)
                               if free >> sq & 1]
    else:
        out = [A.PlaceLeather()]
    if express:
        out.append(A.DISCARD)
    return out


def apply(state: GameState, action: A.Action) -> tuple[GameState, tuple[A.Event, ...]]:
    """Apply ``action`` for the player to move; return ``(new_state, events)``.

    Raises a subclass of :class:`~.errors.IllegalActionError` naming the rule
    when the action is illegal; ``state`` itself is never changed.
    """
    kind = type(action)
    events: list[A.Event] = []
    if kind is A.ClaimSpecialTile:
        return _claim_special(state, action)
    if state.owed:
        if kind is A.PlaceLeather or kind is A.DiscardLeather:
            return _leather(state, action, events)
        if state.tracked:
            raise E.LeatherOwedError(f"player {state.owed[0]} must first place the leather patch won")
        state = _auto_leather(state, events)
    elif kind is A.PlaceLeather or kind is A.DiscardLeather:
        raise E.NoLeatherOwedError("no leather patch is waiting to be placed")
    mover = state.to_move
    if mover is None:
        raise E.GameOverError("the game is over")
    if kind is A.Advance:
        state = _advance(state, mover, events)
    elif kind is A.Buy:
        state = _buy(state, mover, action, events)
    else:
        raise TypeError(f"not an action: {action!r}")
    last = state.spec.last_space
    if state.players[0].position == last == state.players[1].position and not state.owed:
        events.append(A.GameEnded(winner_of(state)))
    return state, tuple(events)


def _advance(state: GameState, mover: int, events: list) -> GameState:
    spec = state.spec
    player = state.players[mover]
    target = min(state.players[1 - mover].position + 1, spec.last_space)
    gained = target - player.position
    events.append(A.ButtonsEarned(mover, gained))
    return _move(state, mover, player, target, events, earned=gained)


def _buy(state: GameState, mover: int, action: A.Buy, events: list) -> GameState:
    spec = state.spec
    pid = action.patch
    circle = state.circle
    if pid not in (circle if state.free else circle[:3]):
        raise E.NotOnOfferError(f"patch {pid} is not on offer; the offer is {list(circle[:3])}")
    patch = spec.patches[pid]
    player = state.players[mover]
    if patch.cost > player.buttons:
        raise E.UnaffordableError(f"patch {pid} costs {patch.cost} buttons, "
                                  f"player {mover} holds {player.buttons}")
    if state.tracked or action.mask is not None or patch.area > player.empty:
        quilt = _place_patch(state, player, pid, action.mask)
    else:
        quilt = 0                                   # untracked: counted, nothing to place
    events.append(A.PatchBought(mover, pid, patch.cost))
    index = circle.index(pid)
    circle = circle[index + 1:] + circle[:index]
    blue = state.blue
    if blue and len(circle) <= spec.blue_enter_when_left:
        events.append(A.BluePatchesJoined(blue))
        circle, blue = circle + blue, ()
    special = state.special
    if state.tracked and special is None and _has_special(spec, quilt):
        events.append(A.SpecialTileAwarded(mover))
        special = mover
    end = min(player.position + patch.time, spec.last_space)
    bought = (player.buttons - patch.cost, player.income + patch.income, quilt,
              player.empty - patch.area)
    return _move(state, mover, player, end, events, circle, blue, special, bought=bought)


def _place_patch(state: GameState, player: PlayerState, pid: int, mask: int | None) -> int:
    """The buyer's new quilt mask after placing ``pid`` (R1, R2); raises on a bad placement."""
    spec = state.spec
    if not state.tracked:
        if mask is not None:
            raise E.StyleError("a placement was given but quilts are untracked")
        if spec.patches[pid].area > player.empty:
            raise E.NoRoomError(f"patch {pid} covers {spec.patches[pid].area} squares, "
                                f"only {player.empty} are empty")
        return 0
    if mask is None:
        raise E.StyleError("quilts are tracked: a purchase must say where the patch goes")
    if mask >> spec.quilt_size:
        raise E.OffQuiltError(f"patch {pid} would lie outside the {spec.rows}x{spec.cols} quilt")
    if mask not in placement_masks(spec, pid):
        raise E.WrongShapeError(f"those squares are not a rotation or mirror image of patch {pid}")
    if mask & player.quilt:
        raise E.OverlapError(f"patch {pid} would overlap patches already on the quilt")
    return player.quilt | mask


def _move(state: GameState, mover: int, player: PlayerState, end: int, events: list,
          circle=None, blue=None, special=None, earned: int = 0, bought=None) -> GameState:
    """Move ``mover``'s token to ``end``; pay income (R7, R8), win leather (R9), set top (R4).

    ``circle``, ``blue`` and ``special`` replace the state's when a purchase changed them;
    ``earned`` buttons (action A) are added with the income; ``bought`` is the
    buyer's (buttons, income, quilt, empty) after paying and placing (action B).
    """
    spec = state.spec
    start = player.position
    events.append(A.TokenMoved(mover, start, end))
    if bought is None:
        buttons, income, quilt, empty = player.buttons + earned, player.income, player.quilt, player.empty
    else:
        buttons, income, quilt, empty = bought
    if income:
        spaces = spec.income_spaces
        for space in spaces[bisect_right(spaces, start):bisect_right(spaces, end)]:
            events.append(A.IncomePaid(mover, space, income))
            buttons += income
    leather, owed = state.leather, state.owed
    won = [s for s in leather if start < s <= end] if leather and leather[0] <= end else None
    if won:
        events.extend(A.LeatherWon(mover, s) for s in won)
        leather = tuple(s for s in leather if s not in won)
        owed = owed + (mover,) * len(won)
    player = PlayerState(end, buttons, income, quilt, empty)
    players = (player, state.players[1]) if mover == 0 else (state.players[0], player)
    other = state.players[1 - mover].position
    top = mover if end == other else state.top
    finisher = state.finisher
    if finisher is None and end == spec.last_space:
        finisher = mover
    if circle is None:
        circle, blue, special = state.circle, state.blue, state.special
    return GameState(spec, players, top, circle, blue, leather, owed, special, finisher,
                     state.tracked, state.free)


def _with_player(state: GameState, index: int, player: PlayerState, **changes) -> GameState:
    players = (player, state.players[1]) if index == 0 else (state.players[0], player)
    return state._replace(players=players, **changes)


def _leather(state: GameState, action, events: list) -> tuple[GameState, tuple]:
    mover = state.owed[0]
    player = state.players[mover]
    if type(action) is A.DiscardLeather:
        if player.empty and state.spec.bonus_square:
            raise E.DiscardNotAllowedError(
                f"player {mover}'s quilt still has {player.empty} empty squares")
        events.append(A.LeatherDiscarded(mover))
        state = state._replace(owed=state.owed[1:])
    else:
        state = _place_leather(state, mover, player, action.square, events)
    if state.over:
        events.append(A.GameEnded(winner_of(state)))
    return state, tuple(events)


def _place_leather(state: GameState, mover: int, player: PlayerState, square, events) -> GameState:
    spec = state.spec
    if player.empty == 0:
        raise E.PlacementError(f"player {mover}'s quilt is full: set the leather patch aside (R10)")
    if not state.tracked:
        if square is not None:
            raise E.StyleError("a square was given but quilts are untracked")
        quilt = 0
    elif square is None:
        raise E.StyleError("quilts are tracked: the leather patch needs a square")
    elif not 0 <= square < spec.quilt_size:
        raise E.OffQuiltError(f"square {square} is outside the {spec.rows}x{spec.cols} quilt")
    elif player.quilt >> square & 1:
        raise E.OverlapError(f"square {divmod(square, spec.cols)} is already covered")
    else:
        quilt = player.quilt | 1 << square
    events.append(A.LeatherPlaced(mover, square))
    player = player._replace(quilt=quilt, empty=player.empty - 1)
    state = _with_player(state, mover, player, owed=state.owed[1:])
    if state.tracked:
        state = _check_special(state, mover, quilt, events)
    return state


def _auto_leather(state: GameState, events: list) -> GameState:
    """Untracked quilts: owed leather patches count as placed (set aside on a full quilt)."""
    while state.owed:
        mover = state.owed[0]
        player = state.players[mover]
        if player.empty:
            state = _place_leather(state, mover, player, None, events)
        else:
            events.append(A.LeatherDiscarded(mover))
            state = state._replace(owed=state.owed[1:])
    return state


def settle_leather(state: GameState) -> tuple[GameState, tuple[A.Event, ...]]:
    """Untracked quilts: count every owed leather patch as placed (R9), or set
    aside on a full quilt (R10). Used when a record omits leather moves."""
    events: list[A.Event] = []
    state = _auto_leather(state, events)
    if state.over:
        events.append(A.GameEnded(winner_of(state)))
    return state, tuple(events)


def _has_special(spec, quilt: int) -> bool:
    return bool(spec.bonus_square) and has_square(quilt, spec.bonus_square, spec.rows, spec.cols)


def _check_special(state: GameState, mover: int, quilt: int, events: list) -> GameState:
    if state.special is None and _has_special(state.spec, quilt):
        events.append(A.SpecialTileAwarded(mover))
        return state._replace(special=mover)
    return state


def _claim_special(state: GameState, action: A.ClaimSpecialTile) -> tuple[GameState, tuple]:
    spec = state.spec
    if not spec.bonus_square:
        raise E.SpecialTileError(f"{spec.game} has no special tile")
    if state.tracked:
        raise E.StyleError("quilts are tracked: the special tile is awarded automatically")
    if action.player not in (0, 1):
        raise E.SpecialTileError(f"player must be 0 or 1, got {action.player!r}")
    events: list[A.Event] = []
    state = _auto_leather(state, events)
    if state.special is not None:
        return state, tuple(events)
    covered = spec.quilt_size - state.players[action.player].empty
    if covered < spec.bonus_square ** 2:
        raise E.SpecialTileError(f"player {action.player} has only {covered} covered squares, "
                                 f"a {spec.bonus_square}x{spec.bonus_square} square needs "
                                 f"{spec.bonus_square ** 2}")
    events.append(A.SpecialTileAwarded(action.player))
    return state._replace(special=action.player), tuple(events)


def score(state: GameState, player: int) -> int:
    """Buttons + special tile - penalty x empty squares, as it stands (R13); may be negative."""
    spec = state.spec
    p = state.players[player]
    bonus = spec.bonus_points if state.special == player else 0
    return p.buttons + bonus - spec.empty_penalty * p.empty


def winner_of(state: GameState) -> int:
    """The higher score; on a tie the player who reached the last space first (R13, R14)."""
    a, b = score(state, 0), score(state, 1)
    if a != b:
        return 0 if a > b else 1
    return state.finisher if state.finisher is not None else 0
