"""The journal on its own: durable appends, two full copies, and recovery from damage.

Damage classes: a damaged entry in the middle (every intact turn kept, the
bytes quarantined, never overwritten), zero-length and NUL-filled journal or
snapshot files (alone, together, after an earlier repair: nothing another
intact file holds is lost, no silent roll-back), and write errors at the OS
boundary (EIO, ENOSPC) that leave no temporary file.
"""
from __future__ import annotations

import errno
import json
import os
import shutil
from pathlib import Path

import pytest

from firmware_py.companion import journal as J
from firmware_py.companion.journal import Journal, JournalError

SETUP = {"kind": "setup", "setup": {"game": "patchwork"}}


def write_game(folder: Path, turns: int, snapshot_until: int | None = None) -> Journal:
    """A journal of a setup and ``turns`` turns (moves [0], [1], ...); the snapshot is
    written after every entry, or only up to turn ``snapshot_until``."""
    j = Journal(folder)
    j.load()
    j.append(SETUP)
    j.flush_snapshot()
    for i in range(turns):
        j.append({"kind": "turn", "moves": [i]})
        if snapshot_until is None or i < snapshot_until:
            j.flush_snapshot()
    return j


def moves(loaded) -> list:
    return [e["moves"][0] for e in loaded.entries if e.get("kind") == "turn"]


def lines_of(folder: Path) -> list[bytes]:
    return (folder / "journal.jsonl").read_bytes().split(b"\n")[:-1]


def put_lines(folder: Path, lines: list[bytes]) -> None:
    (folder / "journal.jsonl").write_bytes(b"".join(line + b"\n" for line in lines))


# ------------------------------------------------------------------ the format
def test_round_trip_and_undo_folding(tmp_path):
    j = write_game(tmp_path, 3)
    j.append({"kind": "undo"})
    loaded = Journal(tmp_path).load()
    assert moves(loaded) == [0, 1] and loaded.seq == 5 and not loaded.problems


def test_each_line_carries_seq_a_checksum_and_the_line_before(tmp_path):
    write_game(tmp_path, 2)
    first, second = (json.loads(line) for line in lines_of(tmp_path)[:2])
    assert set(first) == {"seq", "crc", "body"} and first["seq"] == 1
    assert second["prev"] == first["body"] and second["pcrc"] == first["crc"]


def test_the_snapshot_and_the_journal_each_hold_the_whole_game(tmp_path):
    write_game(tmp_path, 20)
    snap = json.loads((tmp_path / "snapshot.json").read_bytes())
    assert snap["seq"] == 21 and [e.get("moves") for e in snap["entries"][1:]] == [[i] for i in range(20)]
    alone = tmp_path / "alone"
    alone.mkdir()
    (alone / "journal.jsonl").write_bytes((tmp_path / "journal.jsonl").read_bytes())
    assert moves(Journal(alone).load()) == list(range(20))


def test_a_new_game_replaces_the_journal_and_seq_goes_on(tmp_path):
    j = write_game(tmp_path, 5)
    j.append({"kind": "end"})
    j.append({**SETUP, "id": "next"})
    lines = lines_of(tmp_path)
    assert len(lines) == 1 and json.loads(lines[0])["seq"] > 7      # only the new game
    loaded = Journal(tmp_path).load()
    assert loaded.entries == [{**SETUP, "id": "next"}] and not loaded.problems


def test_a_journal_of_the_previous_format_is_still_read(tmp_path):
    body = {"kind": "turn", "moves": [0]}
    old = [{"seq": 1, "crc": J._legacy_crc(SETUP), "body": SETUP},
           {"seq": 2, "crc": J._legacy_crc(body), "body": body}]
    put_lines(tmp_path, [json.dumps(o).encode() for o in old])
    loaded = Journal(tmp_path).load()
    assert moves(loaded) == [0] and not loaded.problems


