"""The history store: records (the truth) and their SQLite index, and `history --rebuild`."""
from __future__ import annotations

import dataclasses
import json
import sqlite3
from datetime import datetime, timedelta, timezone

import pytest

from firmware_py.cli import main
from firmware_py.rules import parse_record
from firmware_py.store import History, new_game_id
from firmware_py.store.index import GAME_COLUMNS, PLAYER_COLUMNS

from test_faults_rig import EXPRESS_RECORD, GOLDEN_RECORDS

PATCHWORK = dataclasses.replace(GOLDEN_RECORDS[3], meta={
    "started": "2026-12-01T19:04:00+01:00", "ended": "2026-12-01T19:41:30+01:00", "app": "test"})
EXPRESS = dataclasses.replace(EXPRESS_RECORD, meta={"started": "2026-12-02T10:00:00+00:00",
                                                    "ended": "2026-12-02T10:20:00+00:00",
                                                    "duration_s": 1111})


def test_a_filed_game_is_one_record_and_one_row_with_exact_figures(tmp_path):
    history = History(tmp_path)
    path = history.file("g1", PATCHWORK)
    assert path == tmp_path / "records" / "g1.json"
    assert parse_record(path.read_text()) == PATCHWORK             # the record, as given
    with history.index() as index:
        (row,) = index.games()
    assert {k: row[k] for k in ("id", "record", "started", "ended", "duration_s", "game",
                                "time_board", "layout", "finished", "moves", "winner",
                                "tie_break", "app")} == {
        "id": "g1", "record": "g1.json", "started": "2026-12-01T19:04:00+01:00",
        "ended": "2026-12-01T19:41:30+01:00", "duration_s": 2250, "game": "patchwork",
        "time_board": "revised", "layout": "dealt", "finished": 1, "moves": 44, "winner": 0,
        "tie_break": 0, "app": "test"}
    assert [row[f"p0_{c}"] for c in PLAYER_COLUMNS] == ["Green", 7, 16, 11, 8, 1, 1]
    assert [row[f"p1_{c}"] for c in PLAYER_COLUMNS] == ["Yellow", 3, 41, 12, 19, 0, 0]
    assert row["ended_unix"] == datetime(2026, 12, 1, 18, 41, 30, tzinfo=timezone.utc).timestamp()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["history.sqlite3", "records"]


def test_filing_again_replaces_the_game_never_doubles_it(tmp_path):
    history = History(tmp_path)
    history.file("g1", dataclasses.replace(PATCHWORK, moves=PATCHWORK.moves[:10]))
    history.file("g1", PATCHWORK)
    with history.index() as index:
        assert index.count() == 1 and index.games()[0]["moves"] == 44
    assert [p.name for p in (tmp_path / "records").iterdir()] == ["g1.json"]


def test_the_index_is_wal_and_has_the_documented_schema(tmp_path):
    history = History(tmp_path)
    history.file("g1", EXPRESS)
    db = sqlite3.connect(history.db_path)
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert [r[1] for r in db.execute("PRAGMA table_info(games)")] == list(GAME_COLUMNS)
    assert [r[1] for r in db.execute("PRAGMA table_info(players)")] == \
        ["game_id", "seat"] + list(PLAYER_COLUMNS)
    assert db.execute("SELECT duration_s, winner, p1_name FROM game_rows").fetchone() == \
        (1111, 1, "Green")


def test_queries_go_newest_first_and_filter_by_player_and_game(tmp_path):
    history = History(tmp_path)
    base = datetime(2026, 1, 1, tzinfo=timezone.utc)
    for n in range(6):
        record = PATCHWORK if n % 2 else EXPRESS
        ended = (base + timedelta(days=n)).isoformat()
        players = ("Ann", "Bob") if n < 3 else ("Cy", "Ann")
        history.file(f"g{n}", dataclasses.replace(record, players=players,
                                                  meta={"ended": ended}))
    with history.index() as index:
        assert [r["id"] for r in index.games()] == ["g5", "g4", "g3", "g2", "g1", "g0"]
        assert [r["id"] for r in index.games(player="Bob")] == ["g2", "g1", "g0"]
        assert [r["id"] for r in index.games(player="Ann", game="patchwork")] == ["g5", "g3", "g1"]
        assert [r["id"] for r in index.games(limit=2, offset=1)] == ["g4", "g3"]


