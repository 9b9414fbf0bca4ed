"""The history index never freezes the game, and an index that lost rows says so and is rebuilt.

* Another process (a ``sqlite3`` shell, a backup tool) holds the index's write
  lock while a game ends: the loop goes on serving, the row comes once the lock
  goes (the loop's longest stall is measured by ``benchmarks/store.py``).
* A deleted or emptied index is found at start and when a game is filed, and
  rebuilt from the records, said in the log.
* A rebuild racing a game being filed never drops that game's row.
"""
from __future__ import annotations

import dataclasses
import json
import logging
import subprocess
import sys
from pathlib import Path

from firmware_py.cli import main as cli_main
from firmware_py.store import History

from test_faults_rig import EXPRESS_RECORD, GOLDEN_RECORDS, StepClock, TableDriver, service_for

PATCHWORK = dataclasses.replace(GOLDEN_RECORDS[3], meta={
    "started": "2026-12-01T19:04:00+01:00", "ended": "2026-12-01T19:41:30+01:00"})

HOLDER = """
import sqlite3, sys
db = sqlite3.connect(sys.argv[1], isolation_level=None)
db.execute("BEGIN EXCLUSIVE")
print("locked", flush=True)
sys.stdin.readline()
db.execute("COMMIT")
print("released", flush=True)
"""