# ------------------------------------------------- 1: a damaged entry in the middle
def test_a_damaged_entry_in_the_middle_keeps_every_intact_turn(tmp_path):
    """One bad line among good ones (snapshot useless too): the later turns are kept, the
    damaged turn itself comes back from the copy in the next line."""
    write_game(tmp_path, 10)
    (tmp_path / "snapshot.json").unlink()
    lines = lines_of(tmp_path)
    lines[4] = lines[4][:30] + b"\x00\xffgarbage" + lines[4][40:]        # turn 3's line
    put_lines(tmp_path, lines)
    j = Journal(tmp_path)
    loaded = j.load()
    assert moves(loaded) == list(range(10))
    assert loaded.skipped == 1 and "1 bad entry skipped (line 5)" in loaded.notice
    assert any("line 5 (byte" in p for p in loaded.problems) and not loaded.lost


def test_without_the_copy_the_lost_turn_and_the_kept_ones_are_said(tmp_path):
    """Two adjacent lines destroyed: only their turns are unrecoverable, and the OLED says
    so exactly ("turns 4-5 lost; resumed at turn 3")."""
    write_game(tmp_path, 10)
    (tmp_path / "snapshot.json").unlink()
    lines = lines_of(tmp_path)
    for k in (4, 5):                                   # turns 3 and 4 (the 4th and 5th)
        lines[k] = b"\x00" * len(lines[k])
    put_lines(tmp_path, lines)
    loaded = Journal(tmp_path).load()
    assert moves(loaded) == [0, 1, 2]
    assert loaded.lost == "turns 4-10 lost; resumed at turn 3"
    assert "2 bad entries skipped (line 5, 6)" in loaded.notice


def test_damaged_bytes_go_to_quarantine_and_are_never_overwritten(tmp_path):
    write_game(tmp_path, 6)
    lines = lines_of(tmp_path)
    lines[2] = b"{garbage one"
    put_lines(tmp_path, lines)
    first_damage = (tmp_path / "journal.jsonl").read_bytes()
    j = Journal(tmp_path)
    j.load()
    moved = j.catch_up()
    kept = tmp_path / "quarantine" / "q-0001-journal.jsonl"
    assert moved == [f"{tmp_path / 'journal.jsonl'}: its bytes are kept in {kept}"]
    assert kept.read_bytes() == first_damage
    assert not Journal(tmp_path).load().problems              # the journal is clean again
    lines = lines_of(tmp_path)
    lines[1] = b"{garbage two"                                 # damaged again later
    put_lines(tmp_path, lines)
    j = Journal(tmp_path)
    j.load()
    j.catch_up()
    assert kept.read_bytes() == first_damage                  # the first quarantine untouched
    assert b"garbage two" in (tmp_path / "quarantine" / "q-0002-journal.jsonl").read_bytes()
    assert moves(Journal(tmp_path).load()) == list(range(6))


def _damage_line(folder: Path, index: int, text: bytes) -> bytes:
    lines = lines_of(folder)
    lines[index] = text
    put_lines(folder, lines)
    return (folder / "journal.jsonl").read_bytes()


def test_without_hard_links_the_damaged_bytes_are_copied_aside(tmp_path, monkeypatch):
    """A journal on a FAT card (no hard links: EPERM) still repairs: the damaged file is
    copied into quarantine (not lost, not overwritten) and the game is written again."""
    write_game(tmp_path, 4)
    damaged = _damage_line(tmp_path, 2, b"{garbage")
    j = Journal(tmp_path)
    j.load()
    patch_os(monkeypatch, FailingOs(errno.EPERM, "link"))
    j.append({"kind": "turn", "moves": [4]})
    assert (tmp_path / "quarantine" / "q-0001-journal.jsonl").read_bytes() == damaged
    assert moves(Journal(tmp_path).load()) == list(range(5)) and not j.pending


