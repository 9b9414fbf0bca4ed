"""Engine actions as the table sees them: where each ends and what to tell the players."""
from __future__ import annotations

from ..rules import (ADVANCE, DISCARD, Advance, Buy, ButtonsEarned, GameState, IncomePaid,
                     LeatherDiscarded, LeatherPlaced, LeatherWon, PatchBought, PlaceLeather,
                     SpecialTileAwarded, TokenMoved, apply, legal_actions)

MAX_STOPS = 4
"""Stops on the way that :func:`readings` considers (the latest ones); each doubles the readings."""


def target_of(state: GameState, action) -> int:
    """The space the mover's token ends on after ``action`` (R5, R6)."""
    mover = state.to_move
    last = state.spec.last_space
    if isinstance(action, Advance):
        return min(state.players[1 - mover].position + 1, last)
    return min(state.players[mover].position + state.spec.patches[action.patch].time, last)


def turn_options(state: GameState) -> list:
    """What NEXT cycles through: each patch on offer (as ``Buy``), then action A."""
    return [Buy(pid) for pid in state.offer] + [ADVANCE]


def legal_set(state: GameState) -> set:
    """The legal turn actions of the player to move (untracked quilts)."""
    return set(legal_actions(state))


def candidates_at(state: GameState, space: int) -> list:
    """Legal actions of the player to move that end on ``space``, buys first."""
    found = [a for a in legal_actions(state) if isinstance(a, (Buy, Advance))
             and target_of(state, a) == space]
    return sorted(found, key=lambda a: isinstance(a, Advance))


def after_move(state: GameState, action) -> GameState:
    """The state after ``action`` and any leather patch it wins (placed when there is room;
    either way the tokens and the turn order come out the same)."""
    after = apply(state, action)[0]
    while after.owed:
        item = DISCARD if after.players[after.owed[0]].empty == 0 else PlaceLeather()
        after = apply(after, item)[0]
    return after


def _asks_leather(state: GameState, action) -> bool:
    """Patchwork Express: ``action`` wins a leather patch the player must decide about
    (place it or set it aside) before anyone moves on."""
    after = apply(state, action)[0]
    return bool(after.owed) and not state.spec.bonus_square \
        and after.players[after.owed[0]].empty > 0


def readings(state: GameState, stops: tuple[int, ...], target: int) -> list[tuple]:
    """Every way the player to move may have come to ``target`` (a space) by turns of
    their own, resting on some of ``stops`` (spaces, oldest first) on the way: each
    reading is a tuple of actions (Buy or Advance), the first legal in ``state``, each
    later one legal after the ones before it, each but the last leaving the same player
    to move (R4: the player behind moves again), ending on a stop in order and the
    last on ``target``. One-move readings (``candidates_at``) come first, then by
    length; empty when no turn ends on ``target`` that way. A move that asks for a
    leather decision (Express) ends a reading: nobody moves on before it is taken.
    Only the latest :data:`MAX_STOPS` stops count."""
    stops = tuple(stops)[-MAX_STOPS:]
    mover = state.to_move
    found: dict[tuple, None] = {}

    def walk(now: GameState, first: int, path: tuple) -> None:
        """Extend ``path`` (the actions so far) by every legal action from ``now`` ending
        on the next stop from index ``first`` on; a whole path ending on ``target`` is kept."""
        for at in range(first, len(stops) + 1):
            space = target if at == len(stops) else stops[at]
            for action in candidates_at(now, space):
                if at == len(stops):
                    found[path + (action,)] = None
                    continue
                if _asks_leather(now, action):
                    continue
                after = after_move(now, action)
                if not after.over and after.to_move == mover:
                    walk(after, at + 1, path + (action,))

    if mover is not None:
        walk(state, 0, ())
    return sorted(found, key=len)


def reading_steps(state: GameState, reading) -> list[tuple[GameState, object]]:
    """The (state it was made in, action) of each move of ``reading``, in order."""
    steps = []
    for action in reading:
        steps.append((state, action))
        state = after_move(state, action)
    return steps


def move_words(state: GameState, action) -> str:
    """One move of a reading as the players say it: "2nd patch at 12" (its place among
    the three on offer in ``state``, where the token ends) or "advance to 4"."""
    if isinstance(action, Buy):
        return f"{_place_word(state, action)} patch at {target_of(state, action)}"
    return f"advance to {target_of(state, action)}"


def reading_words(state: GameState, reading) -> str:
    """A whole reading in words: "2nd patch at 1, then advance to 4" (several moves) or
    "one move: advance to 4"."""
    said = [move_words(s, a) for s, a in reading_steps(state, reading)]
    return ", then ".join(said) if len(said) > 1 else f"one move: {said[0]}"


def reading_label(state: GameState, reading) -> str:
    """A reading as one short option row: "2nd then advance", "1st, 2nd, advance",
    "advance only", "3rd patch only"."""
    short = [_place_word(s, a) if isinstance(a, Buy) else "advance"
             for s, a in reading_steps(state, reading)]
    if len(short) == 1:
        return f"{short[0]}{' patch' if short[0] != 'advance' else ''} only"
    if len(short) == 2:
        return f"{short[0]} then {short[1]}"
    return ", ".join(short)


