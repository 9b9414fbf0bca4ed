"""`patchwork-companion replay FILE [--json] [--trace]`: output shapes and exit codes."""
from __future__ import annotations

import json
import subprocess
import sys

from conftest import GOLDEN


def _run(tmp_path, record, *flags):
    path = tmp_path / "game.json"
    path.write_text(record if isinstance(record, str) else json.dumps(record))
    proc = subprocess.run([sys.executable, "-m", "firmware_py.cli", "replay", str(path), *flags],
                          capture_output=True, text=True, timeout=60)
    return proc


def test_json_tally_of_a_valid_record(tmp_path):
    game = GOLDEN[3]
    proc = _run(tmp_path, game, "--json")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert set(out) == {"over", "scores", "winner", "players"}
    assert out["over"] is True and out["scores"] == game["result"]["scores"]
    assert out["winner"] == game["result"]["winner"]
    assert [p["name"] for p in out["players"]] == game["players"]
    assert all(set(p) == {"name", "position", "buttons", "income", "empty", "bonus"}
               for p in out["players"])
    assert all(p["position"] == 53 for p in out["players"])


def test_trace_has_one_object_per_move(tmp_path):
    game = GOLDEN[0]
    proc = _run(tmp_path, game, "--trace")
    lines = proc.stdout.splitlines()
    objs = [json.loads(line) for line in lines[:len(game["moves"])]]
    assert [o["move"] for o in objs] == list(range(len(game["moves"])))
    assert set(objs[0]) == {"move", "player", "positions", "buttons", "income", "empty",
                            "bonus", "circle"}
    assert objs[0]["player"] == 0 and objs[-1]["positions"] == [53, 53]
    assert " wins " in lines[-1]                      # "Bob wins 31 to 12"


def test_disagreeing_result_exits_1(tmp_path):
    game = dict(GOLDEN[1], result={"scores": [0, 0], "winner": 0})
    proc = _run(tmp_path, game)
    assert proc.returncode == 1 and "disagrees" in proc.stderr


def test_unfinished_game_is_valid(tmp_path):
    game = dict(GOLDEN[2], moves=GOLDEN[2]["moves"][:5])
    del game["result"]
    proc = _run(tmp_path, game, "--json")
    assert proc.returncode == 0
    out = json.loads(proc.stdout)
    assert out["over"] is False and out["winner"] is None


def test_illegal_move_exits_2_naming_index_and_rule(tmp_path):
    game = json.loads(json.dumps(GOLDEN[0]))
    game["moves"][1] = {"buy": game["circle"][5], "cells": game["moves"][1]["cells"]}
    proc = _run(tmp_path, game)
    assert proc.returncode == 2
    assert "move 1:" in proc.stderr and "R3" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_malformed_records_exit_2_without_traceback(tmp_path):
    for bad in ["{not json", "[]", json.dumps({"format": "patchwork-game-record/1"}),
                json.dumps(dict(GOLDEN[0], moves=["advance", {"buy": "x"}])),
                json.dumps(dict(GOLDEN[0], moves=[{"buy": 99}])),
                json.dumps(dict(GOLDEN[0], surprise=1)),
                json.dumps(dict(GOLDEN[0], circle=GOLDEN[0]["circle"][:-1]))]:
        proc = _run(tmp_path, bad)
        assert proc.returncode == 2, bad
        assert proc.stderr.strip() and "Traceback" not in proc.stderr


def test_mixed_styles_exit_2(tmp_path):
    game = json.loads(json.dumps(GOLDEN[0]))
    game["moves"][1] = {"buy": game["moves"][1]["buy"]}
    proc = _run(tmp_path, game)
    assert proc.returncode == 2 and "move 1:" in proc.stderr and "mix" in proc.stderr


def test_missing_file_exits_2(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "firmware_py.cli", "replay",
                           str(tmp_path / "nope.json")], capture_output=True, text=True)
    assert proc.returncode == 2 and "cannot read" in proc.stderr


def test_a_json_lines_file_of_several_records_is_refused_with_a_hint(tmp_path):
    text = "\n".join(json.dumps(g) for g in GOLDEN[:3]) + "\n"
    proc = _run(tmp_path, text)
    assert proc.returncode == 2 and proc.stdout == ""
    assert "line 2" in proc.stderr and "JSON Lines" in proc.stderr
    one = _run(tmp_path, text.splitlines()[1])              # one line of it is a record
    assert one.returncode == 0, one.stderr