def test_a_quarantine_folder_that_cannot_be_used_does_not_stop_the_journal(tmp_path):
    """``quarantine`` taken by a file (or owned by another user): the damaged bytes are kept
    next to the journal instead, the log says where, and writing goes on."""
    write_game(tmp_path, 4)
    damaged = _damage_line(tmp_path, 2, b"{garbage")
    (tmp_path / "quarantine").write_bytes(b"not a folder")
    j = Journal(tmp_path)
    j.load()
    moved = j.catch_up()
    kept = tmp_path / "q-0001-journal.jsonl"
    assert moved == [f"{tmp_path / 'journal.jsonl'}: its bytes are kept in {kept}"]
    assert kept.read_bytes() == damaged and not j.pending
    j.append({"kind": "turn", "moves": [4]})
    assert moves(Journal(tmp_path).load()) == list(range(5))
    assert (tmp_path / "quarantine").read_bytes() == b"not a folder"


def test_every_truncation_point_keeps_exactly_the_complete_entries(tmp_path):
    """A power cut can stop the last write at any byte: each cut keeps the entries that
    were complete (plus a last line missing only its line end) and never more."""
    write_game(tmp_path / "full", 6)
    data = (tmp_path / "full" / "journal.jsonl").read_bytes()
    ends = [i + 1 for i, b in enumerate(data) if b == ord("\n")]
    for cut in range(ends[-3], len(data) + 1):
        case = tmp_path / f"cut{cut}"
        case.mkdir()
        (case / "journal.jsonl").write_bytes(data[:cut])
        loaded = Journal(case).load()
        complete = sum(1 for e in ends if e <= cut) + (cut + 1 in ends)
        assert len(loaded.entries) == complete, cut
        assert bool(loaded.problems) == (cut not in ends), cut
        assert not loaded.lost, cut
        if loaded.skipped:                           # where play goes on is said too
            assert loaded.notice.endswith(f"skipped (line {complete + 1}); resumed at turn "
                                          f"{complete - 1}"), (cut, loaded.notice)


def test_deeply_nested_json_in_a_line_is_a_skipped_line(tmp_path):
    write_game(tmp_path, 3)
    (tmp_path / "snapshot.json").unlink()
    lines = lines_of(tmp_path)
    lines.insert(2, b"[" * 100000 + b"]" * 100000)
    put_lines(tmp_path, lines)
    loaded = Journal(tmp_path).load()
    assert moves(loaded) == [0, 1, 2] and "nested too deeply" in " ".join(loaded.problems)


# ------------------------------------------- 2: zero-length and NUL-filled files
def _zero(path: Path) -> None:
    path.write_bytes(b"")


def _nul(path: Path) -> None:
    path.write_bytes(b"\x00" * max(1, path.stat().st_size))


DAMAGE = {"intact": None, "zero-length": _zero, "NUL-filled": _nul}


@pytest.mark.parametrize("journal_damage", list(DAMAGE))
@pytest.mark.parametrize("snapshot_damage", list(DAMAGE))
def test_zero_length_or_nul_files_lose_nothing_another_file_holds(
        tmp_path, journal_damage, snapshot_damage):
    write_game(tmp_path, 12)
    for name, damage in (("journal.jsonl", journal_damage), ("snapshot.json", snapshot_damage)):
        if DAMAGE[damage]:
            DAMAGE[damage](tmp_path / name)
    loaded = Journal(tmp_path).load()
    if journal_damage == "intact" or snapshot_damage == "intact":
        assert moves(loaded) == list(range(12))
        assert bool(loaded.problems) == ((journal_damage, snapshot_damage) != ("intact", "intact"))
        if loaded.problems:                          # nothing lost: no "bad entry skipped"
            assert loaded.notice == "journal repaired; resumed at turn 12"
            assert len(loaded.problems) == 1 and "bytes)" in loaded.problems[0] \
                or "empty" in loaded.problems[0]
    else:                                            # nothing left: said, never silent
        assert loaded.entries == [] and loaded.notice == "journal damaged: no game to resume"
    if loaded.problems:
        assert loaded.notice


def test_a_missing_journal_is_rewritten_whole_so_the_snapshot_is_never_the_only_copy(tmp_path):
    """The journal's directory entry lost (the snapshot intact): the next turn rewrites the
    whole game into the journal, so a later damaged snapshot still loses nothing."""
    write_game(tmp_path, 6)
    (tmp_path / "journal.jsonl").unlink()
    j = Journal(tmp_path)
    loaded = j.load()
    assert moves(loaded) == list(range(6))
    assert loaded.problems == [f"{tmp_path / 'journal.jsonl'}: missing, though the snapshot "
                               f"holds a game"]
    assert loaded.notice == "journal repaired; resumed at turn 6"
    j.append({"kind": "turn", "moves": [6]})
    j.flush_snapshot()
    (tmp_path / "snapshot.json").write_bytes(b"")
    assert moves(Journal(tmp_path).load()) == list(range(7))


