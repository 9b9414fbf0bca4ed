"""Dates that cannot lie: a Pi without a clock battery jumps from 1970 to today mid-game,
NTP steps a clock back, a power cut restarts the monotonic clock.

Durations come from the monotonic clock (every journal entry carries the play
seconds so far); a date taken before the clock was set is listed in
``meta.clock_unset`` and shown as "clock not set"; ``ended`` is never earlier
than ``started``.
"""
from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

from firmware_py.cli import main
from firmware_py.rules import parse_record
from firmware_py.store import History
from firmware_py.store.dates import CLOCK_FLOOR, reconcile

from test_faults_rig import EXPRESS_RECORD, StepClock, TableDriver, fast_config
from firmware_py.hw.backends import Parts
from firmware_py.service.loop import Service

CET = timezone(timedelta(hours=1))
BOOT = datetime(1970, 1, 1, 0, 0, 30, tzinfo=timezone.utc)      # a Pi without a clock battery
TODAY = datetime(2026, 12, 2, 19, 0, tzinfo=CET)


class Wall:
    """The wall clock of a box: ``base`` plus the monotonic seconds since ``since``, until
    :meth:`set_to` sets it (as NTP does) to another date."""

    def __init__(self, clock: StepClock, base: datetime):
        self.clock, self.base, self.since = clock, base, clock()

    def __call__(self) -> datetime:
        return self.base + timedelta(seconds=self.clock() - self.since)

    def set_to(self, when: datetime) -> None:
        self.base, self.since = when, self.clock()


def play(folder: Path, wall_at, clock: StepClock, *, stop_after: int | None = None,
         on_turn=None):
    """Play the Express record on a service whose wall clock is ``wall_at(clock)``; call
    ``on_turn(groups)`` after each accepted turn; stop after ``stop_after`` turns."""
    wall = wall_at(clock)
    service = Service(fast_config(), Parts(), folder, clock=clock, wall=wall,
                      deal=lambda game: (EXPRESS_RECORD.circle, EXPRESS_RECORD.blue or ())).start()
    try:
        driver = TableDriver(service, clock, EXPRESS_RECORD,
                             on_progress=lambda v: on_turn and on_turn(v.groups, wall))
        stop = (lambda v: v.groups >= stop_after) if stop_after is not None else None
        return driver.play(stop_when=stop), wall
    finally:
        service.stop()


def saved_meta(view) -> dict:
    return parse_record(Path(view.saved_to).read_text()).meta


def test_a_clock_set_mid_game_gives_the_play_time_and_a_true_start(tmp_path):
    """1970 at the start, NTP sets the clock after turn 3: the record's duration is the
    play time (not 56.9 years) and its start is the true one (the end minus it)."""
    clock = StepClock()
    start = clock()

    def on_turn(groups, wall):
        if groups == 3:
            wall.set_to(TODAY)
    final, wall = play(tmp_path, lambda c: Wall(c, BOOT), clock, on_turn=on_turn)
    meta = saved_meta(final)
    played = clock() - start
    assert 0 < meta["duration_s"] <= played + 1
    ended = datetime.fromisoformat(meta["ended"])
    assert datetime.fromisoformat(meta["started"]) == ended - timedelta(seconds=meta["duration_s"])
    assert datetime.fromisoformat(meta["started"]) >= CLOCK_FLOOR
    assert "clock_unset" not in meta


def test_an_ntp_step_back_never_ends_a_game_before_it_started(tmp_path):
    clock = StepClock()

    def on_turn(groups, wall):
        if groups == 4:
            wall.set_to(wall() - timedelta(hours=1))          # the clock was an hour ahead
    final, _ = play(tmp_path, lambda c: Wall(c, TODAY), clock, on_turn=on_turn)
    meta = saved_meta(final)
    started, ended = (datetime.fromisoformat(meta[k]) for k in ("started", "ended"))
    assert ended >= started
    assert ended - started == timedelta(seconds=meta["duration_s"])
    assert meta["duration_s"] < 3600


