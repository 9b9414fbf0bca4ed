"""A journal line (or snapshot) nested thousands of levels deep is a damaged
entry like any other: skipped and reported, never a RecursionError at start-up."""
from __future__ import annotations

import json

from firmware_py.companion.journal import Journal


def _entries(folder, count: int) -> list[dict]:
    journal = Journal(folder)
    journal.load()
    bodies = [{"kind": "setup", "setup": {"game": "patchwork"}}] + \
        [{"kind": "turn", "moves": ["advance"]} for _ in range(count - 1)]
    for body in bodies:
        journal.append(body)
    return bodies


def test_a_deeply_nested_journal_line_is_skipped_and_reported(tmp_path):
    bodies = _entries(tmp_path, 3)
    deep = "[" * 100000 + "]" * 100000
    with open(tmp_path / "journal.jsonl", "a") as fh:
        fh.write(json.dumps({"seq": 4, "crc": 0, "body": {"kind": "turn"}})[:-1]
                 + ', "x": ' + deep + "}\n")
    loaded = Journal(tmp_path).load()                   # must not raise
    assert loaded.entries == bodies
    assert loaded.problems and any("line 4" in p for p in loaded.problems), loaded.problems


def test_a_deeply_nested_snapshot_is_reported_and_the_journal_used(tmp_path):
    bodies = _entries(tmp_path, 2)
    (tmp_path / "snapshot.json").write_text('{"seq": 9, "entries": ' + "[" * 50000 + "]" * 50000
                                            + "}")
    loaded = Journal(tmp_path).load()                   # must not raise
    assert loaded.entries == bodies
    assert any("snapshot" in p for p in loaded.problems), loaded.problems
