"""From a game record as it stands to the club's state and events (pure).

The box offers its game as a record of the moves so far (the same
``patchwork-game-record/1`` object it saves at the end). Replaying it with the
rules engine gives, after each move, who made it and the scores; comparing its
moves with the moves already sent gives the new events: ``turn`` for each new
move, ``undo`` when the table took moves back, ``end`` once the game is over.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..rules import GameRecord, replay, start_state, steps, tally

COLOURS = ("green", "yellow")


@dataclass(frozen=True)
class Offer:
    """What the box shows now: ``game_id`` (text), ``record`` (a parsed
    :class:`GameRecord` with the moves so far), ``ts`` (seconds since 1970 when the
    box accepted the last move), ``colours`` (the two token colours, first player first)."""

    game_id: str
    record: GameRecord
    ts: float
    colours: tuple[str, str] = COLOURS


def state_of(offer: Offer) -> dict:
    """The club ``state`` of ``offer`` (fields as in :func:`.topics.parse_state`).

    Raises the engine's ``RecordError`` if the record does not replay."""
    final, result = replay(offer.record)
    players = []
    for i, p in enumerate(final.players):
        players.append({"name": offer.record.players[i], "colour": offer.colours[i],
                        "position": p.position, "buttons": p.buttons, "income": p.income,
                        "empty": p.empty, "score": result.players[i].score,
                        "bonus": final.special == i})
    return {"game_id": offer.game_id, "turn": len(offer.record.moves), "game": offer.record.game,
            "over": final.over, "to_move": None if final.over else final.to_move,
            "winner": result.winner, "players": players, "ts": offer.ts}


def _common(a: list, b: list) -> int:
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


def new_events(offer: Offer, seq: int, sent: list, ended: bool) -> list[dict]:
    """The events to send for ``offer`` after ``seq`` events covering the moves
    ``sent`` (and the end, if ``ended``). Each event gets the next ``seq``.

    Returns ``[]`` when nothing changed. Raises ``RecordError`` if the record does
    not replay."""
    moves = list(offer.record.moves)
    keep = _common(sent, moves)
    events: list[dict] = []
    base = {"game_id": offer.game_id, "ts": offer.ts}
    if keep < len(sent):
        state = start_state(offer.record)
        for step in steps(offer.record):
            if step.index >= keep:
                break
            state = step.state
        events.append({**base, "kind": "undo", "turn": keep, "player": None,
                       "scores": tally(state).scores})
    if keep < len(moves):
        for step in steps(offer.record):
            if step.index >= keep:
                events.append({**base, "kind": "turn", "turn": step.index + 1,
                               "player": step.player if step.player >= 0 else None,
                               "move": moves[step.index], "scores": tally(step.state).scores})
    final, result = replay(offer.record)
    if final.over and (events or not ended):
        events.append({**base, "kind": "end", "turn": len(moves), "player": None,
                           "scores": result.scores, "winner": result.winner})
    for i, event in enumerate(events, seq + 1):
        event["seq"] = i
    return events
