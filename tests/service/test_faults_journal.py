"""The journal and the history under damage and refusal, through the running service.

* Damaged files (a torn last line, garbage, NULs, a truncated file, a bad line
  in the middle, zero-length or NUL-filled journal and snapshot): every
  intact turn resumed, the damage quarantined, the OLED and the log say what
  was skipped or lost, and the game goes on.
* A disk that refuses (ENOSPC on a real, tiny tmpfs; EROFS on a real
  read-only remount; EIO injected at the OS call boundary, which the kernel
  cannot be made to produce here): the game goes on in memory, the OLED says
  "not saving: <why> (<folder>)", and everything, the end-of-game record
  included, is written by itself once the disk takes writes again, with no
  temporary file left behind. Without root, the refusals are injected at the
  OS call boundary too.
"""
from __future__ import annotations

import errno
import logging
import os
import shutil
import sqlite3
import subprocess
import threading
from pathlib import Path

import pytest

from firmware_py.cli import main
from firmware_py.companion.journal import Journal
from firmware_py.rules import parse_record, replay, untracked_copy
from firmware_py.service.keeper import RETRY_S
from firmware_py.store import History

from test_companion_journal import FailingOs, patch_os
from test_faults_rig import EXPRESS_RECORD, GOLDEN_RECORDS, StepClock, TableDriver, service_for

RECORD = GOLDEN_RECORDS[3]
PLAN = list(untracked_copy(RECORD).moves)


def play(folder: Path, turns: int, record=RECORD):
    """Resume the game in ``folder`` and play on until ``turns`` turns are accepted;
    returns (service problems at start, warning shown at start, final view)."""
    clock = StepClock()
    service = service_for(folder, record, clock)
    try:
        start = (list(service.problems), service.status.screen.warning)
        view = TableDriver(service, clock, record).play(stop_when=lambda v: v.groups >= turns)
    finally:
        service.stop()
    return start[0], start[1], view


def resumed(folder: Path, record=RECORD):
    """(problems, warning, turns, moves) of a service started on ``folder``."""
    service = service_for(folder, record)
    try:
        turns, moves = service.call(lambda: (len(service.view.session.groups),
                                             list(service.view.session.record().moves))
                                    if service.view.session else (0, []))
        return list(service.problems), service.status.screen.warning, turns, moves
    finally:
        service.stop()


def journal_lines(folder: Path) -> list[bytes]:
    return (folder / "journal.jsonl").read_bytes().split(b"\n")[:-1]


# --------------------------------------------------------------- damaged files
def _torn(path: Path) -> None:
    path.write_bytes(path.read_bytes()[:-9])


def _garbage(path: Path) -> None:
    with open(path, "ab") as fh:
        fh.write(b"\x00\x00\x00\xff\xfe{\"seq\": 99, garbage\n")


def _nul_tail(path: Path) -> None:       # an SD card after a power cut: the last block zeroed
    data = path.read_bytes()
    cut = data.rstrip(b"\n").rfind(b"\n") + 1
    path.write_bytes(data[:cut] + b"\x00" * (len(data) - cut))


def _truncated(path: Path) -> None:      # cut in the middle of an earlier line
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[:-3]) + lines[-3][:20])


DAMAGE = {"torn last line": (_torn, 1), "garbage appended": (_garbage, 0),
          "NUL-filled tail": (_nul_tail, 1), "truncated mid-file": (_truncated, 3)}


@pytest.mark.parametrize("damage", list(DAMAGE))
def test_a_damaged_journal_tail_resumes_the_last_good_turn_and_the_game_goes_on(tmp_path, damage):
    """Torn, garbage, NUL tail or truncated (and the snapshot gone too): a message, the
    good turns, and play goes on; a turn is lost only where its own bytes are gone."""
    hurt, lost = DAMAGE[damage]
    folder = tmp_path / "journal"
    play(folder, 10)
    (folder / "snapshot.json").unlink()
    hurt(folder / "journal.jsonl")
    problems, warning, view = play(folder, 10 - lost + 3)
    assert problems and all(str(folder / "journal.jsonl") in p for p in problems)
    assert "skipped" in warning or "cut short" in problems[0]
    assert view.groups == 13 - lost                    # the good turns, then three more
    problems, warning, turns, moves = resumed(folder)  # and all of it is on disk, clean
    assert (problems, warning, turns) == ([], "", 13 - lost)
    assert moves == PLAN[:len(moves)]


