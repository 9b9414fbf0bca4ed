"""Dates and durations of games that a clock without a battery cannot falsify.

A Raspberry Pi has no real-time clock: it boots at 1970 (or at its last saved
time) and jumps to the true date once NTP answers, possibly in the middle of a
game; NTP may also step a clock back. So:

- A game's duration is its *play time* by the monotonic clock, never the
  difference of two dates (the game service stamps each journal entry with the
  play seconds so far; after a restart the count goes on from the last entry,
  so the time the box was off is not counted).
- A date before :data:`CLOCK_FLOOR` was taken before the clock was set: no
  game of this program was played before it. Such a date is listed in the
  record's ``meta.clock_unset`` (``meta`` may hold any key, see
  ``game-record.md``) and shown as "clock not set".
- The end of a game is dated by the clock as it is then (the latest sync);
  ``started`` is derived from it (``ended - duration_s``) when the game was
  played in one run of the service and the two disagree (the clock was set or
  stepped mid-game), and whenever ``started`` is later than that (a step back
  across a restart), so ``ended`` is never earlier than ``started``.
"""
from __future__ import annotations

from datetime import datetime, timedelta, timezone

#: dates before this one were taken before the clock was set (raise it with a release)
CLOCK_FLOOR = datetime(2025, 1, 1, tzinfo=timezone.utc)
#: started and ended may disagree with the play time by this much (slewing, rounding)
SLACK_S = 2
UNSET_TEXT = "clock not set"


def parse(text) -> datetime | None:
    """An RFC 3339 text with its UTC offset as an aware datetime; None for anything else."""
    if not isinstance(text, str):
        return None
    try:
        stamp = datetime.fromisoformat(text)
    except ValueError:
        return None
    return stamp if stamp.tzinfo is not None else None


def clock_set(text) -> bool:
    """True when ``text`` is a date at or after :data:`CLOCK_FLOOR` (taken by a set clock)."""
    stamp = parse(text)
    return stamp is not None and stamp >= CLOCK_FLOOR


def shown(text) -> str:
    """A date for a history line: "2026-12-01 19:04", "clock not set" for a date before
    :data:`CLOCK_FLOOR`, "" when there is none."""
    if not text:
        return ""
    if parse(text) is not None and not clock_set(text):
        return UNSET_TEXT
    return str(text)[:16].replace("T", " ")


def _text(stamp: datetime) -> str:
    return stamp.isoformat(timespec="seconds")


def reconcile(started, ended, play_s: float | None, one_run: bool) -> dict:
    """The ``meta`` keys ``started``, ``ended``, ``duration_s`` and ``clock_unset`` of a game
    (only those known), from its dates as the wall clock gave them (RFC 3339 texts or None),
    its play time ``play_s`` in seconds by the monotonic clock (None: unknown, then the
    dates' difference when both were taken by a set clock) and whether it was played in
    ``one_run`` of the service (no restart between its start and its end).

    Rules: module docstring. ``clock_unset`` lists the keys whose date was taken before
    the clock was set and could not be derived from the other."""
    start, end = parse(started), parse(ended)
    duration = _duration(started, ended, play_s)
    if duration is not None:
        start, end = _derive(started, ended, duration, one_run)
    return _meta(start, end, duration)


def _duration(started, ended, play_s: float | None) -> int | None:
    """Whole seconds of play: ``play_s`` when known (>= 0), else the difference of two
    dates taken by a set clock when ``ended`` is not before ``started``, else None."""
    if play_s is not None and play_s >= 0:
        return round(play_s)
    if clock_set(started) and clock_set(ended) and parse(ended) >= parse(started):
        return round((parse(ended) - parse(started)).total_seconds())
    return None


def _derive(started, ended, duration: int, one_run: bool) -> tuple:
    """``(start, end)`` as aware datetimes (or None) once a known ``duration`` (seconds)
    has corrected the one that the clock falsified (rules: module docstring)."""
    start, end = parse(started), parse(ended)
    if clock_set(ended):
        earliest_end = end - timedelta(seconds=duration)
        if _start_falsified(started, earliest_end, one_run):
            start = earliest_end
    elif one_run and clock_set(started):
        end = start + timedelta(seconds=duration)      # the clock went back below the floor
    return start, end


def _start_falsified(started, earliest_end: datetime, one_run: bool) -> bool:
    """True when ``started`` must give way to ``earliest_end`` (``ended - duration``):
    taken before the clock was set in a game of one run, later than ``earliest_end``
    beyond :data:`SLACK_S`, or (one run) earlier than it beyond the slack."""
    if not clock_set(started):
        return one_run
    start, slack = parse(started), timedelta(seconds=SLACK_S)
    return start > earliest_end + slack or one_run and start < earliest_end - slack


def _meta(start: datetime | None, end: datetime | None, duration: int | None) -> dict:
    """The ``meta`` keys of the known values, with ``clock_unset`` naming the dates
    taken before the clock was set."""
    out: dict = {}
    if start is not None:
        out["started"] = _text(start)
    if end is not None:
        out["ended"] = _text(end)
    if duration is not None:
        out["duration_s"] = duration
    unset = [key for key in ("started", "ended") if key in out and not clock_set(out[key])]
    if unset:
        out["clock_unset"] = unset
    return out


def trusted_duration(meta: dict, limit: int) -> int | None:
    """The duration (seconds) of a record's ``meta`` for statistics, or None: its
    ``duration_s`` (an int in 0..``limit``) unless it is plainly the difference of a date
    taken before the clock was set and one after (what versions before the play clock
    wrote: a 56.9-year game); else the dates' difference when both were taken by a set
    clock and ``ended`` is not before ``started``."""
    started, ended = meta.get("started"), meta.get("ended")
    duration = meta.get("duration_s")
    if isinstance(duration, int) and not isinstance(duration, bool) and 0 <= duration <= limit:
        start, end = parse(started), parse(ended)
        lying = start is not None and end is not None and clock_set(started) != clock_set(ended) \
            and abs((end - start).total_seconds() - duration) <= SLACK_S
        return None if lying else duration
    if clock_set(started) and clock_set(ended) and parse(ended) >= parse(started):
        seconds = round((parse(ended) - parse(started)).total_seconds())
        return seconds if seconds <= limit else None
    return None
