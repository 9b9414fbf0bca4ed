"""The one durable-write helper: unique temporary files, clean-up on errors."""
from __future__ import annotations

import os
import threading

import pytest

from firmware_py import disk


def test_write_replaces_the_file_and_leaves_no_temporary(tmp_path):
    target = tmp_path / "record.json"
    target.write_bytes(b"old")
    disk.write_durably(target, b"new content")
    assert target.read_bytes() == b"new content"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["record.json"]


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path, monkeypatch):
    target = tmp_path / "names.json"
    target.write_bytes(b"old")

    def broken_fsync(fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", broken_fsync)
    with pytest.raises(OSError):
        disk.write_durably(target, b"new")
    assert target.read_bytes() == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["names.json"]


def test_two_writers_in_one_folder_never_share_a_temporary_file(tmp_path):
    """Many threads write different files of one folder at once: each file holds its own bytes."""
    errors = []

    def writer(i):
        try:
            for round_ in range(20):
                disk.write_durably(tmp_path / f"game-{i}.json", f"{i}:{round_}".encode() * 100)
        except Exception as exc:  # pragma: no cover - shown in the assertion
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    for i in range(8):
        assert (tmp_path / f"game-{i}.json").read_bytes() == f"{i}:19".encode() * 100
    assert len(list(tmp_path.iterdir())) == 8


def test_permissions_are_set(tmp_path):
    target = tmp_path / "secret"
    disk.write_durably(target, b"x", mode=0o600)
    assert (target.stat().st_mode & 0o777) == 0o600


def test_a_symlink_is_replaced_in_one_step_and_leaves_no_temporary(tmp_path):
    link = tmp_path / "ttyPATCHWORK"
    disk.replace_symlink(link, "/dev/pts/7")
    disk.replace_symlink(link, "/dev/pts/9", durable=False)
    assert os.readlink(link) == "/dev/pts/9"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ttyPATCHWORK"]
    (tmp_path / "folder").mkdir()
    with pytest.raises(OSError):
        disk.replace_symlink(tmp_path / "folder", "/dev/pts/9")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["folder", "ttyPATCHWORK"]


def test_a_temporary_file_removed_by_a_start_up_clean_up_is_written_again(tmp_path, monkeypatch):
    """Another process starting up removes leftover temporary files (remove_temporaries) at
    the instant this writer's is in flight: the write is made again instead of failing."""
    target = tmp_path / "names.json"
    target.write_bytes(b"old")
    real_replace = os.replace
    calls = []

    def clean_up_first(src, dst):
        calls.append(src)
        if len(calls) == 1:
            assert disk.remove_temporaries(tmp_path)          # the other process's start
        return real_replace(src, dst)

    monkeypatch.setattr(os, "replace", clean_up_first)
    disk.write_durably(target, b"new names")
    assert target.read_bytes() == b"new names" and len(calls) == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["names.json"]
