"""The journal under damage and refusal, through the running service.

Damaged files (a torn last line, garbage or NULs appended, a truncated file, a
corrupt snapshot, an entry that no longer replays) -> a clear message, the last
good state restored, and the game goes on. A disk that refuses (full: the
journal is a symlink to /dev/full; read-only: the folder and files are made
immutable, which binds root too; not a file) -> the game goes on in memory
with a warning on the OLED, and the journal catches up once the disk is back.
"""
from __future__ import annotations

import contextlib
import errno
import logging
import os
import subprocess
from pathlib import Path

import pytest

from firmware_py.companion import journal as J
from firmware_py.companion.journal import Journal
from firmware_py.rules import parse_record, replay, untracked_copy

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
        turns, moves = service.call(lambda: (len(service.ui.session.groups),
                                             list(service.ui.session.record().moves))
                                    if service.ui.session else (0, []))
        return list(service.problems), service.status.screen.warning, turns, moves
    finally:
        service.stop()


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
def test_a_damaged_journal_resumes_the_last_good_turn_and_the_game_goes_on(tmp_path, damage):
    """Torn, garbage, NUL tail or truncated: a message, the good turns, and play goes on."""
    hurt, lost = DAMAGE[damage]
    folder = tmp_path / "journal"
    play(folder, 10)                                   # setup + 10 turns, no snapshot yet
    assert not (folder / "snapshot.json").exists()
    hurt(folder / "journal.jsonl")
    problems, warning, view = play(folder, 10 - lost + 3)
    assert problems and all(str(folder / "journal.jsonl") in p for p in problems)
    assert "resumed from the last good entry" in problems[0] or "cut short" in problems[0]
    assert "journal repaired" in warning
    assert view.groups == 13 - lost                    # the good turns, then three more
    problems, warning, turns, moves = resumed(folder)  # and all of it is on disk, clean
    assert (problems, warning, turns) == ([], "", 13 - lost)
    assert moves == PLAN[:len(moves)]


def test_every_truncation_point_keeps_exactly_the_complete_entries(tmp_path):
    """A power cut can stop the last writes at any byte: each cut keeps the entries that
    were complete (plus a last line missing only its line end) and never more."""
    folder = tmp_path / "full"
    play(folder, 6)
    data = (folder / "journal.jsonl").read_bytes()
    ends = [i + 1 for i, b in enumerate(data) if b == ord("\n")]
    for cut in range(ends[-4], len(data) + 1):
        case = tmp_path / f"cut{cut}"
        case.mkdir()
        (case / "journal.jsonl").write_bytes(data[:cut])
        loaded = Journal(case).load()
        complete = sum(1 for e in ends if e <= cut) + (cut + 1 in ends)
        assert len(loaded.entries) == complete, cut
        assert bool(loaded.problems) == (cut not in ends), cut


def test_a_corrupt_snapshot_falls_back_to_the_journal_lines(tmp_path):
    """A zeroed snapshot is reported and ignored; what the journal holds is used."""
    folder = tmp_path / "journal"
    play(folder, J.SNAPSHOT_EVERY + 4)
    (folder / "snapshot.json").write_bytes(b"\x00" * 64)   # zeroed by the SD card
    (folder / "journal.jsonl").write_bytes(b"")            # and the journal emptied
    problems, warning, turns, _ = resumed(folder)
    assert any("snapshot" in p for p in problems) and "journal repaired" in warning
    assert turns == 0                                       # nothing good is left: a clean start


def test_an_entry_that_no_longer_replays_is_cut_off_not_fatal(tmp_path):
    """A well-formed entry the engine refuses (a bug, a changed catalogue) must not stop
    the service from starting: the game resumes from the entry before it."""
    folder = tmp_path / "journal"
    play(folder, 5)
    journal = Journal(folder)
    journal.load()
    journal.append({"kind": "turn", "moves": [{"buy": 999}]})        # checksum fine, no such patch
    journal.append({"kind": "turn", "moves": ["advance"]})
    problems, warning, view = play(folder, 7)
    assert any("entry 7 of the game cannot be replayed" in p for p in problems)
    assert "journal repaired" in warning and view.groups == 7
    problems, warning, turns, moves = resumed(folder)
    assert (problems, turns) == ([], 7) and moves == PLAN[:len(moves)]


def test_a_power_cut_between_the_end_and_the_record_saves_the_record_on_restart(tmp_path):
    """The end journaled, the record lost: a restart saves it, once."""
    folder = tmp_path / "journal"
    clock = StepClock()
    service = service_for(folder, EXPRESS_RECORD, clock)
    try:
        final = TableDriver(service, clock, EXPRESS_RECORD).play()
    finally:
        service.stop()
    saved = Path(final.saved_to)
    saved.unlink()                                          # the record never reached the disk
    service = service_for(folder, EXPRESS_RECORD)
    try:
        again = Path(service.call(lambda: service.ui.saved_to))
    finally:
        service.stop()
    assert again.exists() and replay(parse_record(again.read_text()))[1].scores == \
        replay(EXPRESS_RECORD)[1].scores
    service = service_for(folder, EXPRESS_RECORD)            # and once saved, never twice
    service.stop()
    assert list((folder / "records").glob("*.json")) == [again]


