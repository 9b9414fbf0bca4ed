"""A whole record reviewed: a win-chance curve and the costliest decisions per player.

:func:`analyse` replays a record with the checked engine (``rules.steps``),
and at each decision (an ``advance`` or a ``buy``) asks :func:`.evaluate.judge`
what the box would have played and what the difference was worth. Leather
placements, 7x7 claims (``bonus``) and button corrections (``adjust``) are no
decisions: they are applied where they stand. The result is plain JSON
(:data:`VERSION` names its shape), the same for the page, the command line and
the export.
"""
from __future__ import annotations

from typing import Callable

from ..ai.search import Context, settle
from ..rules import GameRecord, fast, move_to_action, start_state, steps
from ..store.analyses import record_digest
from . import describe
from .evaluate import Price, Settings, judge, price

VERSION = 1
"""Shape of the analysis JSON (a cached analysis of another version is made again)."""

__all__ = ["VERSION", "Settings", "analyse", "costliest", "record_digest"]


def decisions(record: GameRecord) -> int:
    """How many decisions (``advance`` and ``buy`` moves) the record holds."""
    return sum(1 for m in record.moves if m == "advance" or (isinstance(m, dict) and "buy" in m))


def analyse(record: GameRecord, settings: Settings = Settings(),
            progress: Callable[[int, int], None] | None = None) -> dict:
    """Review ``record`` (a :class:`~firmware_py.rules.GameRecord` that replays).

    Returns a JSON-ready dict: ``version``, ``digest`` (:func:`record_digest`),
    ``settings``, ``notes`` (sentences about what is and is not judged),
    ``points`` (the start, then one per decision: ``frame`` = replay frame 0..moves,
    ``chance`` = player 0's estimated win chance 0..1 after it, ``pm`` its 95%
    half-width) and ``decisions`` (one per decision, see :func:`_decision`).
    ``progress(done, total)`` is called after each decision. Raises
    :class:`~firmware_py.rules.RecordError` when the record does not replay.
    """
    state = start_state(record)
    ctx = Context(state.spec, record.free)
    total, done = decisions(record), 0
    first = price(settle(fast.flat(state), state.spec), ctx, settings.seed, settings.playouts)
    points = [_point(0, first)]
    out: list[dict] = []
    turns = [0, 0]
    for step in steps(record):
        move = record.moves[step.index]
        if move == "advance" or (isinstance(move, dict) and "buy" in move):
            before = fast.flat(state)
            played = _played(before, move, step, state)
            verdict = judge(before, played, ctx, settings, settings.seed * 7919 + step.index)
            turns[step.player] += 1
            out.append(_decision(record, state, step, verdict, turns[step.player], ctx))
            points.append(_point(step.index + 1, verdict.after))
            done += 1
            if progress is not None:
                progress(done, total)
        state = step.state
    return {"version": VERSION, "digest": record_digest(record),
            "settings": {"iterations": settings.iterations, "playouts": settings.playouts,
                         "seed": settings.seed},
            "notes": describe.notes(record),
            "points": points, "decisions": out}


def _played(before: fast.Flat, move, step, state) -> tuple:
    """The played move as the searcher names its choices: ``(-1, None)`` or ``(k, mask)``."""
    if move == "advance":
        return (-1, None)
    k = before[fast.CIRCLE].index(move["buy"])
    mask = move_to_action(state.spec, move, step.index, True).mask if state.tracked else None
    return (k, mask)


def _point(frame: int, p: Price) -> dict:
    return {"frame": frame, "chance": round(p.chance, 4), "pm": round(p.pm, 4),
            "mean": round(p.mean, 3), "sd": round(p.sd, 3)}


def _decision(record, state, step, verdict, turn: int, ctx) -> dict:
    """One decision as JSON: ``move`` (record index), ``frame`` (replay frame after it),
    ``player`` (0/1), ``turn`` (that player's n-th decision), ``played``/``best`` (texts),
    ``cost`` and ``pm`` (the mover's win chance lost and its 95% half-width, 0..1),
    ``points`` (expected margin lost, points), ``forced``, ``text`` (one sentence), and
    ``played_move``/``best_move`` as the searcher names them (``[k, mask or None]``, k -1
    for action A)."""
    circle = state.circle
    played = describe.move(ctx.spec, circle, verdict.played, record.free)
    best = describe.move(ctx.spec, circle, verdict.best, record.free)
    row = {"move": step.index, "frame": step.index + 1, "player": step.player, "turn": turn,
           "played": played, "best": best, "cost": round(verdict.cost, 4),
           "pm": round(verdict.pm, 4), "points": round(verdict.points, 2),
           "forced": verdict.forced, "played_move": list(verdict.played),
           "best_move": list(verdict.best)}
    row["text"] = describe.sentence(row)
    return row


def costliest(analysis: dict, player: int, n: int = 3) -> list[dict]:
    """The ``n`` decisions of ``player`` (0/1) that cost the most win chance, costliest
    first; only decisions that cost something (cost above 0) are listed."""
    return describe.costliest(analysis, player, n)