def test_ensure_indexes_a_saved_record_or_saves_it(tmp_path):
    history = History(tmp_path)
    history.records.mkdir()
    history.record_path("g1").write_text(json.dumps(PATCHWORK.to_json()))   # saved, not indexed
    made = []
    assert history.ensure("g1", lambda: made.append(1) or PATCHWORK) == history.record_path("g1")
    assert made == []
    assert history.ensure("g2", lambda: EXPRESS) == history.record_path("g2")       # saved now
    history.record_path("g3").write_bytes(b"\x00" * 30)                              # NUL-filled
    history.ensure("g3", lambda: EXPRESS)
    assert parse_record(history.record_path("g3").read_text()) == EXPRESS
    with history.index() as index:
        assert index.count() == 3


def test_rebuild_recreates_the_index_from_the_records(tmp_path, capsys):
    history = History(tmp_path)
    history.file("g1", PATCHWORK)
    history.file("g2", EXPRESS)
    with history.index() as index:
        before = index.games()
    (tmp_path / "records" / "bad.json").write_text("{not json")
    for suffix in ("", "-wal", "-shm"):
        (tmp_path / f"history.sqlite3{suffix}").unlink(missing_ok=True)
    (tmp_path / "history.sqlite3").write_bytes(b"this is not a database" * 100)
    assert main(["history", "--store", str(tmp_path), "--rebuild"]) == 0
    out, err = capsys.readouterr()
    assert "2 games indexed" in out and "1 records skipped" in out and "bad.json" in err
    with history.index() as index:
        assert index.games() == before
    assert (tmp_path / "history.sqlite3.corrupt").exists()      # the broken file set aside


def test_rebuild_skips_records_the_index_cannot_hold_and_keeps_the_rest(tmp_path, capsys):
    """A hand-edited record with a duration too large for SQLite, or a player name that is
    not UTF-8 text (a lone surrogate escape), is indexed without the duration or skipped
    with a message; every other game is indexed, and no traceback."""
    history = History(tmp_path)
    history.file("g1", PATCHWORK)
    text = (tmp_path / "records" / "g1.json").read_text()
    huge = json.loads(text)
    huge["meta"]["duration_s"] = 10 ** 30
    (tmp_path / "records" / "huge.json").write_text(json.dumps(huge))
    (tmp_path / "records" / "surrogate.json").write_text(text.replace('"Green"', '"\\ud800"'))
    assert main(["history", "--store", str(tmp_path), "--rebuild"]) == 0
    out, err = capsys.readouterr()
    assert "2 games indexed" in out and "1 records skipped" in out
    assert "surrogate.json: skipped: the index refuses it" in err and "Traceback" not in err
    with history.index() as index:
        rows = {row["id"]: row for row in index.games()}
    assert sorted(rows) == ["g1", "huge"] and rows["huge"]["duration_s"] == 2250  # from the times
    assert rows["huge"]["p0_score"] == rows["g1"]["p0_score"]


def test_rebuild_recreates_an_index_whose_pages_are_damaged(tmp_path, capsys):
    """Bit rot inside the database (it still opens, but queries say "malformed"): the
    listing points to --rebuild, and --rebuild sets the file aside and recreates it."""
    history = History(tmp_path)
    history.file("g1", PATCHWORK)
    history.file("g2", EXPRESS)
    with history.index() as index:
        before = index.games()
        row = {**index.games()[0], "players": [
            {c: index.games()[0][f"p{i}_{c}"] for c in PLAYER_COLUMNS} for i in (0, 1)]}
        index.upsert(row, [{**row, "id": f"old{i}"} for i in range(2000)])   # rows only
    db = tmp_path / "history.sqlite3"
    data = bytearray(db.read_bytes())
    assert len(data) >= 40 * 4096 and not (tmp_path / "history.sqlite3-wal").exists()
    for page in range(2 * 4096, len(data), 4096):       # the header page and page 2 intact
        data[page + 100:page + 200] = bytes(range(100, 200))
    db.write_bytes(bytes(data))
    assert main(["history", "--store", str(tmp_path)]) == 2
    assert "--rebuild' recreates it" in capsys.readouterr().err
    assert main(["history", "--store", str(tmp_path), "--rebuild"]) == 0
    out, err = capsys.readouterr()
    assert "2 games indexed" in out and f"damaged; kept as {db}.corrupt" in err
    with history.index() as index:
        assert index.games() == before


def test_an_index_that_cannot_be_opened_leaves_no_file_open(tmp_path):
    """Each failed open (a damaged file here; a full disk in the service, retried every
    few seconds) closes its connection at once, not at the next garbage collection."""
    import gc
    import os
    from firmware_py.store.index import Index
    db = tmp_path / "history.sqlite3"
    db.write_bytes(b"this is not a database" * 100)
    gc.disable()
    try:
        for _ in range(5):
            with pytest.raises(sqlite3.DatabaseError):
                Index(db)
        held = [fd for fd in os.listdir("/proc/self/fd")
                if os.path.realpath(f"/proc/self/fd/{fd}").startswith(str(db))]
    finally:
        gc.enable()
    assert held == []