# -------------------------------------------------------------- a disk that refuses
@contextlib.contextmanager
def disk_full(folder: Path):
    """The journal file becomes /dev/full: every write fails with ENOSPC."""
    path = folder / "journal.jsonl"
    kept = path.read_bytes()
    path.unlink()
    path.symlink_to("/dev/full")
    try:
        yield "ENOSPC"
    finally:
        path.unlink()
        path.write_bytes(kept)


@contextlib.contextmanager
def read_only(folder: Path, monkeypatch):
    """The folder and its files refuse every change. As root (tests in CI) the files are
    made immutable (chattr +i: EPERM even for root); otherwise the folder is chmod 0500.
    Only where neither works are writes refused by a patched ``open`` (EROFS)."""
    paths = [folder] + sorted(folder.iterdir())
    if os.geteuid() != 0:
        modes = {p: p.stat().st_mode for p in paths}
        for p in paths:
            p.chmod(0o500 if p.is_dir() else 0o400)
        try:
            yield "chmod"
        finally:
            for p, mode in modes.items():
                p.chmod(mode)
        return
    done = subprocess.run(["chattr", "+i"] + [str(p) for p in paths], capture_output=True)
    if done.returncode == 0:
        try:
            yield "chattr +i"
        finally:
            subprocess.run(["chattr", "-i"] + [str(p) for p in paths], check=True)
        return
    real_open = open                                                 # pragma: no cover

    def refusing_open(file, mode="r", *args, **kwargs):              # pragma: no cover
        if str(file).startswith(str(folder)) and set(mode) & set("wax+"):
            raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(file))
        return real_open(file, mode, *args, **kwargs)
    monkeypatch.setattr(J, "open", refusing_open, raising=False)     # pragma: no cover
    try:                                                             # pragma: no cover
        yield "patched open (EROFS)"
    finally:                                                         # pragma: no cover
        monkeypatch.undo()


@contextlib.contextmanager
def not_a_file(folder: Path):
    """Someone replaced the journal file by a folder: reads and writes fail with EISDIR."""
    path = folder / "journal.jsonl"
    kept = path.read_bytes()
    path.unlink()
    path.mkdir()
    try:
        yield "EISDIR"
    finally:
        path.rmdir()
        path.write_bytes(kept)


@pytest.mark.parametrize("refusal", ["disk full", "read-only", "not a file"])
def test_a_disk_that_refuses_writes_keeps_the_game_in_memory_and_catches_up(
        tmp_path, refusal, monkeypatch, caplog):
    """Full, read-only or not a file: the game goes on, the OLED and the log say so, nothing is lost once the disk is back."""
    caplog.set_level(logging.WARNING)
    folder = tmp_path / "journal"
    play(folder, 4)
    clock = StepClock()
    service = service_for(folder, RECORD, clock)
    driver = TableDriver(service, clock, RECORD)
    try:
        cm = {"disk full": lambda: disk_full(folder), "not a file": lambda: not_a_file(folder),
              "read-only": lambda: read_only(folder, monkeypatch)}[refusal]()
        with cm:
            view = driver.play(stop_when=lambda v: v.groups >= 8)   # four turns the disk refuses
            assert view.groups == 8                                   # the game went on in memory
            driver.settle()
            assert "not saving" in service.status.screen.warning      # and the OLED says so
            assert any("cannot write the journal" in r.getMessage() for r in caplog.records)
        view = driver.play(stop_when=lambda v: v.groups >= 9)         # the disk is back
        driver.settle()
        assert "not saving" not in service.status.screen.warning
    finally:
        service.stop()
    problems, warning, turns, moves = resumed(folder)
    assert (problems, warning, turns) == ([], "", 9)                  # nothing was lost
    assert moves == PLAN[:len(moves)]


def test_a_journal_folder_that_cannot_be_made_still_lets_the_game_be_played(tmp_path):
    """The configured folder sits under a file: nothing can be written at all. The
    service still starts, says so, and a whole game is played in memory."""
    (tmp_path / "file").write_text("not a folder")
    folder = tmp_path / "file" / "journal"
    clock = StepClock()
    service = service_for(folder, EXPRESS_RECORD, clock)
    try:
        final = TableDriver(service, clock, EXPRESS_RECORD).play()
        service.call(lambda: None)
        warning = service.status.screen.warning
    finally:
        service.stop()
    assert final.mode == "end" and final.moves == list(untracked_copy(EXPRESS_RECORD).moves)
    assert "not saving" in warning and "record not saved" in warning