def test_a_bad_entry_in_the_middle_keeps_every_turn_and_is_quarantined(tmp_path, caplog):
    """One bad line among good ones (the snapshot useless too): all ten turns resume, the
    OLED and the log say one entry was skipped and where, its bytes are in quarantine."""
    caplog.set_level(logging.WARNING)
    folder = tmp_path / "journal"
    play(folder, 10)
    (folder / "snapshot.json").write_bytes(b"")
    lines = journal_lines(folder)
    lines[5] = lines[5].replace(b'"kind"', b'"kinb"')          # bit rot in turn 5's line
    damaged = b"".join(line + b"\n" for line in lines)
    (folder / "journal.jsonl").write_bytes(damaged)
    problems, warning, view = play(folder, 12)
    assert "1 bad entry skipped (line 6)" in warning
    assert any("line 6 (byte" in p and "checksum mismatch" in p for p in problems)
    assert view.groups == 12 and view.moves == PLAN[:len(view.moves)]
    kept = folder / "quarantine" / "q-0001-journal.jsonl"
    assert kept.read_bytes() == damaged
    assert any(f"kept in {kept}" in r.getMessage() for r in caplog.records)
    assert resumed(folder)[:3] == ([], "", 12)


def test_a_stale_snapshot_and_zeroed_lines_never_roll_back_silently(tmp_path):
    """The snapshot stopped at turn 15, then lines of turns 16-19 were zeroed: the game
    resumes at turn 15 and the OLED says "turns 16-20 lost; resumed at turn 15"."""
    folder = tmp_path / "journal"
    play(folder, 15)
    stale = (folder / "snapshot.json").read_bytes()
    play(folder, 20)
    (folder / "snapshot.json").write_bytes(stale)
    lines = journal_lines(folder)
    for k in range(16, 20):
        lines[k] = b"\x00" * len(lines[k])
    (folder / "journal.jsonl").write_bytes(b"".join(line + b"\n" for line in lines))
    problems, warning, turns, moves = resumed(folder)
    assert turns == 15 and moves == PLAN[:len(moves)]
    assert "turns 16-20 lost; resumed at turn 15" in warning
    assert any("turns 16-20 lost; resumed at turn 15" in p for p in problems)


@pytest.mark.parametrize("which", ["journal", "snapshot", "both"])
def test_zero_length_files_lose_nothing_another_file_holds(tmp_path, which):
    folder = tmp_path / "journal"
    play(folder, 8)
    if which in ("journal", "both"):
        (folder / "journal.jsonl").write_bytes(b"")
    if which in ("snapshot", "both"):
        (folder / "snapshot.json").write_bytes(b"\x00" * 512)
    problems, warning, turns, _ = resumed(folder)
    assert problems and warning                       # never silent
    assert turns == (0 if which == "both" else 8)
    if which == "both":
        assert "journal damaged: no game to resume" in warning


def test_an_entry_that_no_longer_replays_is_cut_off_not_fatal(tmp_path):
    """A well-formed entry the engine refuses (a bug, a changed catalogue) must not stop
    the service from starting: the game resumes from the entry before it."""
    folder = tmp_path / "journal"
    play(folder, 5)
    journal = Journal(folder)
    journal.load()
    journal.append({"kind": "turn", "moves": [{"buy": 999}]})        # checksum fine, no such patch
    journal.append({"kind": "turn", "moves": ["advance"]})
    journal.flush_snapshot()
    problems, warning, view = play(folder, 7)
    assert any("entry 7 of the game cannot be replayed" in p for p in problems)
    assert "turns 6-7 lost; resumed at turn 5" in warning and view.groups == 7
    assert (folder / "quarantine" / "q-0001-journal.jsonl").exists()
    problems, warning, turns, moves = resumed(folder)
    assert (problems, turns) == ([], 7) and moves == PLAN[:len(moves)]


# ------------------------------------------------------------------ the history
def finish(folder: Path, record=EXPRESS_RECORD):
    clock = StepClock()
    service = service_for(folder, record, clock)
    try:
        return TableDriver(service, clock, record).play()
    finally:
        service.stop()


