"""The journal: durable appends, snapshots, and recovery from torn or damaged files."""
from __future__ import annotations

import json

from firmware_py.companion import journal as J
from firmware_py.companion.journal import Journal, JournalError

SETUP = {"kind": "setup", "setup": {"game": "patchwork"}}


def _write_game(folder, turns):
    j = Journal(folder)
    j.load()
    j.append(SETUP)
    for i in range(turns):
        j.append({"kind": "turn", "moves": [i]})
    return j


def test_round_trip_and_undo_folding(tmp_path):
    j = _write_game(tmp_path, 3)
    j.append({"kind": "undo"})
    loaded = Journal(tmp_path).load()
    assert [e.get("moves") for e in loaded.entries] == [None, [0], [1]]
    assert loaded.seq == 5 and not loaded.problems


def test_snapshot_then_journal_tail(tmp_path):
    _write_game(tmp_path, J.SNAPSHOT_EVERY + 3)
    assert (tmp_path / "snapshot.json").exists()
    loaded = Journal(tmp_path).load()
    assert [e["moves"] for e in loaded.entries[1:]] == [[i] for i in range(J.SNAPSHOT_EVERY + 3)]


def test_torn_last_line_is_ignored_and_repaired(tmp_path):
    _write_game(tmp_path, 4)
    path = tmp_path / "journal.jsonl"
    data = path.read_bytes()
    path.write_bytes(data[:-7])               # power cut in the middle of the last write
    j = Journal(tmp_path)
    loaded = j.load()
    assert [e["moves"] for e in loaded.entries[1:]] == [[0], [1], [2]]
    assert loaded.problems and "line 5" in loaded.problems[0]
    j.append({"kind": "turn", "moves": ["next"]})
    again = Journal(tmp_path).load()
    assert [e["moves"] for e in again.entries[1:]] == [[0], [1], [2], ["next"]]
    assert not again.problems


def test_garbage_appended_and_bit_rot(tmp_path):
    _write_game(tmp_path, 2)
    path = tmp_path / "journal.jsonl"
    with open(path, "ab") as fh:
        fh.write(b"\x00\x00\x00garbage\n")
    assert len(Journal(tmp_path).load().entries) == 3
    lines = path.read_bytes().split(b"\n")
    lines[1] = lines[1].replace(b'"moves":[0]', b'"moves":[9]')   # a changed value: crc fails
    path.write_bytes(b"\n".join(lines))
    loaded = Journal(tmp_path).load()
    assert len(loaded.entries) == 1 and "checksum" in loaded.problems[0]


def test_corrupt_snapshot_falls_back_to_journal(tmp_path):
    _write_game(tmp_path, J.SNAPSHOT_EVERY + 1)
    (tmp_path / "snapshot.json").write_bytes(b"\x00" * 40)        # SD card after a power cut
    loaded = Journal(tmp_path).load()
    assert "snapshot" in loaded.problems[0]
    # the journal alone still holds the lines after the last snapshot only
    assert loaded.entries[-1]["moves"] == [J.SNAPSHOT_EVERY]


def test_disk_full_raises_journal_error_and_keeps_entry(tmp_path):
    j = _write_game(tmp_path, 1)
    (tmp_path / "journal.jsonl").unlink()
    (tmp_path / "journal.jsonl").symlink_to("/dev/full")
    try:
        j.append({"kind": "turn", "moves": ["lost?"]})
    except JournalError as exc:
        assert "cannot write" in str(exc)
    else:
        raise AssertionError("a write to a full disk must raise JournalError")
    (tmp_path / "journal.jsonl").unlink()
    j.append({"kind": "turn", "moves": ["after"]})   # disk back: catches up via a snapshot
    loaded = Journal(tmp_path).load()
    assert [e.get("moves") for e in loaded.entries] == [None, [0], ["lost?"], ["after"]]


def test_lines_carry_seq_and_crc(tmp_path):
    _write_game(tmp_path, 1)
    first = json.loads((tmp_path / "journal.jsonl").read_text().splitlines()[0])
    assert set(first) == {"seq", "crc", "body"} and first["seq"] == 1