@pytest.mark.parametrize("how", ["folder removed", "file emptied"])
def test_a_journal_gone_during_play_is_written_again_whole(tmp_path, how):
    """The folder removed (or the file emptied) under a running game: the next turn writes
    the whole game again, so the journal alone still holds it, and the log says so."""
    folder = tmp_path / "journal"
    j = write_game(folder, 4)
    if how == "folder removed":
        shutil.rmtree(folder)
    else:
        (folder / "journal.jsonl").write_bytes(b"")
    j.append({"kind": "turn", "moves": [4]})
    assert j.take_moved() == [f"{folder / 'journal.jsonl'}: gone or emptied while in use "
                              f"(folder removed?); written again whole from memory"]
    (folder / "snapshot.json").unlink(missing_ok=True)
    assert moves(Journal(folder).load()) == list(range(5))


def test_a_line_with_a_huge_seq_is_reported_without_walking_the_span(tmp_path):
    """A line in the old checksum format (which does not cover ``seq``) with a huge seq:
    start-up counts what is lost without a step, or a list entry, per missing seq (a seq of
    10**11 hung the start for good)."""
    write_game(tmp_path, 5)
    (tmp_path / "snapshot.json").unlink()
    body = {"kind": "turn", "moves": [77]}
    with open(tmp_path / "journal.jsonl", "ab") as fh:
        fh.write(json.dumps({"seq": 2_000_006, "crc": J._legacy_crc(body), "body": body})
                 .encode() + b"\n")
    loaded, peak = load_with_peak(tmp_path)
    assert moves(loaded) == list(range(5))
    assert loaded.lost == "turns 6-2000005 lost; resumed at turn 5"
    assert peak < 2_000_000, peak                # bytes: one list entry per seq would be 16 MB


def test_a_journal_of_the_old_design_is_rewritten_with_the_game_in_progress_only(tmp_path):
    """A journal that kept every game (older versions) is read once: the game in progress
    resumes, the file is kept in quarantine and rewritten with that game alone, so the
    next start reads one game."""
    lines, prev, seq = [], None, 0
    for game in range(3):
        for body in [{"kind": "setup", "setup": {"n": game}}] + \
                    [{"kind": "turn", "moves": [i]} for i in range(4 + game)]:
            seq += 1
            lines.append(J._line(seq, body, prev))
            prev = (seq, body)
    old = b"".join(lines)
    (tmp_path / "journal.jsonl").write_bytes(old)
    j = Journal(tmp_path)
    loaded = j.load()
    assert moves(loaded) == list(range(6)) and loaded.notice == ""
    assert j.catch_up() == [
        f"{tmp_path / 'journal.jsonl'}: holds 2 earlier games (a journal of an older version); "
        f"it is rewritten with the game in progress only",
        f"{tmp_path / 'journal.jsonl'}: its bytes are kept in "
        f"{tmp_path / 'quarantine' / 'q-0001-journal.jsonl'}"]
    assert (tmp_path / "quarantine" / "q-0001-journal.jsonl").read_bytes() == old
    assert len(lines_of(tmp_path)) == 7
    (tmp_path / "snapshot.json").unlink()
    again = Journal(tmp_path).load()
    assert moves(again) == list(range(6)) and not again.problems


def test_a_stale_snapshot_and_a_destroyed_journal_block_say_which_turns_were_lost(tmp_path):
    """The snapshot stopped at turn 15 (disk full then), then the SD card zeroed the lines
    of turns 16-19: "turns 16-20 lost; resumed at turn 15" (20 is stranded behind the gap)."""
    write_game(tmp_path, 20, snapshot_until=15)
    lines = lines_of(tmp_path)
    for k in range(16, 20):
        lines[k] = b"\x00" * len(lines[k])
    put_lines(tmp_path, lines)
    loaded = Journal(tmp_path).load()
    assert moves(loaded) == list(range(15))
    assert loaded.lost == "turns 16-20 lost; resumed at turn 15"
    assert loaded.notice.startswith("turns 16-20 lost; resumed at turn 15")