def _place_word(state: GameState, action) -> str:
    place = place_of(state, action)
    return ORDINALS[place - 1] if 0 < place <= len(ORDINALS) else f"{place}th"


def why_not(state: GameState, action) -> str:
    """A short reason why ``action`` is not legal now ("" when it is)."""
    if action in legal_set(state):
        return ""
    if isinstance(action, Buy):
        patch = state.spec.patches[action.patch]
        player = state.players[state.to_move]
        if patch.cost > player.buttons:
            return f"costs {patch.cost}, you have {player.buttons}"
        if patch.area > player.empty:
            return f"needs {patch.area} squares, {player.empty} empty"
    return "not allowed now"


ORDINALS = ("1st", "2nd", "3rd")


def place_of(state: GameState, action) -> int:
    """Where a bought patch lies on the table: 1, 2 or 3 counting clockwise from the
    neutral token (its place in the offer, R3); 0 for action A."""
    if isinstance(action, Buy) and action.patch in state.offer:
        return state.offer.index(action.patch) + 1
    return 0


def option_label(action, state: GameState, with_target: bool = False) -> str:
    """What a "Which move?" option says: the patch's place from the neutral token and its
    price ("2nd patch, cost 3"), or "advance"; ``with_target`` adds the space ("... to 42")."""
    if isinstance(action, Buy):
        label = f"{_place_word(state, action)} patch, cost {state.spec.patches[action.patch].cost}"
    else:
        label = "advance"
    return f"{label} to {target_of(state, action)}" if with_target else label


def notices(events, colours: tuple[str, str]) -> str:
    """What the players must do after an accepted turn, from its events, each
    instruction led by the name (or colour) of the player it is for: "Green: pay 10, take leather,
    +4 income" (pay 10 buttons, take the leather patch, take 4 buttons of
    income), "Yellow: take 3 buttons", "Green: take special tile". "" when
    there is nothing to do (placing or setting aside a leather patch already
    taken). ``colours``: how to call player 0 and 1 (names, or colours).
    """
    todo: dict[int, list[str]] = {}
    income: dict[int, int] = {}
    leather: dict[int, int] = {}
    aside: set[int] = set()             # a leather patch won on a full quilt is set aside
    for e in events:
        if isinstance(e, ButtonsEarned) and e.buttons:
            todo.setdefault(e.player, []).append(f"take {_buttons(e.buttons)}")
        elif isinstance(e, PatchBought):
            todo.setdefault(e.player, []).append(f"pay {e.cost}" if e.cost else "take the patch")
        elif isinstance(e, IncomePaid) and e.buttons:
            todo.setdefault(e.player, [])
            income[e.player] = income.get(e.player, 0) + e.buttons
        elif isinstance(e, LeatherWon):
            todo.setdefault(e.player, [])
            leather[e.player] = leather.get(e.player, 0) + 1
        elif isinstance(e, LeatherDiscarded):
            aside.add(e.player)
        elif isinstance(e, SpecialTileAwarded):
            todo.setdefault(e.player, []).append("take special tile")
    out = []
    for player, parts in todo.items():
        if leather.get(player):
            count = leather[player]
            parts.append("take leather" if count == 1 else f"take {count} leather")
            if player in aside:
                parts[-1] += " (set aside)"
        if income.get(player):
            parts.append(f"+{income[player]} income")
        if parts:
            out.append(f"{_cap(colours[player])}: {', '.join(parts)}")
    return "; ".join(out)


def undo_notice(events, before: GameState, colours: tuple[str, str], player: int) -> str:
    """What ``player`` must give back when a turn whose ``events`` started from
    ``before`` is undone: "Green: return 3 buttons, the patch; token back
    to 17", "Yellow: take 2 buttons back, return the patch, leather back on
    20; token back to 9". ``colours``: how to call player 0 and 1 (names, or colours)."""
    net, returns, won, lift = 0, [], [], False
    for e in events:
        if isinstance(e, (ButtonsEarned, IncomePaid)) and e.player == player:
            net += e.buttons
        elif isinstance(e, PatchBought) and e.player == player:
            net -= e.cost
            returns.append("the patch")
        elif isinstance(e, LeatherWon):
            won.append(str(e.space))
        elif isinstance(e, LeatherPlaced):
            lift = True
        elif isinstance(e, SpecialTileAwarded):
            returns.append("the special tile")
    if net > 0:
        returns.insert(0, _buttons(net))
    said = [f"take {_buttons(-net)} back"] if net < 0 else []
    if returns:
        said.append("return " + _and(returns))
    if won:
        said.append(f"leather back on {_and(won)}")
    elif lift:
        said.append("lift the leather patch off")
    moved = any(isinstance(e, TokenMoved) and e.player == player for e in events)
    steps = [", ".join(said)] if said else []
    if moved:
        steps.append(f"token back to {before.players[player].position}")
    return f"{_cap(colours[player])}: {'; '.join(steps) or 'turn undone'}"


def _cap(who: str) -> str:
    """A name as given ("McKay"), a colour with a capital ("green" -> "Green")."""
    return who[:1].upper() + who[1:]


def _and(items: list[str]) -> str:
    return ", ".join(items)


def _buttons(count: int) -> str:
    return f"{count} button{'s' if count != 1 else ''}"