def test_a_power_cut_between_the_end_and_the_record_files_the_game_on_restart(tmp_path):
    """The end journaled, the record and its index row lost: a restart files it, once."""
    folder = tmp_path / "journal"
    final = finish(folder)
    saved = Path(final.saved_to)
    assert saved.parent == folder / "records"
    saved.unlink()
    for suffix in ("", "-wal", "-shm"):
        (folder / f"history.sqlite3{suffix}").unlink(missing_ok=True)
    for _ in range(2):                                       # and never twice
        service = service_for(folder, EXPRESS_RECORD)
        try:
            again = Path(service.call(lambda: service.view.saved_to))
        finally:
            service.stop()
        assert again == saved and replay(parse_record(again.read_text()))[1].scores == \
            replay(EXPRESS_RECORD)[1].scores
    assert list((folder / "records").glob("*.json")) == [saved]
    with History(folder).index() as index:
        assert [r["id"] for r in index.games()] == [saved.stem]


@pytest.mark.parametrize("bad_id", ["../../escaped", "a/b", "", 7, "x" * 300])
def test_a_journal_whose_game_id_is_no_file_name_files_the_game_inside_records(tmp_path, bad_id):
    """The game id names the record file: one from a hand-edited journal that is a path, too
    long, or not text is replaced by one derived from the setup; nothing is written outside
    ``records/``."""
    folder = tmp_path / "journal"
    finish(folder)
    entries = Journal(folder).load().entries
    entries[0] = {**entries[0], "id": bad_id}
    shutil.rmtree(folder)
    forged = Journal(folder)
    for body in entries:
        forged.append(body)
    service = service_for(folder, EXPRESS_RECORD)
    try:
        saved = Path(service.call(lambda: service.view.saved_to))
    finally:
        service.stop()
    assert saved.parent == folder / "records" and saved.name.startswith("game-")
    assert [p.relative_to(tmp_path) for p in tmp_path.rglob("*.json")
            if p.name != "snapshot.json"] == [Path("journal/records") / saved.name]


def test_the_record_carries_start_end_and_app_and_the_index_has_them(tmp_path):
    final = finish(tmp_path / "journal")
    meta = parse_record(Path(final.saved_to).read_text()).meta
    assert {"started", "ended", "duration_s", "app"} <= set(meta)
    with History(tmp_path / "journal").index() as index:
        (row,) = index.games()
    assert (row["started"], row["ended"], row["duration_s"]) == \
        (meta["started"], meta["ended"], meta["duration_s"])
    assert row["finished"] == 1 and [row["p0_score"], row["p1_score"]] == \
        replay(EXPRESS_RECORD)[1].scores


def test_a_new_game_replaces_the_journal_only_once_the_last_record_is_saved(tmp_path, monkeypatch):
    """The record cannot be written (records folder refused) but the journal can: the
    ended game stays in the journal until its record is saved, then the new game
    replaces it."""
    folder = tmp_path / "journal"
    clock = StepClock()
    by_game = {r.game: (r.circle, r.blue or ()) for r in (EXPRESS_RECORD, GOLDEN_RECORDS[1])}
    service = service_for(folder, EXPRESS_RECORD, clock, deal=by_game.__getitem__)
    refuse = {"on": True}
    real_save = History.save

    def refusing_save(self, game_id, record):
        if refuse["on"]:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_save(self, game_id, record)
    monkeypatch.setattr(History, "save", refusing_save)
    try:
        driver = TableDriver(service, clock, EXPRESS_RECORD)
        final = driver.play()
        assert final.saved_to == "" and f"record not saved: disk full ({folder / 'records'})" \
            in service.status.screen.warning
        driver.press("ok")                                   # leave the end screen
        second = TableDriver(service, clock, GOLDEN_RECORDS[1])
        second.play(stop_when=lambda v: v.groups >= 2)
        on_disk = Journal(folder).load().entries
        assert on_disk[0]["setup"]["game"] == "patchwork-express" and on_disk[-1]["kind"] == "end"
        assert "not saving" in service.status.screen.warning
        refuse["on"] = False
        driver.later(RETRY_S + 0.1)                          # by itself, no input needed
        driver.settle()
        on_disk = Journal(folder).load().entries
        assert on_disk[0]["setup"]["game"] == "patchwork" and len(on_disk) == 3
        assert service.status.screen.warning == ""
    finally:
        service.stop()
    with History(folder).index() as index:
        (row,) = index.games()
    assert row["game"] == "patchwork-express"