def test_the_history_listing_shows_control_characters_of_a_record_escaped(tmp_path, capsys):
    """A hand-edited record whose player name holds a terminal escape and a line break
    cannot colour the terminal or forge a line of the listing."""
    history = History(tmp_path)
    history.file("g1", PATCHWORK)
    data = json.loads((tmp_path / "records" / "g1.json").read_text())
    data["players"][0] = "Gr\x1b[2J\r\ng2  forged"
    (tmp_path / "records" / "g1.json").write_text(json.dumps(data))
    assert main(["history", "--store", str(tmp_path), "--rebuild"]) == 0
    capsys.readouterr()
    assert main(["history", "--store", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert out.count("\n") == 1 and "\x1b" not in out and "\r" not in out
    assert "Gr\\x1b[2J\\r\\ng2  forged 7 : Yellow 3" in out


def test_the_history_command_lists_games(tmp_path, capsys):
    History(tmp_path).file("g1", PATCHWORK)
    assert main(["history", "--store", str(tmp_path)]) == 0
    line = capsys.readouterr().out.strip()
    assert line.startswith("g1  2026-12-01 19:04") and "Green 7 : Yellow 3" in line  # the start
    assert "winner Green" in line and "38 min" in line          # 2,250 s: 37.5 rounds up
    assert main(["history", "--store", str(tmp_path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["p1_score"] == 3


def test_a_record_write_refused_indexes_nothing_and_leaves_no_temporary(tmp_path, monkeypatch):
    from firmware_py.companion import journal as J
    from test_companion_journal import FailingOs, patch_os
    import errno
    history = History(tmp_path)
    patch_os(monkeypatch, FailingOs(errno.ENOSPC))
    with pytest.raises(OSError):
        history.file("g1", PATCHWORK)
    assert list(tmp_path.iterdir()) == [tmp_path / "records"]
    assert list((tmp_path / "records").iterdir()) == []


def test_game_ids_sort_by_start_and_differ():
    now = datetime(2026, 12, 1, 19, 4, 0)
    a, b = new_game_id(now), new_game_id(now)
    assert a.startswith("20261201-190400-") and a != b and len(a) == 22


def _file_games(folder: str, prefix: str, start, count: int) -> None:
    """One writer process: files ``count`` games ``<prefix>-<i>`` whose players name the game."""
    history = History(folder)
    start.wait()
    for i in range(count):
        history.file(f"{prefix}-{i}", dataclasses.replace(PATCHWORK, players=(f"{prefix}{i}", "Yellow")))


def _rename_games(folder: str, prefix: str, start, count: int) -> None:
    """The other writer: the web page renaming the players of games ``<prefix>-<i>``."""
    from firmware_py.web.library import Library
    library = Library(folder)
    start.wait()
    for i in range(count):
        library.rename(f"{prefix}-{i}", (f"{prefix}{i}", "Renamed"))


def test_two_processes_saving_at_once_each_file_holds_its_own_game(tmp_path):
    """The service files finished games while the web page renames players of others, 200
    saves each, at the same moment: every record file holds its own game, none is lost."""
    import multiprocessing
    count = 200
    history = History(tmp_path)
    for i in range(count):
        history.file(f"b-{i}", dataclasses.replace(PATCHWORK, players=(f"b{i}", "Yellow")))
    ctx = multiprocessing.get_context("fork")
    start = ctx.Barrier(2)
    writers = [ctx.Process(target=_file_games, args=(str(tmp_path), "a", start, count)),
               ctx.Process(target=_rename_games, args=(str(tmp_path), "b", start, count))]
    for w in writers:
        w.start()
    for w in writers:
        w.join(300)
    assert [w.exitcode for w in writers] == [0, 0]
    for i in range(count):
        a = parse_record((tmp_path / "records" / f"a-{i}.json").read_text())
        b = parse_record((tmp_path / "records" / f"b-{i}.json").read_text())
        assert (a.players, b.players) == ((f"a{i}", "Yellow"), (f"b{i}", "Renamed")), i
    assert sorted(p.name for p in (tmp_path / "records").iterdir()) == sorted(
        [f"a-{i}.json" for i in range(count)] + [f"b-{i}.json" for i in range(count)])
    with history.index() as index:
        assert index.count() == 2 * count
