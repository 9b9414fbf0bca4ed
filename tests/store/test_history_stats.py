"""history, stats, export, backup and restore on five known games, with exact figures.

The games (names given here; tallies from the rules engine):

======  ==========  ==================  ==============  ===========================
game    started     game                players         result
======  ==========  ==================  ==============  ===========================
G1      11-01 19:00 Patchwork revised   Anna - Ben      -14 : -14, Ben wins the tie
G2      11-02 20:00 Patchwork revised   Ben - Anna      -9 : 4, Anna
G3      11-03 18:00 Patchwork revised   Anna - Cleo     7 : 3, Anna (7x7 tile)
G4      11-04 21:00 Patchwork Express   Cleo - Anna     -22 : 0, Anna
G5      11-05 19:00 Patchwork revised   Dora - Anna     ended early (10 moves)
======  ==========  ==================  ==============  ===========================
"""
from __future__ import annotations

import csv
import io
import json
import tarfile
from dataclasses import replace

import pytest

from firmware_py.cli import main
from firmware_py.rules import parse_record
from firmware_py.store import History
from firmware_py.store.backup import BackupError, backup, restore
from firmware_py.store.export import to_bgstats, to_csv, to_jsonl
from firmware_py.store.stats import count_games, game_stats, player_names, player_stats
from test_faults_rig import EXPRESS_RECORD, GOLDEN_RECORDS

GAMES = [  # id, record, names, started, minutes
    ("20261101-190000-aaaaa1", GOLDEN_RECORDS[0], ("Anna", "Ben"), "2026-11-01T19:00:00+01:00", 30),
    ("20261102-200000-aaaaa2", GOLDEN_RECORDS[1], ("Ben", "Anna"), "2026-11-02T20:00:00+01:00", 25),
    ("20261103-180000-aaaaa3", GOLDEN_RECORDS[3], ("Anna", "Cleo"), "2026-11-03T18:00:00+01:00", 40),
    ("20261104-210000-aaaaa4", EXPRESS_RECORD, ("Cleo", "Anna"), "2026-11-04T21:00:00+01:00", 10),
    ("20261105-190000-aaaaa5", replace(GOLDEN_RECORDS[2], moves=GOLDEN_RECORDS[2].moves[:10]),
     ("Dora", "Anna"), "2026-11-05T19:00:00+01:00", 5),
]


def known_record(record, names, started, minutes):
    """``record`` with the players' names and start/end times in its meta."""
    hour, minute = int(started[11:13]), int(started[14:16]) + minutes
    ended = f"{started[:11]}{hour + minute // 60:02d}:{minute % 60:02d}{started[16:]}"
    return replace(record, players=names, result=None,
                   meta={"started": started, "ended": ended, "duration_s": minutes * 60})


@pytest.fixture
def store(tmp_path):
    folder = tmp_path / "store"
    history = History(folder)
    for game_id, record, names, started, minutes in GAMES:
        history.file(game_id, known_record(record, names, started, minutes))
    return folder


