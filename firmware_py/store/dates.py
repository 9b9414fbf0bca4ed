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
    duration = round(play_s) if play_s is not None and play_s >= 0 else None
    if duration is None and clock_set(started) and clock_set(ended) and end >= start:
        duration = round((end - start).total_seconds())
    if duration is not None and clock_set(ended):
        earliest_end = end - timedelta(seconds=duration)
        if not clock_set(started) and one_run or clock_set(started) and (
                start > earliest_end + timedelta(seconds=SLACK_S)
                or one_run and start < earliest_end - timedelta(seconds=SLACK_S)):
            start = earliest_end
    elif duration is not None and one_run and clock_set(started):
        end = start + timedelta(seconds=duration)      # the clock went back below the floor
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