@pytest.mark.parametrize("second", ["journal zero-length", "snapshot NUL-filled"])
def test_damage_after_an_earlier_repair_still_loses_nothing(tmp_path, second):
    write_game(tmp_path, 8)
    lines = lines_of(tmp_path)
    lines[3] = b"\x00" * len(lines[3])
    put_lines(tmp_path, lines)
    j = Journal(tmp_path)
    j.load()
    j.catch_up()                                         # the first repair
    j.append({"kind": "turn", "moves": [8]})
    j.flush_snapshot()
    if second == "journal zero-length":
        _zero(tmp_path / "journal.jsonl")
    else:
        _nul(tmp_path / "snapshot.json")
    loaded = Journal(tmp_path).load()
    assert moves(loaded) == list(range(9)) and loaded.problems and loaded.notice


def test_a_repair_writes_the_snapshot_before_it_replaces_the_journal(tmp_path, monkeypatch):
    """At every moment of a repair one complete copy is on disk: the snapshot comes first."""
    write_game(tmp_path, 4)
    _nul(tmp_path / "snapshot.json")
    order = []
    real = J.write_durably
    monkeypatch.setattr(J, "write_durably", lambda path, data, *mode: (
        order.append(path.name), real(path, data, *mode)))
    j = Journal(tmp_path)
    j.load()
    j.catch_up()
    assert order == ["snapshot.json", "journal.jsonl"]


# --------------------------------------------- 3: errors at the OS call boundary
def patch_os(monkeypatch, fake) -> None:
    """``os`` as the journal and the durable-write helper see it replaced by ``fake``."""
    from firmware_py import disk
    monkeypatch.setattr(J, "os", fake)
    monkeypatch.setattr(disk, "os", fake)


class FailingOs:
    """``os`` as the journal sees it, with the ``call`` (or calls) failing with ``code``."""

    def __init__(self, code: int, call: str | tuple[str, ...] = "fsync"):
        self.code, self.failing = code, True
        self.calls = (call,) if isinstance(call, str) else call

    def __getattr__(self, name):
        real = getattr(os, name)
        if name not in self.calls:
            return real

        def failing(*args):
            if self.failing:
                raise OSError(self.code, os.strerror(self.code))
            return real(*args)
        return failing


@pytest.mark.parametrize("code,reason", [(errno.EIO, "disk error"), (errno.ENOSPC, "disk full"),
                                         (errno.EROFS, "read-only")])
def test_a_refused_write_keeps_the_entry_and_catches_up_later(tmp_path, monkeypatch, code, reason):
    j = write_game(tmp_path, 2)
    failing = FailingOs(code)
    patch_os(monkeypatch, failing)
    with pytest.raises(JournalError) as caught:
        j.append({"kind": "turn", "moves": [2]})
    assert caught.value.reason == reason
    assert caught.value.notice == f"not saving: {reason} ({tmp_path})"
    with pytest.raises(JournalError):
        j.catch_up()
    assert j.pending and moves(Journal(tmp_path).load()) in ([0, 1], [0, 1, 2])
    failing.failing = False
    j.catch_up()
    assert not j.pending and moves(Journal(tmp_path).load()) == [0, 1, 2]


@pytest.mark.parametrize("call", ["fsync", "replace"])
def test_a_snapshot_that_cannot_be_written_leaves_no_temporary_file(tmp_path, monkeypatch, call):
    j = write_game(tmp_path, 2)
    before = (tmp_path / "snapshot.json").read_bytes()
    j.append({"kind": "turn", "moves": [2]})
    patch_os(monkeypatch, FailingOs(errno.ENOSPC, call))
    with pytest.raises(JournalError):
        j.flush_snapshot()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["journal.jsonl", "snapshot.json"]
    assert (tmp_path / "snapshot.json").read_bytes() == before


