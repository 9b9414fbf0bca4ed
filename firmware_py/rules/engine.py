"""Legal actions and ``apply()``: the rules of Patchwork and Patchwork Express.

Pure functions of immutable :class:`~.state.GameState` values: no I/O, no
clock, no randomness. ``apply()`` checks every rule and raises a precise
:class:`~.errors.IllegalActionError`; the state it was given never changes.
"""
from __future__ import annotations

from . import actions as A
from . import errors as E
from .quilt import has_square
from .state import GameState, PlayerState, player_to_move
from .tables import buy_table, placement_masks, spec_tables

_new = tuple.__new__
"""``_new(Cls, fields)`` builds a state or event NamedTuple from a tuple of its
fields without the Python-level ``__new__``: every turn builds several."""


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
    mover = player_to_move(state)
    if mover is None:
        return []
    player = state.players[mover]
    offer = state.offer
    tables = spec_tables(state.spec)
    cost = tables.cost
    out: list[A.Action] = [A.ADVANCE]
    if state.tracked:
        placed, quilt = buy_table(state.spec), player.quilt
        for pid in offer:
            if cost[pid] <= player.buttons:
                out += [buy for mask, buy in placed[pid] if not mask & quilt]
    else:
        area, buy = tables.area, tables.buy
        buttons, empty = player.buttons, player.empty
        for pid in offer:
            if cost[pid] <= buttons and area[pid] <= empty:
                out.append(buy[pid])
    return out


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

    ``action`` is an :data:`~.actions.Action`: action A (R5), action B (R6),
    placing or setting aside a leather patch won (R9, R10) or, untracked, a
    7x7 claim (R11). ``events`` are in the order they happened at the table
    (buttons earned or patch bought, token moved, income paid, leather patch
    won, special tile awarded, game ended). Raises a subclass of
    :class:`~.errors.IllegalActionError` naming the rule when the action is
    illegal, TypeError for a value that is not an action; ``state`` itself is
    never changed.
    """
    kind = type(action)
    if state.owed or (kind is not A.Buy and kind is not A.Advance):
        return _apply_other(state, action, kind)
    return _turn(state, action, kind, [])


def _turn(state: GameState, action: A.Action, kind: type, events: list):
    """Action A or B by the player to move, once no leather patch is owed."""
    mover = player_to_move(state)
    if mover is None:
        raise E.GameOverError("the game is over")
    if kind is A.Buy:
        state = _buy(state, mover, action, events)
    else:
        state = _advance(state, mover, events)
    if state.finisher is not None and state.over:
        events.append(_new(A.GameEnded, (winner_of(state),)))
    return state, tuple(events)


def _apply_other(state: GameState, action: A.Action, kind: type):
    """The rarer cases of :func:`apply`: a 7x7 claim, a leather patch owed, a wrong type."""
    if kind is A.ClaimSpecialTile:
        return _claim_special(state, action)
    events: list[A.Event] = []
    leather = kind is A.PlaceLeather or kind is A.DiscardLeather
    if state.owed:
        if leather:
            return _leather(state, action, events)
        if state.tracked:
            raise E.LeatherOwedError(f"player {state.owed[0]} must first place the leather patch won")
        state = _auto_leather(state, events)
    elif leather:
        raise E.NoLeatherOwedError("no leather patch is waiting to be placed")
    if kind is not A.Buy and kind is not A.Advance:
        raise TypeError(f"not an action: {action!r}")
    return _turn(state, action, kind, events)


def _advance(state: GameState, mover: int, events: list) -> GameState:
    """Action A (R5): one button per space actually moved, capped at the last space."""
    spec, players = state.spec, state.players
    position, buttons, income, quilt, empty = players[mover]
    end = players[1 - mover].position + 1
    if end > spec.last_space:
        end = spec.last_space
    events.append(_new(A.ButtonsEarned, (mover, end - position)))
    after = (buttons + end - position, income, quilt, empty)
    return _move(state, mover, position, end, events, spec_tables(spec).crossed, after)


def _offer_index(circle: tuple[int, ...], free: bool, pid) -> int:
    """Where ``pid`` lies in ``circle``; raises unless it is on offer (R3, or free layout)."""
    try:
        index = circle.index(pid)
    except ValueError:
        index = -1
    if index < 0 or (index > 2 and not free):
        raise E.NotOnOfferError(f"patch {pid} is not on offer; the offer is {list(circle[:3])}")
    return index


def _buy(state: GameState, mover: int, action: A.Buy, events: list) -> GameState:
    """Action B (R6): pay, place, move the neutral token, then move the time token."""
    spec, players, _, circle, blue, _, _, special, _, tracked, free = state
    pid = action.patch
    index = _offer_index(circle, free, pid)
    tables = spec_tables(spec)
    cost, time, patch_income, area = tables.patch[pid]
    position, buttons, income, quilt, empty = players[mover]
    if cost > buttons:
        raise E.UnaffordableError(f"patch {pid} costs {cost} buttons, player {mover} holds {buttons}")
    if tracked or action.mask is not None or area > empty:
        quilt = _place_patch(state, players[mover], pid, action.mask)
    events.append(_new(A.PatchBought, (mover, pid, cost)))
    if free:                                        # the pool keeps its order
        circle = circle[:index] + circle[index + 1:]
    else:                                           # the neutral token moves to it (R3)
        circle = circle[index + 1:] + circle[:index]
    if blue and len(circle) <= spec.blue_enter_when_left:
        events.append(A.BluePatchesJoined(blue))
        circle, blue = circle + blue, ()
    if tracked and special is None and _has_special(spec, quilt):
        events.append(A.SpecialTileAwarded(mover))
        special = mover
    end = position + time
    if end > spec.last_space:
        end = spec.last_space
    after = (buttons - cost, income + patch_income, quilt, empty - area)
    return _move(state, mover, position, end, events, tables.crossed, after, circle, blue, special)


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


def _move(state: GameState, mover: int, start: int, end: int, events: list, crossed: tuple,
          after: tuple, circle=None, blue=None, special=None) -> GameState:
    """Move ``mover``'s token from ``start`` to ``end``: pay income (R7, R8), win
    leather (R9), put the token on top of a shared space (R4), note the finisher (R14).

    ``crossed`` is the spec's :attr:`.tables.SpecTables.crossed`; ``after``
    is the mover's (buttons, income, quilt, empty) once the action's own
    payment is done; ``circle``, ``blue`` and ``special`` replace the state's
    when a purchase changed them.
    """
    spec, players, top, old_circle, old_blue, leather, owed, old_special, finisher, tracked, free \
        = state
    buttons, income, quilt, empty = after
    events.append(_new(A.TokenMoved, (mover, start, end)))
    if income:
        for space in crossed[start][end]:
            events.append(_new(A.IncomePaid, (mover, space, income)))
            buttons += income
    if leather and leather[0] <= end:
        won = [s for s in leather if start < s <= end]
        events.extend(A.LeatherWon(mover, s) for s in won)
        leather = tuple(s for s in leather if s not in won)
        owed = owed + (mover,) * len(won)
    player = _new(PlayerState, (end, buttons, income, quilt, empty))
    other = players[1 - mover]
    players = (player, other) if mover == 0 else (other, player)
    if end == other.position:                       # the mover lands on top (R4)
        top = mover
    if finisher is None and end == spec.last_space:
        finisher = mover
    if circle is None:
        circle, blue, special = old_circle, old_blue, old_special
    return _new(GameState, (spec, players, top, circle, blue, leather, owed, special, finisher,
                            tracked, free))


def _leather_placed(state: GameState, mover: int, quilt: int) -> GameState:
    """``state`` after the first owed leather patch went onto ``mover``'s quilt (now ``quilt``)."""
    old = state.players[mover]
    player = _new(PlayerState, (old.position, old.buttons, old.income, quilt, old.empty - 1))
    players = (player, state.players[1]) if mover == 0 else (state.players[0], player)
    return _new(GameState, (state.spec, players, state.top, state.circle, state.blue,
                            state.leather, state.owed[1:], state.special, state.finisher,
                            state.tracked, state.free))


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
        events.append(_new(A.GameEnded, (winner_of(state),)))
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
    events.append(_new(A.LeatherPlaced, (mover, square)))
    state = _leather_placed(state, mover, quilt)
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