# -------------------------------------------------------------- a disk that refuses
class Disk:
    """The journal's disk. As root: a real 256 KiB tmpfs (filled up for ENOSPC, remounted
    read-only for EROFS). Otherwise, or for EIO: the error injected at the OS call
    boundary of the journal module and of ``disk.py``, which writes the records
    (``os.fsync``/``os.open`` fail)."""

    def __init__(self, root: Path, monkeypatch):
        self.root = root
        self.monkeypatch = monkeypatch
        root.mkdir()
        self.real = os.geteuid() == 0 and subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(root)],
            capture_output=True).returncode == 0
        self.folder = root / "journal"
        self._fail: FailingOs | None = None

    def refuse(self, code: int) -> None:
        """Start refusing writes with ``code`` (ENOSPC, EROFS or EIO)."""
        if self.real and code == errno.ENOSPC:
            with open(self.root / "filler", "wb", buffering=0) as fh:
                try:
                    while True:
                        fh.write(b"\0" * 4096)
                        fh.flush()
                except OSError:
                    pass
        elif self.real and code == errno.EROFS:
            subprocess.run(["mount", "-o", "remount,ro", str(self.root)], check=True)
        else:
            self._fail = FailingOs(code, ("fsync", "open"))
            patch_os(self.monkeypatch, self._fail)

    def allow(self) -> None:
        """Take writes again."""
        if self._fail is not None:
            self._fail.failing = False
            self._fail = None
            patch_os(self.monkeypatch, os)
        subprocess.run(["mount", "-o", "remount,rw", str(self.root)], capture_output=True) \
            if self.real else None
        (self.root / "filler").unlink(missing_ok=True)

    def close(self) -> None:
        self.allow()
        if self.real:
            subprocess.run(["umount", str(self.root)], check=True)


@pytest.fixture
def disk(tmp_path, monkeypatch):
    d = Disk(tmp_path / "disk", monkeypatch)
    yield d
    d.close()


REFUSALS = {"disk full": errno.ENOSPC, "read-only": errno.EROFS, "disk error": errno.EIO}


def leftovers(folder: Path) -> list[str]:
    """Temporary files in the journal folder (there must be none)."""
    return sorted(p.name for p in folder.rglob("*") if p.name.endswith(".tmp"))


@pytest.mark.parametrize("refusal", list(REFUSALS))
def test_a_disk_that_refuses_keeps_the_game_in_memory_and_catches_up_by_itself(
        disk, refusal, caplog):
    """Mid-game: the game goes on, the OLED says "not saving: <why> (<folder>)" and the log
    too; once the disk takes writes, everything is written without a further turn."""
    caplog.set_level(logging.WARNING)
    folder = disk.folder
    play(folder, 4)
    clock = StepClock()
    service = service_for(folder, RECORD, clock)
    driver = TableDriver(service, clock, RECORD)
    try:
        disk.refuse(REFUSALS[refusal])
        for target in range(5, 30):
            view = driver.play(stop_when=lambda v, t=target: v.groups >= t)
            driver.later(RETRY_S + 0.1)
            if "not saving" in service.status.screen.warning:
                break
        assert view.groups < 30 and view.groups >= 5              # the game went on in memory
        assert f"not saving: {refusal} ({folder})" in service.status.screen.warning
        assert any("cannot write the journal" in r.getMessage() for r in caplog.records)
        disk.allow()
        driver.later(RETRY_S + 0.1)                                # no input: it catches up
        driver.settle()
        assert "not saving" not in service.status.screen.warning
        assert any("writable again" in r.getMessage() for r in caplog.records)
    finally:
        service.stop()
    assert leftovers(folder) == []
    problems, warning, turns, moves = resumed(folder)
    assert (problems, warning, turns) == ([], "", view.groups)        # nothing was lost
    assert moves == PLAN[:len(moves)]


def test_a_snapshot_still_refused_is_not_called_caught_up_after_each_turn(tmp_path, monkeypatch,
                                                                         caplog):
    """Room for a journal line but not for the snapshot (ENOSPC on its rename): every turn
    still says "not saving", the log never says "writable again" until the snapshot is
    written, and then it holds the whole game."""
    caplog.set_level(logging.WARNING)
    folder = tmp_path / "journal"
    play(folder, 4)
    clock = StepClock()
    service = service_for(folder, RECORD, clock)
    driver = TableDriver(service, clock, RECORD)
    failing = FailingOs(errno.ENOSPC, "replace")
    try:
        patch_os(monkeypatch, failing)
        for target in range(5, 9):
            view = driver.play(stop_when=lambda v, t=target: v.groups >= t)
            driver.settle()
            assert f"not saving: disk full ({folder})" in service.status.screen.warning, target
        assert not any("writable again" in r.getMessage() for r in caplog.records)
        failing.failing = False
        driver.later(RETRY_S + 0.1)
        assert service.status.screen.warning == ""
        assert [r.getMessage() for r in caplog.records].count(
            f"journal in {folder} writable again: caught up") == 1
    finally:
        service.stop()
    (folder / "journal.jsonl").unlink()                    # the snapshot alone holds it all
    assert resumed(folder)[2] == view.groups == 8