def test_history_lists_newest_first_with_filters(store, capsys):
    assert main(["history", "--store", str(store)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines] == [g[0] for g in reversed(GAMES)]
    assert lines[1].split() == ["20261104-210000-aaaaa4", "2026-11-04", "21:00", "patchwork-express",
                                "standard", "Anna", "0", ":", "Cleo", "-22", "winner", "Anna",
                                "10", "min"]                      # the start; the winner first
    assert lines[4].endswith("Ben -14 : Anna -14  winner Ben  30 min")
    assert lines[0].endswith("Dora -126 : Anna -128  winner -  5 min")      # ended early
    assert main(["history", "--store", str(store), "--player", "Ben"]) == 0
    ids = [line.split()[0] for line in capsys.readouterr().out.splitlines()]
    assert ids == ["20261102-200000-aaaaa2", "20261101-190000-aaaaa1"]
    assert main(["history", "--store", str(store), "--player", "Anna", "--limit", "2"]) == 0
    assert len(capsys.readouterr().out.splitlines()) == 2
    assert main(["history", "--store", str(store), "--game", "patchwork-express", "--json"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["id"] for r in rows] == ["20261104-210000-aaaaa4"]
    assert [(r["p0_name"], r["p0_score"], r["p1_name"], r["p1_score"], r["winner"]) for r in rows] \
        == [("Cleo", -22, "Anna", 0, 1)]


def test_history_show_prints_the_tally_and_every_move(store, capsys):
    assert main(["history", "--store", str(store), "show", "20261103-180000-aaaaa3"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[2].split() == ["Anna", "16", "7", "8", "7", "winner"]
    assert out[3].split() == ["Cleo", "41", "0", "19", "3"]
    assert out[4] == "Anna wins 7 to 3"                   # the winner and its score first
    assert out[7].split() == ["#", "move"] + ["space", "buttons", "income", "empty", "score"] * 2
    moves = out[8:]
    assert len(moves) == len(GOLDEN_RECORDS[3].moves)
    assert moves[0].split()[:5] == ["1", "Anna", "buys", "patch", "21"]
    assert moves[-1].split()[-10:] == ["53", "16", "11", "8", "7", "53", "41", "12", "19", "3"]
    assert main(["history", "--store", str(store), "show", "nope"]) == 2
    assert "no game 'nope'" in capsys.readouterr().err


def test_stats_per_player_and_per_game_exact(store):
    with History(store).index() as index:
        players = {p["name"]: p for p in player_stats(index)}
        order = [p["name"] for p in player_stats(index)]
        kinds = {g["game"]: g for g in game_stats(index)}
        assert count_games(index) == 5 and count_games(index, "Anna", "patchwork") == 4
        assert player_names(index)[0] == "Anna"
    assert order == ["Anna", "Ben", "Cleo"]            # Dora played only the unfinished game
    anna, ben, cleo = players["Anna"], players["Ben"], players["Cleo"]
    assert (anna["games"], anna["wins"], anna["best_score"]) == (4, 3, 7)
    assert anna["avg_score"] == pytest.approx(-0.75)
    assert anna["bonus_rate"] == pytest.approx(1 / 3)
    assert (anna["avg_empty"], anna["avg_income"]) == (15.0, 10.0)
    assert (ben["games"], ben["wins"], ben["avg_score"], ben["best_score"]) == (2, 1, -11.5, -9)
    assert (ben["bonus_rate"], ben["avg_empty"], ben["avg_income"]) == (0.0, 19.5, 8.5)
    assert (cleo["games"], cleo["wins"], cleo["avg_score"], cleo["best_score"]) == (2, 0, -9.5, 3)
    assert (cleo["avg_empty"], cleo["avg_income"]) == (21.0, 7.5)
    pw, ex = kinds["patchwork"], kinds["patchwork-express"]
    assert (pw["games"], pw["best_score"]) == (3, 7)
    assert pw["avg_score"] == pytest.approx(-23 / 6)
    assert pw["avg_winning_score"] == pytest.approx(-1.0)
    assert pw["avg_duration_s"] == pytest.approx((1800 + 1500 + 2400) / 3)
    assert (ex["games"], ex["avg_score"], ex["best_score"], ex["avg_winning_score"]) == (1, -11, 0, 0)


def test_stats_command_prints_the_same_figures(store, capsys):
    assert main(["stats", "--store", str(store)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[1].split() == ["Anna", "4", "3", "-0.75", "7", "33%", "15.00", "10.00"]
    assert out[2].split() == ["Ben", "2", "1", "-11.50", "-9", "0%", "19.50", "8.50"]
    assert main(["stats", "--store", str(store), "--game", "patchwork-express", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [(p["name"], p["games"], p["wins"]) for p in data["players"]] == \
        [("Anna", 1, 1), ("Cleo", 1, 0)]
    assert [g["game"] for g in data["games"]] == ["patchwork-express"]


def test_export_csv_jsonl_and_bgstats(store):
    with History(store).index() as index:
        rows = list(csv.DictReader(io.StringIO(to_csv(index))))
        lines = to_jsonl(index, store / "records").splitlines()
        bg = to_bgstats(index)
        assert len(list(csv.DictReader(io.StringIO(to_csv(index, player="Cleo"))))) == 2
    assert [r["id"] for r in rows] == [g[0] for g in GAMES]          # oldest first
    first = rows[0]
    assert (first["p1_name"], first["p1_score"], first["p2_name"], first["p2_score"],
            first["winner"], first["tie_break"]) == ("Anna", "-14", "Ben", "-14", "Ben", "1")
    assert (rows[2]["p1_special"], rows[2]["p1_empty"], rows[2]["p1_income"]) == ("1", "8", "11")
    assert (rows[4]["finished"], rows[4]["winner"]) == ("0", "")
    assert rows[3]["duration_s"] == "600" and rows[3]["game"] == "patchwork-express"
    assert len(lines) == 5
    for line, (_, record, names, *_rest) in zip(lines, GAMES):
        parsed = parse_record(line)
        assert parsed.moves == record.moves and parsed.players == names
    assert {g["name"]: g["bggId"] for g in bg["games"]} == {"Patchwork": 163412,
                                                           "Patchwork Express": 231326}
    assert len(bg["plays"]) == 4                                       # G5 has no winner
    names = {p["id"]: p["name"] for p in bg["players"]}
    express = [p for p in bg["plays"] if bg["games"][p["gameRefId"] - 1]["bggId"] == 231326]
    assert [(names[s["playerRefId"]], s["score"], s["winner"], s["startPlayer"])
            for s in express[0]["playerScores"]] == [("Cleo", "-22", False, True),
                                                       ("Anna", "0", True, False)]
    assert bg["plays"][0]["playDate"] == "2026-11-01 19:00:00"
    assert bg["plays"][0]["durationMin"] == 30
    assert len({p["uuid"] for p in bg["plays"]}) == 4


def test_export_command_writes_a_file(store, tmp_path, capsys):
    out = tmp_path / "plays.json"
    assert main(["export", "--store", str(store), "--format", "bgstats", "-o", str(out)]) == 0
    assert len(json.loads(out.read_text())["plays"]) == 4
    assert main(["export", "--store", str(store), "--format", "csv", "--game",
                 "patchwork-express"]) == 0
    assert len(capsys.readouterr().out.splitlines()) == 2


def test_backup_and_restore_round_trip(store, tmp_path, capsys):
    (store / "names.json").write_text('{"names": ["Anna", "Ben"]}')
    target = tmp_path / "backup.tar.gz"
    assert main(["backup", "--store", str(store), str(target)]) == 0
    assert "5 games" in capsys.readouterr().out
    fresh = tmp_path / "fresh"
    assert main(["restore", "--store", str(fresh), str(target)]) == 0
    assert "restored 5 games into" in (said := capsys.readouterr().out)
    assert "player names: added Anna, Ben; the history holds 5 games" in said
    with History(fresh).index() as a, History(store).index() as b:
        assert a.games(limit=10) == [dict(r, size=r["size"]) for r in b.games(limit=10)]
    assert json.loads((fresh / "names.json").read_text()) == {"names": ["Anna", "Ben"]}


def _tamper(source, target, name, data):
    with tarfile.open(source) as old, tarfile.open(target, "w:gz") as new:
        for member in old:
            content = old.extractfile(member).read()
            if member.name == name:
                content = data
            info = tarfile.TarInfo(member.name)
            info.size = len(content)
            new.addfile(info, io.BytesIO(content))


def test_restore_checks_everything_first_and_writes_nothing_when_bad(store, tmp_path, capsys):
    good = tmp_path / "good.tar.gz"
    backup(store, good)
    bad = tmp_path / "bad.tar.gz"
    record = GOLDEN_RECORDS[0].to_json()
    record["moves"] = ["advance", {"buy": 999}]
    _tamper(good, bad, "records/20261103-180000-aaaaa3.json", json.dumps(record).encode())
    fresh = tmp_path / "fresh"
    with pytest.raises(BackupError, match="20261103-180000-aaaaa3.json: not a valid game record"):
        restore(fresh, bad)
    assert not (fresh / "records").exists()
    assert main(["restore", "--store", str(fresh), str(bad)]) == 2
    assert "nothing was changed" in capsys.readouterr().err
    evil = tmp_path / "evil.tar.gz"
    with tarfile.open(evil, "w:gz") as tar:
        info = tarfile.TarInfo("../escape.json")
        info.size = 2
        tar.addfile(info, io.BytesIO(b"{}"))
    with pytest.raises(BackupError, match="does not belong in a backup"):
        restore(fresh, evil)
    assert not (tmp_path / "escape.json").exists()
    (tmp_path / "junk.tar.gz").write_bytes(b"not a tar file")
    with pytest.raises(BackupError, match="not a backup file"):
        restore(fresh, tmp_path / "junk.tar.gz")


def test_a_page_of_games_equals_the_index_view(store):
    from firmware_py.store.stats import page_of_games
    with History(store).index() as index:
        for player, game in ((None, None), ("Anna", None), ("Anna", "patchwork"), (None,
                             "patchwork-express"), ("Nobody", None)):
            for limit, offset in ((50, 0), (2, 1), (1, 4)):
                assert page_of_games(index, player, game, limit, offset) == \
                    index.games(player=player, game=game, limit=limit, offset=offset)
