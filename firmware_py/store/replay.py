"""``patchwork-companion replay FILE [--json] [--trace]``: check a game record.

Exit status: 0 valid (and agrees with its ``result``), 1 valid but the result
disagrees with the tally, 2 malformed or an illegal move (message on stderr
naming the move's index and the rule).
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

from ..rules import GameRecord, RecordError, Tally, parse_record, replay
from .text import shown


def tally_json(record: GameRecord, state, result: Tally) -> dict:
    """The ``replay --json`` object for a final ``state`` of ``record``."""
    players = []
    for i, name in enumerate(record.players):
        p = state.players[i]
        players.append({"name": name, "position": p.position, "buttons": p.buttons,
                        "income": p.income, "empty": p.empty, "bonus": state.special == i})
    return {"over": result.over, "scores": result.scores, "winner": result.winner,
            "players": players}


def trace_json(step) -> dict:
    """The ``--trace`` object of one replayed move (the state after it)."""
    s = step.state
    return {"move": step.index, "player": step.player,
            "positions": [p.position for p in s.players], "buttons": [p.buttons for p in s.players],
            "income": [p.income for p in s.players], "empty": [p.empty for p in s.players],
            "bonus": s.special, "circle": list(s.circle)}


def tally_text(record: GameRecord, state, result: Tally) -> str:
    """A human-readable tally: one line per player, then the outcome (names through
    :func:`~firmware_py.store.text.shown`: no control character reaches the terminal)."""
    lines = []
    for i, name in enumerate(record.players):
        row = result.players[i]
        special = f" + {row.special} special tile" if row.special else ""
        lines.append(f"{shown(name)}: {row.buttons} buttons{special} - {row.penalty} "
                     f"({row.empty} empty x {state.spec.empty_penalty}) = {row.score}")
    if not result.over:
        lines.append("game not over: scores as they stand")
    else:
        from .wording import result_text
        lines.append(result_text([shown(n) for n in record.players], result.scores,
                                 result.winner, result.tie_break))
    return "\n".join(lines)


def load_record_file(path: str) -> GameRecord:
    """Read and validate a record file; raises :class:`RecordError` (also for I/O errors)."""
    try:
        text = Path(path).read_text("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise RecordError(f"cannot read {path}: {exc}") from exc
    return parse_record(text)


def run_replay(path: str, as_json: bool = False, trace: bool = False, out=None, err=None) -> int:
    """Replay the record at ``path``, print as the contract says, return the exit status."""
    out = out or sys.stdout
    err = err or sys.stderr
    def emit(step) -> None:
        """Print one --trace object for a replayed move."""
        print(json.dumps(trace_json(step)), file=out)

    try:
        record = load_record_file(path)
        state, result = replay(record, emit if trace else None)
    except RecordError as exc:
        rule = "" if exc.rule in str(exc) else f" [{exc.rule}]"
        print(f"{path}: {exc}{rule}", file=err)
        return 2
    if as_json:
        print(json.dumps(tally_json(record, state, result)), file=out)
    else:
        print(tally_text(record, state, result), file=out)
    expected = record.result
    if expected is not None and (expected["scores"] != result.scores
                                 or expected["winner"] != result.winner):
        print(f"{path}: the record's result {expected} disagrees with the tally "
              f"{{'scores': {result.scores}, 'winner': {result.winner}}}", file=err)
        return 1
    return 0