def test_a_power_cut_counts_the_play_time_of_both_runs_and_marks_an_unset_start(tmp_path):
    """Started at 1970, power cut after turn 4 (the monotonic clock starts again at 0),
    resumed with the clock set: the play time of both runs, the start marked as taken
    before the clock was set, and `history` says so."""
    first = StepClock()
    play(tmp_path, lambda c: Wall(c, BOOT), first, stop_after=4)
    journal = [json.loads(line)["body"] for line in
               (tmp_path / "journal.jsonl").read_text().splitlines()]
    before_cut = max(body["t"] for body in journal)
    assert before_cut > 0 and all("t" in body for body in journal)
    second = StepClock(start=3.0)                             # a new boot
    start = second()
    final, _ = play(tmp_path, lambda c: Wall(c, TODAY), second)
    meta = saved_meta(final)
    assert before_cut < meta["duration_s"] <= before_cut + (second() - start) + 1
    assert meta["clock_unset"] == ["started"]
    assert datetime.fromisoformat(meta["ended"]) >= TODAY
    row = History(tmp_path)
    with row.index() as index:
        [game] = index.db.execute("SELECT * FROM game_rows").fetchall()
    assert game["duration_s"] == meta["duration_s"]


def test_history_says_clock_not_set_and_stats_ignore_a_lying_duration(tmp_path, capsys):
    """Records written before the play clock: one from 1970 to today with its 56.9-year
    duration, one with both dates from 1970. Neither wrecks the average; both say so."""
    record = EXPRESS_RECORD
    history = History(tmp_path)
    lying = {"started": "1970-01-01T00:00:30+00:00", "ended": "2026-12-02T19:30:00+01:00",
             "duration_s": 1796491770}
    lying["duration_s"] = round((datetime.fromisoformat(lying["ended"])
                                 - datetime.fromisoformat(lying["started"])).total_seconds())
    history.file("g-lying", record.__class__(**{**record.__dict__, "meta": lying}))
    unset = {"started": "1970-01-01T00:00:30+00:00", "ended": "1970-01-01T00:31:00+00:00",
             "duration_s": 1830, "clock_unset": ["started", "ended"]}
    history.file("g-unset", record.__class__(**{**record.__dict__, "meta": unset}))
    good = {"started": "2026-12-01T19:00:00+01:00", "ended": "2026-12-01T19:30:00+01:00",
            "duration_s": 1800}
    history.file("g-good", record.__class__(**{**record.__dict__, "meta": good}))
    assert main(["stats", "--json", "--store", str(tmp_path)]) == 0
    [figures] = json.loads(capsys.readouterr().out)["games"],
    assert figures[0]["avg_duration_s"] == (1830 + 1800) / 2
    assert main(["history", "--store", str(tmp_path)]) == 0
    lines = {line.split()[0]: line for line in capsys.readouterr().out.splitlines()}
    assert "clock not set" in lines["g-unset"] and "31 min" in lines["g-unset"]   # 1830 s, rounded to the nearest minute
    assert "2026-12-02 19:30" in lines["g-lying"] and " ?" in lines["g-lying"]
    assert "2026-12-01 19:00" in lines["g-good"]   # the start, as everywhere
    assert main(["history", "show", "g-unset", "--store", str(tmp_path)]) == 0
    assert "started clock not set" in capsys.readouterr().out


def test_reconcile_rules():
    one = reconcile("1970-01-01T00:00:30+00:00", "2026-12-02T19:30:00+01:00", 1800.4, True)
    assert one == {"started": "2026-12-02T19:00:00+01:00", "ended": "2026-12-02T19:30:00+01:00",
                   "duration_s": 1800}
    cut = reconcile("1970-01-01T00:00:30+00:00", "2026-12-02T19:30:00+01:00", 1800, False)
    assert cut["started"].startswith("1970") and cut["clock_unset"] == ["started"]
    back = reconcile("2026-12-02T20:00:00+01:00", "2026-12-02T19:30:00+01:00", 600, False)
    assert back["started"] == "2026-12-02T19:20:00+01:00"
    slew = reconcile("2026-12-02T19:00:01+01:00", "2026-12-02T19:30:00+01:00", 1800, True)
    assert slew["started"] == "2026-12-02T19:00:01+01:00"      # within the slack: kept
    assert reconcile(None, None, None, True) == {}