class LockHolder:
    """Another process holding the write lock of the SQLite database at ``path`` until
    :meth:`release`."""

    def __init__(self, path: Path):
        self.proc = subprocess.Popen([sys.executable, "-c", HOLDER, str(path)], text=True,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        assert self.proc.stdout.readline().strip() == "locked"

    def holding(self) -> bool:
        """True while the process still holds the lock (it has not been told to let go)."""
        return self.proc.poll() is None

    def release(self) -> None:
        """Let the lock go and wait for the process to end."""
        self.proc.stdin.write("\n")
        self.proc.stdin.flush()
        assert self.proc.stdout.readline().strip() == "released"
        self.proc.wait(10)


def rows(folder: Path) -> list[str]:
    with History(folder).index() as index:
        return sorted(r["id"] for r in index.games(limit=1000))


def test_the_loop_keeps_serving_while_another_process_locks_the_index(tmp_path):
    folder = tmp_path / "journal"
    History(folder).file("earlier", PATCHWORK)       # the index exists, with one game
    holder = LockHolder(folder / "history.sqlite3")
    clock = StepClock()
    service = service_for(folder, EXPRESS_RECORD, clock)
    try:
        driver = TableDriver(service, clock, EXPRESS_RECORD)
        final = driver.play()                          # the game ends: it is filed now
        assert final.mode == "end" and final.saved_to
        for _ in range(20):                            # the loop goes on serving events
            driver.press("next")
        assert holder.holding(), "the lock went before the loop was tried"
        game_id = Path(final.saved_to).stem
        assert Path(final.saved_to).is_file()          # the record (the truth) is saved
        assert rows(folder) == ["earlier"]             # its row waits for the lock
        holder.release()
        assert service.keeper.indexer.wait_idle(60)
        assert rows(folder) == sorted(["earlier", game_id])
    finally:
        if holder.holding():
            holder.release()
        service.stop()


def test_an_index_that_lost_rows_is_rebuilt_at_start_and_says_so(tmp_path, caplog):
    folder = tmp_path / "journal"
    history = History(folder)
    for i, record in enumerate([PATCHWORK, EXPRESS_RECORD, GOLDEN_RECORDS[1], GOLDEN_RECORDS[8]]):
        history.file(f"g{i}", record)
    for suffix in ("", "-wal", "-shm"):                 # the index deleted
        (folder / f"history.sqlite3{suffix}").unlink(missing_ok=True)
    History(folder).file("g3", GOLDEN_RECORDS[8])      # refiled: an index of the newest only
    assert rows(folder) == ["g3"]
    caplog.set_level(logging.WARNING)
    service = service_for(folder, EXPRESS_RECORD)
    try:
        assert service.keeper.indexer.wait_idle(60)
    finally:
        service.stop()
    assert rows(folder) == ["g0", "g1", "g2", "g3"]
    said = [r.getMessage() for r in caplog.records if "history index" in r.getMessage()]
    assert any("holds 1 of 4 saved games" in s and "rebuilt" in s and "4 games indexed" in s
               for s in said), said


def test_an_index_emptied_while_running_is_rebuilt_when_the_next_game_is_filed(tmp_path, caplog):
    folder = tmp_path / "journal"
    history = History(folder)
    for i, record in enumerate([PATCHWORK, GOLDEN_RECORDS[1]]):
        history.file(f"g{i}", record)
    clock = StepClock()
    service = service_for(folder, EXPRESS_RECORD, clock)
    caplog.set_level(logging.WARNING)
    try:
        assert service.keeper.indexer.wait_idle(60)
        with history.index() as index:                  # emptied behind the service's back
            index.delete_all()
        final = TableDriver(service, clock, EXPRESS_RECORD).play()
        assert service.keeper.indexer.wait_idle(60)
    finally:
        service.stop()
    assert rows(folder) == sorted(["g0", "g1", Path(final.saved_to).stem])
    assert any("holds 1 of 3 saved games" in r.getMessage() for r in caplog.records)


def test_a_rebuild_racing_a_game_being_filed_keeps_its_row(tmp_path, monkeypatch):
    """Another process files a game while the rebuild starts (before it takes the index's
    lock): the game is in the rebuilt index."""
    folder = tmp_path / "journal"
    History(folder).file("g0", PATCHWORK)
    other = History(folder)                             # e.g. the web page renaming players
    real_open = History._sound_index
    filed = []

    def open_then_file(self, report):
        index = real_open(self, report)
        if not filed:
            filed.append(other.file("g1", EXPRESS_RECORD))   # record, then its row (committed)
        return index
    monkeypatch.setattr(History, "_sound_index", open_then_file)
    report = History(folder).rebuild()
    assert filed and rows(folder) == ["g0", "g1"]
    assert report.games == 2


def test_the_history_command_rebuilds_nothing_when_index_and_records_agree(tmp_path):
    folder = tmp_path / "journal"
    history = History(folder)
    history.file("g0", PATCHWORK)
    assert history.disagreement() == "" and history.reconcile() == ""
    (folder / "records" / "g0.json").unlink()
    assert history.disagreement() == "1 row has no record file"
    assert "rebuilt" in history.reconcile() and rows(folder) == []
    history.file("g1", PATCHWORK)
    for suffix in ("", "-wal", "-shm"):
        (folder / f"history.sqlite3{suffix}").unlink(missing_ok=True)
    assert history.disagreement() == "the index is missing, with 1 game saved"
    assert "1 game indexed" in history.reconcile() and rows(folder) == ["g1"]
    empty = History(tmp_path / "empty")
    assert empty.reconcile() == "" and not empty.db_path.exists()   # nothing made for nothing


def test_history_and_stats_rebuild_an_index_that_lost_rows_and_say_so(tmp_path, capsys):
    from firmware_py.cli import main
    folder = tmp_path / "journal"
    history = History(folder)
    for i, record in enumerate([PATCHWORK, EXPRESS_RECORD, GOLDEN_RECORDS[1]]):
        history.file(f"g{i}", record)
    with history.index() as index:
        index.delete_all()
    history.file("g2", GOLDEN_RECORDS[1])             # an index of the newest game only
    assert main(["history", "--store", str(folder)]) == 0
    said = capsys.readouterr()
    assert len(said.out.splitlines()) == 3
    assert "the index holds 1 of 3 saved games" in said.err and "3 games indexed" in said.err
    with history.index() as index:
        index.delete_all()
    assert main(["stats", "--store", str(folder), "--json"]) == 0
    said = capsys.readouterr()
    assert "the index holds 0 of 3 saved games" in said.err
    assert sum(g["games"] for g in json.loads(said.out)["games"]) == 3


def two_games_filed(tmp_path) -> tuple[Path, History]:
    """A store (its folder and History) with two games filed."""
    folder = tmp_path / "journal"
    history = History(folder)
    for i, record in enumerate([PATCHWORK, EXPRESS_RECORD]):
        history.file(f"g{i}", record)
    return folder, history


def test_history_says_an_index_that_lost_rows_when_its_lock_forbids_the_rebuild(tmp_path, capsys):
    """Another process holds the write lock of an emptied index: ``history`` cannot rebuild
    it, and shows what the index holds, but never without saying games are missing."""
    folder, history = two_games_filed(tmp_path)
    with history.index() as index:
        index.delete_all()
    holder = LockHolder(history.db_path)
    try:
        assert cli_main(["history", "--store", str(folder)]) == 0
    finally:
        holder.release()
    said = capsys.readouterr()
    assert "the index holds 0 of 2 saved games; not rebuilt now" in said.err
    assert "history --rebuild" in said.err and "Traceback" not in said.err


def test_history_rebuilds_a_deleted_index_as_stats_does(tmp_path, capsys):
    """A deleted index with games saved is not "no history yet (no finished game)"."""
    folder, history = two_games_filed(tmp_path)
    for suffix in ("", "-wal", "-shm"):
        (folder / f"history.sqlite3{suffix}").unlink(missing_ok=True)
    assert cli_main(["history", "--store", str(folder)]) == 0
    said = capsys.readouterr()
    assert len(said.out.splitlines()) == 2
    assert "the index is missing, with 2 games saved" in said.err and "no finished" not in said.err


def test_export_rebuilds_an_index_that_lost_rows_and_says_so(tmp_path, capsys):
    """An export is what is kept: it never leaves out games an emptied index lost."""
    folder, history = two_games_filed(tmp_path)
    with history.index() as index:
        index.delete_all()
    assert cli_main(["export", "--format", "csv", "--store", str(folder)]) == 0
    said = capsys.readouterr()
    assert len(said.out.splitlines()) == 3                 # the header and both games
    assert "the index holds 0 of 2 saved games" in said.err


def test_a_name_correction_while_the_index_is_locked_changes_nothing(tmp_path):
    """The web page corrects a game's names while another process holds the index: the
    record was rewritten and its row kept the old names, which no check finds (the ids
    agree). Now the lock comes first: refused, record and row still agree; and once the
    lock goes the correction reaches both."""
    import sqlite3

    import pytest

    from firmware_py.rules import parse_record
    from firmware_py.web.library import Library
    folder, history = two_games_filed(tmp_path)
    before = (folder / "records" / "g1.json").read_bytes()
    holder = LockHolder(history.db_path)
    try:
        with pytest.raises(sqlite3.OperationalError):
            Library(folder).rename("g1", ("Ann", "Ben"))
    finally:
        holder.release()
    assert (folder / "records" / "g1.json").read_bytes() == before
    Library(folder).rename("g1", ("Ann", "Ben"))
    assert list(parse_record((folder / "records" / "g1.json").read_bytes()).players) == \
        ["Ann", "Ben"]
    with history.index() as index:
        row = next(r for r in index.games(limit=10) if r["id"] == "g1")
    assert (row["p0_name"], row["p1_name"]) == ("Ann", "Ben")


def test_a_record_no_rebuild_can_index_is_not_a_lost_row(tmp_path):
    """One invalid record file made every ``history``, ``stats`` and ``export`` (and every
    start of the service) rebuild the whole index, saying it was "deleted, emptied or
    restored from an old copy"."""
    folder, history = two_games_filed(tmp_path)
    (folder / "records" / "bad.json").write_text('{"garbage": 1}')
    assert History(folder).disagreement() == ""
    assert History(folder).reconcile() == ""
    with history.index() as index:
        index.delete_all()
    assert History(folder).disagreement() == "the index holds 0 of 2 saved games"
    assert "2 games indexed, 1 records skipped" in History(folder).reconcile()


def test_a_rebuild_refused_by_a_lock_says_who_may_hold_it(tmp_path, capsys):
    """``history --rebuild`` while another process holds the index's write lock: exit 2
    with the likely holders and what to do, not only SQLite's "database is locked"."""
    folder, history = two_games_filed(tmp_path)
    holder = LockHolder(history.db_path)
    try:
        assert cli_main(["history", "--rebuild", "--store", str(folder)]) == 2
    finally:
        holder.release()
    said = capsys.readouterr().err
    assert "database is locked" in said and "another process holds the index" in said
    assert "Try again" in said and "Traceback" not in said
