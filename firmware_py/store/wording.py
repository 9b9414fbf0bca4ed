"""One way to say a game's time, length and result, for every reader of the
history: the command line, the LAN page and the exports.

* when: the game's start ("2026-12-01 19:04", the table's local time), the
  end only when the start is unknown;
* length: whole minutes, rounded to the nearest (30 s and more round up),
  the same number in ``history``, on the page, in CSV readers' eyes and in the
  BG Stats file's ``durationMin``;
* result: the winner first, with the winner's score first ("Bob wins 31 to
  12"); a tie broken by the last space says so.
"""
from __future__ import annotations

from .dates import clock_set, shown


def when_text(started: str | None, ended: str | None = None) -> str:
    """"YYYY-MM-DD HH:MM" of an RFC 3339 ``started``; the end instead when the start is
    unknown or was taken before the box's clock was set and the end was not; "clock not
    set" when neither date can be trusted (:func:`.dates.shown`); "" when neither is known."""
    if ended and not (started and clock_set(started)) and clock_set(ended):
        return shown(ended)
    return shown(started or ended)


def minutes(duration_s: int | float | None) -> int | None:
    """Whole minutes of ``duration_s`` seconds, rounded half up (None stays None)."""
    if duration_s is None:
        return None
    return int((duration_s + 30) // 60)


def duration_text(duration_s: int | float | None) -> str:
    """"5 min" (see :func:`minutes`), "" when unknown."""
    count = minutes(duration_s)
    return "" if count is None else f"{count} min"


def result_text(names, scores, winner: int | None, tie_break: bool = False) -> str:
    """The result line of a game: "Bob wins 31 to 12" (``winner`` 0/1 names the
    seat; its score first), "Ann 12, Bob 31 (not finished)" without a winner."""
    if winner is None:
        return ", ".join(f"{n} {s}" for n, s in zip(names, scores)) + " (not finished)"
    tie = " (tie: reached the last space first)" if tie_break else ""
    return f"{names[winner]} wins {scores[winner]} to {scores[1 - winner]}{tie}"


def scores_text(names, scores, winner: int | None) -> str:
    """Both names with their scores, the winner first: "Bob 31 : Ann 12"."""
    order = (winner, 1 - winner) if winner in (0, 1) else (0, 1)
    return " : ".join(f"{names[i]} {scores[i]}" for i in order)