def test_temporary_files_left_by_a_crash_are_removed_at_load(tmp_path):
    write_game(tmp_path, 1)
    for name in J.TEMPORARY:
        (tmp_path / name).write_bytes(b"half")
    Journal(tmp_path).load()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["journal.jsonl", "snapshot.json"]


def test_writable_problem_names_the_folder_and_the_reason(tmp_path, monkeypatch):
    assert J.writable_problem(tmp_path / "new") is None and (tmp_path / "new").is_dir()
    assert list((tmp_path / "new").iterdir()) == []
    patch_os(monkeypatch, FailingOs(errno.EROFS, "open"))
    assert J.writable_problem(tmp_path) == f"{tmp_path} is not writable (read-only: " \
                                           f"{os.strerror(errno.EROFS)})"


def test_a_repair_by_the_next_append_quarantines_first(tmp_path, monkeypatch):
    """Damage found while the disk refused: the first write that works still moves the
    damaged file aside before it rewrites the journal."""
    write_game(tmp_path, 4)
    lines = lines_of(tmp_path)
    lines[2] = b"{garbage"
    put_lines(tmp_path, lines)
    damaged = (tmp_path / "journal.jsonl").read_bytes()
    j = Journal(tmp_path)
    j.load()
    failing = FailingOs(errno.EROFS, ("fsync", "link"))
    patch_os(monkeypatch, failing)
    with pytest.raises(JournalError):
        j.catch_up()
    failing.failing = False
    j.append({"kind": "turn", "moves": [4]})
    assert (tmp_path / "quarantine" / "q-0001-journal.jsonl").read_bytes() == damaged
    assert j.take_moved() and moves(Journal(tmp_path).load()) == list(range(5))


def test_the_quarantine_keeps_the_newest_files_within_its_caps(tmp_path, monkeypatch):
    """Damage found again and again (a failing SD card) never fills the disk with copies:
    the quarantine keeps the newest files, by count and by size."""
    quarantine = tmp_path / "quarantine"
    quarantine.mkdir()
    for n in range(1, 41):
        (quarantine / f"q-{n:04d}-journal.jsonl").write_bytes(b"x" * 1000)
    write_game(tmp_path, 3)
    with open(tmp_path / "journal.jsonl", "ab") as fh:
        fh.write(b"garbage\n")
    j = Journal(tmp_path)
    j.load()
    said = j.catch_up()
    names = sorted(p.name for p in quarantine.iterdir())
    assert len(names) == J.QUARANTINE_FILES and names[-1] == "q-0041-journal.jsonl"
    assert names[0] == f"q-{41 - J.QUARANTINE_FILES + 1:04d}-journal.jsonl"
    assert any("removed the 9 oldest kept files" in line for line in said), said
    monkeypatch.setattr(J, "QUARANTINE_BYTES", 2500)          # by size: the newest stay
    with open(tmp_path / "journal.jsonl", "ab") as fh:
        fh.write(b"garbage\n")
    j = Journal(tmp_path)
    j.load()
    j.catch_up()
    names = sorted(p.name for p in quarantine.iterdir())
    assert names[-1] == "q-0042-journal.jsonl" and len(names) <= 3
    assert sum(p.stat().st_size for p in quarantine.iterdir()) - \
        (quarantine / names[-1]).stat().st_size <= 2500


def load_with_peak(folder: Path):
    """(what :meth:`Journal.load` found in ``folder``, the peak of memory it allocated, bytes)."""
    import tracemalloc
    tracemalloc.start()
    try:
        loaded = Journal(folder).load()
        return loaded, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def old_design_journal(folder: Path, games: int) -> int:
    """Write a journal that kept every game (older versions: a setup and 30 turns a game) in
    ``folder`` (made if missing); returns its size in bytes."""
    folder.mkdir(parents=True, exist_ok=True)
    prev, seq = None, 0
    with open(folder / J.JOURNAL, "wb") as fh:
        for game in range(games):
            for body in [{"kind": "setup", "setup": {"n": game}}] + \
                        [{"kind": "turn", "moves": [i]} for i in range(30)]:
                seq += 1
                fh.write(J._line(seq, body, prev))
                prev = (seq, body)
    return (folder / J.JOURNAL).stat().st_size


