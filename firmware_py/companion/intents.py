"""Engine actions as the table sees them: where each ends and what to tell the players."""
from __future__ import annotations

from ..rules import (ADVANCE, Advance, Buy, ButtonsEarned, GameState, IncomePaid, LeatherDiscarded,
                     LeatherWon, PatchBought, SpecialTileAwarded, legal_actions)


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
        place = place_of(state, action)
        where = ORDINALS[place - 1] if 0 < place <= len(ORDINALS) else f"{place}th"
        label = f"{where} patch, cost {state.spec.patches[action.patch].cost}"
    else:
        label = "advance"
    return f"{label} to {target_of(state, action)}" if with_target else label


def notices(events, colours: tuple[str, str]) -> str:
    """What the players must do after an accepted turn, from its events.

    E.g. "take 4 buttons", "pay 3 buttons", "income: take 7", "take the
    leather patch", "set the leather patch aside", "special tile: green".
    """
    parts = []
    income = 0
    for e in events:
        if isinstance(e, ButtonsEarned) and e.buttons:
            parts.append(f"take {e.buttons} button{'s' if e.buttons > 1 else ''}")
        elif isinstance(e, PatchBought) and e.cost:
            parts.append(f"pay {e.cost} button{'s' if e.cost > 1 else ''}")
        elif isinstance(e, IncomePaid):
            income += e.buttons
        elif isinstance(e, LeatherWon):
            parts.append("take the leather patch")
        elif isinstance(e, LeatherDiscarded):
            parts.append("leather patch set aside")
        elif isinstance(e, SpecialTileAwarded):
            parts.append(f"special tile: {colours[e.player]}")
    if income:
        parts.append(f"income: take {income}")
    return ", ".join(parts)
