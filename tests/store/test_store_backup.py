"""`restore` is bounded and all-or-nothing: hostile tar headers, caps, records that lie,
names.json and backup.json checked like every other input, a failure half-way, names merged.

Tar files are built by hand here where :mod:`tarfile` would refuse to write what an
attacker can (a negative size, a pax header claiming a gigabyte).
"""
from __future__ import annotations

import dataclasses
import gzip
import json
import tracemalloc

import pytest

from firmware_py.cli import main
from firmware_py.rules import dumps_record, parse_record
from firmware_py.store import History
from firmware_py.store import backup as B
from firmware_py.store.backup import BackupError, backup, finish_pending, restore
from firmware_py.store.tar_reader import Caps

from test_faults_rig import EXPRESS_RECORD, GOLDEN_RECORDS

GAMES = {f"20261101-19000{i}-aaaaa{i}": dataclasses.replace(r, players=(f"P{i}", f"Q{i}"))
         for i, r in enumerate([GOLDEN_RECORDS[0], GOLDEN_RECORDS[1], EXPRESS_RECORD])}


def header(name: str, size: bytes, kind: bytes = b"0") -> bytes:
    """A ustar header block with a raw 12-byte ``size`` field and a correct checksum."""
    block = bytearray(512)
    block[0:len(name)] = name.encode()
    block[100:108] = b"0000600\0"
    block[124:136] = size
    block[156:157] = kind
    block[257:263] = b"ustar\0"
    block[263:265] = b"00"
    block[148:156] = b" " * 8
    block[148:156] = b"%06o\0 " % sum(block)
    return bytes(block)


def octal(n: int) -> bytes:
    return b"%011o\0" % n


def member(name: str, data: bytes) -> bytes:
    return header(name, octal(len(data))) + data + b"\0" * (-len(data) % 512)


def gz(*parts: bytes) -> bytes:
    return gzip.compress(b"".join(parts) + b"\0" * 1024)


def manifest(games: int, **extra) -> bytes:
    return json.dumps({"format": B.FORMAT, "games": games, "created": "2026-12-01T19:00:00+01:00",
                       **extra}).encode()


def record_member(game_id: str, record) -> bytes:
    return member(f"records/{game_id}.json", dumps_record(record).encode())


def a_backup(tmp_path, *parts, name="backup.tar.gz"):
    path = tmp_path / name
    path.write_bytes(gz(*parts))
    return path


@pytest.fixture
def store(tmp_path):
    """A store with one game (not in the backups below) and one name."""
    folder = tmp_path / "store"
    History(folder).file("20261201-190000-000000", GOLDEN_RECORDS[3])
    (folder / "names.json").write_text('{"names": ["Carl"]}')
    return folder


def state(folder):
    """Everything in the store folder, bytes by path (the index aside)."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file() and not p.name.startswith("history.sqlite3")}


def refused(folder, source, match):
    before = state(folder)
    with pytest.raises(BackupError, match=match):
        restore(folder, source)
    assert state(folder) == before, "a refused restore changed the store"
    assert not list(folder.glob(".restore-*")), "a staging folder was left"


def test_a_negative_member_size_is_refused_at_once(store, tmp_path):
    """The header CVE-2025-8194 is about: Python's tarfile loops forever on it (3.11.7)."""
    negative = b"\xff" * 12                           # base-256: -1
    source = a_backup(tmp_path, member("backup.json", manifest(1)),
                      header("records/x.json", negative), b"\0" * 1024)
    refused(store, source, "negative size")


def test_a_huge_pax_header_is_refused_before_it_is_read(store, tmp_path):
    source = a_backup(tmp_path, header("././@PaxHeader", octal(1 << 30), b"x"), b"1 x\n")
    refused(store, source, r"extended \(pax\) header of 1073741824 bytes passes the cap of 4096")


def test_a_chain_of_pax_headers_counts_towards_the_total(store, tmp_path, monkeypatch):
    """Pax headers with no member after them, each under the header cap: a gzip stream of
    them unpacks about 1000-fold (2 MB of file, 1 GB of headers, seconds of CPU; minutes
    on a Pi), so their bytes count towards the cap on the total like a member's."""
    monkeypatch.setattr(B, "CAPS", Caps(members=2, member=4000, total=6000, header=512))
    pax = header("././@PaxHeader", octal(500), b"x") + b"500 comment=" + b"a" * 487 + b"\n"
    source = a_backup(tmp_path, pax + b"\0" * 12, *[pax + b"\0" * 12] * 20)
    refused(store, source, r"more than 6000 bytes \(the cap on the total\)")