def test_a_journal_of_the_old_design_is_read_streamed(tmp_path):
    """The one-time import of an older version's journal (every game in one file) holds one
    game in memory, not the file: 1,500 games of 31 entries."""
    size = old_design_journal(tmp_path, 1500)
    loaded, peak = load_with_peak(tmp_path)
    assert loaded.entries[0] == {"kind": "setup", "setup": {"n": 1499}} and len(loaded.entries) == 31
    assert size > 5_000_000 and peak < 1_000_000, (size, peak)


def test_an_endless_line_is_skipped_without_holding_it(tmp_path):
    """A line of 3 MB (garbage, or NUL bytes from a failing card) is damage: skipped, not
    held in memory; the game resumes from the lines around it."""
    write_game(tmp_path, 3)
    (tmp_path / "snapshot.json").unlink()
    with open(tmp_path / "journal.jsonl", "ab") as fh:
        fh.write(b"x" * 3_000_000 + b"\n")
    loaded = Journal(tmp_path).load()
    assert moves(loaded) == list(range(3))
    assert any("line too long; skipped" in p for p in loaded.problems), loaded.problems
    (tmp_path / "journal.jsonl").write_bytes(b"\0" * 3_000_000)
    loaded = Journal(tmp_path).load()
    assert any("unusable (NUL-filled, 3000000 bytes)" in p for p in loaded.problems), loaded.problems

# ------------------------------------------------------------------ both files damaged
def _rot_snapshot(folder: Path) -> None:
    """Bit rot inside the snapshot's entries: its checksum no longer matches."""
    path = folder / "snapshot.json"
    path.write_bytes(path.read_bytes().replace(b'"moves"', b'"movez"', 1))


def test_a_damaged_snapshot_and_a_shortened_journal_say_lost_not_repaired(tmp_path):
    """The snapshot (bit rot) still shows it was written at seq 13 (setup + 12 turns); the
    journal lost its last three lines: turns 10-12 are lost, and the OLED says so."""
    write_game(tmp_path, 12)
    _rot_snapshot(tmp_path)
    put_lines(tmp_path, lines_of(tmp_path)[:-3])
    loaded = Journal(tmp_path).load()
    assert moves(loaded) == list(range(9))
    assert loaded.lost == "turns 10-12 lost; resumed at turn 9"
    assert loaded.notice == "turns 10-12 lost; resumed at turn 9"
    assert "repaired" not in loaded.notice


def test_damaged_last_lines_of_both_files_say_lost(tmp_path):
    """The last two journal lines rotted (they still start as entries) and the snapshot is
    empty: the two turns are lost, said as such, with the lines skipped."""
    write_game(tmp_path, 12)
    (tmp_path / "snapshot.json").write_bytes(b"")
    lines = lines_of(tmp_path)
    put_lines(tmp_path, lines[:-2] + [line.replace(b'"moves"', b'"movez"') for line in lines[-2:]])
    loaded = Journal(tmp_path).load()
    assert moves(loaded) == list(range(10))
    assert loaded.notice.startswith("turns 11-12 lost; resumed at turn 10; journal: 2 bad")


def test_garbage_after_the_last_entry_and_a_torn_append_are_not_lost_turns(tmp_path):
    """A line that never was an entry (garbage) and an append cut short (no line end, never
    shown) lose nothing: skipped, no "lost"."""
    write_game(tmp_path, 6)
    (tmp_path / "snapshot.json").write_bytes(b"")
    with open(tmp_path / "journal.jsonl", "ab") as fh:
        fh.write(b"\xff\xfe garbage\n" + b'{"seq":8,"crc":1,"bo')
    loaded = Journal(tmp_path).load()
    assert moves(loaded) == list(range(6)) and not loaded.lost
    assert "lost" not in loaded.notice and "2 bad entries skipped" in loaded.notice