@pytest.mark.parametrize("refusal", list(REFUSALS))
def test_a_disk_that_refuses_at_the_end_saves_the_record_by_itself_later(disk, refusal):
    folder = disk.folder
    clock = StepClock()
    service = service_for(folder, EXPRESS_RECORD, clock)
    driver = TableDriver(service, clock, EXPRESS_RECORD)
    try:
        driver.play(stop_when=lambda v: v.groups >= 25)
        disk.refuse(REFUSALS[refusal])
        final = driver.play()                                      # the game ends: no disk
        driver.later(RETRY_S + 0.1)
        assert final.mode == "end" and not final.saved_to
        assert "not saving" in service.status.screen.warning
        assert not list((folder / "records").glob("*.json")) if (folder / "records").exists() \
            else True
        disk.allow()
        driver.later(RETRY_S + 0.1)
        saved = service.call(lambda: service.view.saved_to)
        assert service.status.screen.warning == ""
    finally:
        service.stop()
    assert leftovers(folder) == []
    assert replay(parse_record(Path(saved).read_text()))[1].scores == \
        replay(EXPRESS_RECORD)[1].scores
    with History(folder).index() as index:
        assert [r["id"] for r in index.games()] == [Path(saved).stem]
    assert resumed(folder, EXPRESS_RECORD)[:3] == ([], "", final.groups)


def test_start_up_and_config_check_say_when_the_journal_folder_is_not_writable(
        disk, tmp_path, capsys):
    folder = disk.folder
    play(folder, 3)
    disk.refuse(errno.EROFS)
    problems, warning, turns, _ = resumed(folder)
    assert turns == 3                                   # the game is there, in memory
    assert any(f"{folder} is not writable (read-only" in p for p in problems)
    assert f"not saving: read-only ({folder})" in warning
    if disk.real:
        config = tmp_path / "config.toml"
        config.write_text(f'backend = "sim"\n[journal]\ndir = "{folder}"\n')
        assert main(["config", "check", str(config)]) == 1
        err = capsys.readouterr().err
        assert f"journal.dir: {folder} is not writable (read-only" in err


def test_a_journal_folder_that_cannot_be_made_still_lets_the_game_be_played(tmp_path):
    """The configured folder sits under a file: nothing can be written at all. The
    service still starts, says so, and a whole game is played in memory."""
    (tmp_path / "file").write_text("not a folder")
    folder = tmp_path / "file" / "journal"
    clock = StepClock()
    service = service_for(folder, EXPRESS_RECORD, clock)
    try:
        assert any("is not writable" in p for p in service.problems)
        final = TableDriver(service, clock, EXPRESS_RECORD).play()
        service.call(lambda: None)
        warning = service.status.screen.warning
    finally:
        service.stop()
    assert final.mode == "end" and final.moves == list(untracked_copy(EXPRESS_RECORD).moves)
    assert "not saving" in warning and "record not saved" in warning



def test_start_up_reads_nothing_of_the_history(tmp_path, monkeypatch):
    """A long history must not slow the start: with a game in progress, the service's
    start-up and loop open neither the index nor a record (here both would fail loudly);
    only the index thread's check of index against records does."""
    folder = tmp_path / "journal"
    finish(folder)                                         # one game in the history
    touched = []

    def index(self):
        touched.append(threading.current_thread().name)
        raise sqlite3.OperationalError("database is locked")
    monkeypatch.setattr(History, "index", index)
    monkeypatch.setattr(History, "ensure", lambda self, *a: touched.append("ensure"))
    (folder / "records").chmod(0o000)
    try:
        journal = Journal(folder)
        journal.load()
        journal.append({"kind": "setup", "setup": Journal(folder).load().entries[0]["setup"],
                        "id": "next"})                     # a new game in progress
        problems, warning, turns, _ = resumed(folder, EXPRESS_RECORD)
    finally:
        (folder / "records").chmod(0o755)
    assert (problems, turns) == ([], 0)
    assert set(touched) <= {"history-index"}, touched
