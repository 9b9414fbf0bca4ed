"""What the table asks of the world: the effects its handlers return.

The table does no I/O, reads no clock and starts no thread. Each of its inputs
(a gesture, a verdict, the box's answer, a resume) returns a list of these plain
values; the service's loop carries them out in order, before it shows anything,
and tells the table the outcomes that matter to it (where a record was saved).
"""
from __future__ import annotations

from dataclasses import dataclass

from .opponent import BoxRequest


@dataclass(frozen=True)
class Journal:
    """Write ``body`` (a journal entry: ``{"kind": "setup" | "turn" | "plan" | "undo" |
    "end", ...}``) durably before the change it records is shown. A refusal by the disk
    changes nothing in the game: the loop says so as a warning and the keeper retries."""

    body: dict


@dataclass(frozen=True)
class SaveRecord:
    """The game ended: file ``game`` (a :class:`~.view.Game`) into the history. The loop
    tells the table where it went (``Table.record_saved``)."""

    game: object


@dataclass(frozen=True)
class AskBox:
    """Start the box's search for ``request`` (answers come back as
    ``Table.box_answer(key, move_or_error)``); a newer request ends an older search."""

    request: BoxRequest


@dataclass(frozen=True)
class ForgetReading:
    """The board as it stands now makes no move (after an undo, a cancelled question or a
    new game): the token watcher consumes its current reading."""


Effect = Journal | SaveRecord | AskBox | ForgetReading
"""Any effect a table handler returns."""