def test_links_and_devices_are_refused(store, tmp_path):
    for kind in (b"1", b"2", b"3", b"L"):
        source = a_backup(tmp_path, member("backup.json", manifest(0)),
                          header("records/x.json", octal(0), kind))
        refused(store, source, "not a plain file")


def test_a_damaged_header_or_gzip_stream_is_refused(store, tmp_path):
    bad = bytearray(member("backup.json", manifest(0)))
    bad[0] ^= 1                                       # the checksum no longer matches
    refused(store, a_backup(tmp_path, bytes(bad)), "checksum mismatch")
    whole = gz(member("backup.json", manifest(0)))
    (tmp_path / "cut.tar.gz").write_bytes(whole[:len(whole) // 2])
    refused(store, tmp_path / "cut.tar.gz", "damaged|cut short")


@pytest.mark.parametrize("cap,parts,match", [
    ("members", 3, "more than 2 members"),
    ("member", 1, r"over the cap of 4000 bytes for one member"),
    ("total", 2, r"more than 6000 bytes \(the cap on the total\)"),
])
def test_every_cap_refuses_with_a_message_naming_it(store, tmp_path, monkeypatch, cap, parts, match):
    monkeypatch.setattr(B, "CAPS", Caps(members=2, member=4000, total=6000, header=512))
    padding = {"members": 0, "member": 3000, "total": 1400}[cap]
    padded = dumps_record(GAMES["20261101-190000-aaaaa0"]).encode() + b" " * padding
    members = [member(f"records/g{i}.json", padded) for i in range(parts)]
    refused(store, a_backup(tmp_path, *members), match)


def test_a_record_whose_result_was_edited_is_refused(store, tmp_path):
    lying = dataclasses.replace(GAMES["20261101-190000-aaaaa0"], result={"scores": [50, -3],
                                                                        "winner": 0})
    source = a_backup(tmp_path, member("backup.json", manifest(1)),
                      record_member("20261101-190000-aaaaa0", lying))
    refused(store, source, "disagrees with its replay")


def test_names_json_is_checked_like_every_other_input(store, tmp_path):
    nested = b'{"names": ' + b"[" * 5000 + b"]" * 5000 + b"}"
    for data, match in ((nested, "names.json is not usable JSON"),
                        (b'{"names": ["Ann\\u001b[2J"]}', "cannot be shown"),
                        (b'{"names": "Anna"}', "must be"),
                        (b'{"names": ["Anna"], "pin": 1}', "must be")):
        source = a_backup(tmp_path, member("backup.json", manifest(0)), member("names.json", data))
        refused(store, source, match)


def test_backup_json_is_checked(store, tmp_path):
    for data, match in ((manifest(0, extra=1), "unknown key"),
                        (manifest(0).replace(b'"games": 0', b'"games": "0"'), "whole number"),
                        (b"[" * 5000, "is not JSON"),
                        (json.dumps({"format": "zip"}).encode(), "is not format")):
        refused(store, a_backup(tmp_path, member("backup.json", data)), match)
    refused(store, a_backup(tmp_path, record_member("20261101-190000-aaaaa0",
                                                    GAMES["20261101-190000-aaaaa0"])),
            "no backup.json")


def test_a_failure_half_way_changes_nothing(store, tmp_path):
    """Two good games, then a bad one as the last member: nothing of the first two is in the
    store, the names are unchanged, no staging folder is left."""
    (gid0, r0), (gid1, r1), _ = GAMES.items()
    broken = dataclasses.replace(r1, moves=r1.moves[:5] + ({"buy": 999},))
    source = a_backup(tmp_path, member("backup.json", manifest(3)), record_member(gid0, r0),
                      record_member(gid1, r1), member("names.json", b'{"names": ["Anna"]}'),
                      record_member("20261101-190009-bbbbbb", broken))
    refused(store, source, "20261101-190009-bbbbbb.json: not a valid game record")
    assert main(["restore", "--store", str(store), str(source)]) == 2


def test_names_added_since_the_backup_are_merged_and_said(store, tmp_path, capsys):
    (gid0, r0), (gid1, r1), _ = GAMES.items()
    source = a_backup(tmp_path, member("backup.json", manifest(2)), record_member(gid0, r0),
                      record_member(gid1, r1), member("names.json", b'{"names": ["Anna", "carl", "Ben"]}'))
    assert main(["restore", "--store", str(store), str(source)]) == 0
    said = capsys.readouterr().out
    assert json.loads((store / "names.json").read_text()) == {"names": ["Carl", "Anna", "Ben"]}
    assert "restored 2 games" in said and "player names: added Anna, Ben" in said
    assert "the history holds 3 games" in said
    source2 = a_backup(tmp_path, member("backup.json", manifest(0)),
                       member("names.json", b'{"names": ["Anna"]}'), name="b2.tar.gz")
    (store / "names.json").write_text('{"names": ["Anna", "Dora"]}')
    assert main(["restore", "--store", str(store), str(source2)]) == 0
    assert "kept 1 added since the backup (Dora)" in capsys.readouterr().out
    assert json.loads((store / "names.json").read_text()) == {"names": ["Anna", "Dora"]}


def test_a_store_names_file_that_cannot_be_merged_refuses_the_restore(store, tmp_path):
    """The store's own names.json edited by hand into something the box refuses (41 names):
    the restore stops before changing anything and says which file, instead of replacing
    those names with the backup's without a word."""
    (gid0, r0), *_ = GAMES.items()
    hand_edited = json.dumps({"names": [f"Player {i}" for i in range(41)]})
    (store / "names.json").write_text(hand_edited)
    source = a_backup(tmp_path, member("backup.json", manifest(1)), record_member(gid0, r0),
                      member("names.json", b'{"names": ["Anna"]}'))
    refused(store, source, r"store's names cannot be merged.*names\.json: 41 names")
    assert (store / "names.json").read_text() == hand_edited


def test_a_game_the_store_holds_keeps_the_stores_copy(store, tmp_path):
    gid, record = next(iter(GAMES.items()))
    History(store).file(gid, dataclasses.replace(record, players=("Renamed", "Since")))
    source = a_backup(tmp_path, member("backup.json", manifest(1)), record_member(gid, record))
    done = restore(store, source)
    assert (done.games, done.kept) == (0, 1)
    assert parse_record((store / "records" / f"{gid}.json").read_text()).players == ("Renamed", "Since")


def test_a_round_trip_through_backup_keeps_every_game(store, tmp_path):
    for gid, record in GAMES.items():
        History(store).file(gid, record)
    target = tmp_path / "all.tar.gz"
    assert backup(store, target) == 4
    fresh = tmp_path / "fresh"
    done = restore(fresh, target)
    assert (done.games, done.indexed, done.added) == (4, 4, ["Carl"])
    assert state(fresh)["records/20261101-190002-aaaaa2.json"] == \
        state(store)["records/20261101-190002-aaaaa2.json"]


def test_a_restore_cut_short_is_finished_or_undone(store, tmp_path):
    gid, record = next(iter(GAMES.items()))
    staged = store / ".restore-1"
    (staged / "records").mkdir(parents=True)
    (staged / "records" / f"{gid}.json").write_text(dumps_record(record))
    before = {k: v for k, v in state(store).items() if not k.startswith(".restore")}
    assert "undone" in finish_pending(store)[0]                 # not marked complete
    assert state(store) == before and not staged.exists()
    (staged / "records").mkdir(parents=True)
    (staged / "records" / f"{gid}.json").write_text(dumps_record(record))
    (staged / "ready").write_bytes(b"")
    assert "completed" in finish_pending(store)[0]
    assert (store / "records" / f"{gid}.json").exists() and not staged.exists()
    with History(store).index() as index:
        assert index.has(gid)


def test_padded_records_are_bounded_in_memory_and_on_disk(store, tmp_path):
    """A small backup of records padded with spaces (they compress to almost nothing): refused
    by the cap on one member, or stored without the padding; memory stays small either way."""
    padded = dumps_record(GAMES["20261101-190000-aaaaa0"]).encode() + b" " * 60_000
    members = [member(f"records/20261101-1900{i:02d}-cccccc.json", padded) for i in range(40)]
    source = a_backup(tmp_path, member("backup.json", manifest(40)), *members)
    assert source.stat().st_size < 100_000
    tracemalloc.start()
    try:
        done = restore(store, source)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert done.games == 40
    assert peak < 8 * 1024 * 1024, f"restore peaked at {peak} bytes"
    assert sum(p.stat().st_size for p in (store / "records").iterdir()) < 40 * 4000


def test_a_disk_refusing_a_write_half_way_changes_nothing(store, tmp_path, monkeypatch):
    """The disk fills up while the backup's third game is written: the store is unchanged
    (the games are staged first and swapped in only once all are on disk)."""
    import errno
    import os
    writes = []
    real = B.write_durably

    def filling(path, data, *args):
        writes.append(path)
        if len(writes) == 3:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real(path, data, *args)
    monkeypatch.setattr(B, "write_durably", filling)
    source = a_backup(tmp_path, member("backup.json", manifest(3)),
                      *(record_member(gid, r) for gid, r in GAMES.items()))
    before = state(store)
    with pytest.raises(OSError):
        restore(store, source)
    assert len(writes) == 3 and state(store) == before
    assert not list(store.glob(".restore-*"))


def test_the_service_finishes_a_restore_cut_short_at_its_start(store, tmp_path):
    """A power cut after the staged games were marked complete: the service's start swaps
    them in, and its index thread finds their rows missing and rebuilds the index."""
    from test_faults_rig import service_for
    gid, record = next(iter(GAMES.items()))
    staged = store / ".restore-2"
    (staged / "records").mkdir(parents=True)
    (staged / "records" / f"{gid}.json").write_text(dumps_record(record))
    (staged / "ready").write_bytes(b"")
    service = service_for(store, EXPRESS_RECORD)
    try:
        assert service.keeper.indexer.wait_idle(60)
    finally:
        service.stop()
    assert not staged.exists() and (store / "records" / f"{gid}.json").exists()
    with History(store).index() as index:
        assert index.has(gid) and index.count() == 2


@pytest.mark.parametrize("fmt", ["gnu", "posix", "ustar"])
def test_a_backup_made_by_hand_with_tar_is_restored(store, tmp_path, fmt):
    """``tar czf`` of a folder holding backup.json and records/ (folder entries, and pax
    headers in the posix format) restores like the companion's own backups."""
    import subprocess
    made = tmp_path / "made"
    (made / "records").mkdir(parents=True)
    for gid, record in GAMES.items():
        (made / "records" / f"{gid}.json").write_text(dumps_record(record))
    (made / "backup.json").write_bytes(manifest(len(GAMES)))
    subprocess.run(["tar", "czf", str(tmp_path / "made.tar.gz"), f"--format={fmt}", "-C", str(made),
                    "backup.json", "records"], check=True)
    done = restore(store, tmp_path / "made.tar.gz")
    assert (done.games, done.indexed) == (3, 4)


def test_a_restore_while_another_process_locks_the_index_restores_and_says_so(store, tmp_path,
                                                                               capsys):
    """The games are in once swapped: a locked index is said, not "run 'restore' again"."""
    from test_store_indexer import LockHolder
    source = tmp_path / "b.tar.gz"
    B.backup(store, source)
    target = tmp_path / "other"
    History(target).file("20261101-190009-ccccc9", GAMES["20261101-190000-aaaaa0"])
    holder = LockHolder(History(target).db_path)
    try:
        assert main(["restore", str(source), "--store", str(target)]) == 0
    finally:
        holder.release()
    said = capsys.readouterr()
    assert "restored 1 game into" in said.out and "not rebuilt" in said.out
    assert "again" not in said.err
    assert len(list((target / "records").glob("*.json"))) == 2


def test_a_restore_in_progress_is_left_alone_by_another_start(store, tmp_path, monkeypatch):
    """The service starting (or a second ``restore``) while a restore stages its games finds
    a staging folder that is not marked complete: it is in progress, not cut short, and
    removing it would leave the running restore to swap in part of the backup."""
    source = tmp_path / "b.tar.gz"
    for gid, record in GAMES.items():
        History(store).file(gid, record)
    B.backup(store, source)
    target = tmp_path / "other"
    staged = B._stage_record
    said = []

    def another_start_meanwhile(folder, staging, name, record, done):
        said.extend(finish_pending(folder, rebuild=False))   # as the service's start does
        staged(folder, staging, name, record, done)

    monkeypatch.setattr(B, "_stage_record", another_start_meanwhile)
    done = restore(target, source)
    assert said == [] and done.games == len(GAMES) + 1
    assert len(list((target / "records").glob("*.json"))) == len(GAMES) + 1
