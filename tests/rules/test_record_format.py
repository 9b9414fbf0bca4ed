"""Game records: free layouts, corrections, meta, and hostile input, through
``parse_record``/``replay`` and the ``replay`` command (its exit status)."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from conftest import GOLDEN
from firmware_py.rules import (RecordError, deal, dumps_record, load_spec,
                               parse_record, replay)
from firmware_py.rules import jsonsafe
from firmware_py.rules.record import steps


def _cli(tmp_path, text: str, *flags):
    path = tmp_path / "game.json"
    path.write_text(text)
    return subprocess.run([sys.executable, "-m", "firmware_py.cli", "replay", str(path), *flags],
                          capture_output=True, text=True, timeout=60)


def _free_record(order_reversed=True) -> dict:
    spec = load_spec("patchwork", "2014")
    circle, _ = deal(spec, 11)
    circle = list(reversed(circle)) if order_reversed else list(circle)   # smallest first
    return {"format": "patchwork-game-record/1", "game": "patchwork", "time_board": "2014",
            "players": ["Green", "Yellow"], "layout": "free", "circle": circle, "moves": []}


# ------------------------------------------------------------------ all 100 shared games
def test_every_shared_game_still_replays_to_its_result():
    for game in GOLDEN:
        state, result = replay(parse_record(game))
        assert {"scores": result.scores, "winner": result.winner} == game["result"]


# ------------------------------------------------------------------ free layout
def test_free_layout_buys_far_into_the_circle_and_keeps_the_pool_order():
    data = _free_record()
    far = [p for p in data["circle"][10:] if load_spec("patchwork").patches[p].cost <= 5][0]
    data["moves"] = [{"buy": far}, "advance", {"buy": data["circle"][0]}]   # the smallest patch
    record = parse_record(data)
    assert record.free and record.layout == "free"
    trace = list(steps(record))
    left = [p for p in data["circle"] if p not in (far, data["circle"][0])]
    assert list(trace[-1].state.circle) == left
    assert parse_record(json.loads(dumps_record(record))) == record


def test_the_same_moves_without_free_layout_break_the_neutral_token_rule():
    data = _free_record(order_reversed=False)
    far = data["circle"][10]
    data["moves"] = [{"buy": far}]
    assert replay(parse_record(data))
    del data["layout"]
    with pytest.raises(RecordError) as err:
        replay(parse_record(data))
    assert err.value.index == 0 and "R3" in str(err.value.rule)


def test_a_dealt_circle_still_needs_the_smallest_patch_last():
    data = _free_record()                          # smallest first
    data["layout"] = "dealt"
    with pytest.raises(RecordError, match="smallest"):
        parse_record(data)


@pytest.mark.parametrize("layout", ["Free", "", 1, ["free"], {"free": True}, None])
def test_a_bad_layout_is_refused(layout):
    data = dict(_free_record(), layout=layout)
    with pytest.raises(RecordError, match='"layout" must be "dealt" or "free"'):
        parse_record(data)


def test_replay_command_checks_a_free_layout(tmp_path):
    data = _free_record()
    spec = load_spec("patchwork")
    far = [p for p in data["circle"][10:] if spec.patches[p].cost <= 5][0]
    data["moves"] = [{"buy": far}]
    proc = _cli(tmp_path, json.dumps(data), "--trace")
    assert proc.returncode == 0, proc.stderr
    assert far not in json.loads(proc.stdout.splitlines()[0])["circle"]
    dear = [p for p in data["circle"] if spec.patches[p].cost > 5][0]
    data["moves"] = [{"buy": dear}]                # free, but still paid from 5 buttons
    proc = _cli(tmp_path, json.dumps(data))
    assert proc.returncode == 2 and "move 0" in proc.stderr and "R2" in proc.stderr


# ------------------------------------------------------------------ corrections
def test_adjust_changes_only_that_players_buttons_and_takes_no_turn():
    game = json.loads(json.dumps(GOLDEN[0]))
    plain, _ = replay(parse_record(dict(game, moves=game["moves"][:3])))
    moves = game["moves"][:2] + [{"adjust": 1, "buttons": 4}] + game["moves"][2:3]
    fixed, _ = replay(parse_record(dict(game, moves=moves)))
    assert fixed.players[1].buttons == plain.players[1].buttons + 4
    assert fixed.players[0] == plain.players[0]
    assert [p.position for p in fixed.players] == [p.position for p in plain.players]


def test_adjust_after_the_last_move_changes_the_result():
    game = json.loads(json.dumps(GOLDEN[5]))
    loser = 1 - game["result"]["winner"]
    margin = abs(game["result"]["scores"][0] - game["result"]["scores"][1]) + 1
    game["moves"].append({"adjust": loser, "buttons": margin})
    state, result = replay(parse_record(game))
    assert result.winner == loser
    assert result.scores[loser] == game["result"]["scores"][loser] + margin


@pytest.mark.parametrize("move, words", [
    ({"adjust": 0, "buttons": -6}, "would leave -1"),
    ({"adjust": 2, "buttons": 1}, "player 0 or 1"),
    ({"adjust": 0, "buttons": 0}, "non-zero"),
    ({"adjust": 0, "buttons": 1.5}, "non-zero integer"),
    ({"adjust": 0, "buttons": "3"}, "non-zero integer"),
    ({"adjust": [0], "buttons": 1}, "player 0 or 1, got a list"),
    ({"adjust": 0}, '{"adjust": P, "buttons": N}'),
    ({"adjust": 0, "buttons": 1, "x": 2}, "unknown move"),
])
def test_a_bad_correction_exits_2_naming_the_move(tmp_path, move, words):
    game = dict(GOLDEN[0], moves=[move])
    del game["result"]
    proc = _cli(tmp_path, json.dumps(game))
    assert proc.returncode == 2 and "move 0" in proc.stderr and words in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr


def test_replay_json_gives_the_corrected_tally(tmp_path):
    game = json.loads(json.dumps(GOLDEN[7]))
    game["moves"].insert(4, {"adjust": 0, "buttons": 2})
    scores = game["result"]["scores"]
    del game["result"]
    state, result = replay(parse_record(game))
    assert result.scores[0] == scores[0] + 2
    game["result"] = {"scores": result.scores, "winner": result.winner}
    proc = _cli(tmp_path, json.dumps(game), "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["scores"] == result.scores


# ------------------------------------------------------------------ hostile input
@pytest.mark.parametrize("where", ["top", "meta", "move", "players"])
def test_deep_nesting_exits_2_with_a_message(tmp_path, where):
    deep = "[" * 50000 + "]" * 50000
    game = json.dumps(GOLDEN[0])
    if where == "top":
        text = deep
    elif where == "meta":
        text = game[:-1] + ', "meta": {"x": ' + deep + "}}"
    elif where == "move":
        text = game.replace('"moves": ["advance"', '"moves": [' + deep, 1)
        text = text.replace('"moves":["advance"', '"moves":[' + deep, 1)
    else:
        text = game.replace('["Green", "Yellow"]', deep, 1).replace('["Green","Yellow"]', deep, 1)
    assert deep in text
    proc = _cli(tmp_path, text)
    assert proc.returncode == 2, proc.stderr
    assert "nested more than" in proc.stderr and "Traceback" not in proc.stderr


def test_moderate_nesting_is_refused_before_it_reaches_the_engine():
    game = json.loads(json.dumps(GOLDEN[0]))
    nested: list = []
    for _ in range(200):                           # decodes fine, but is no record
        nested = [nested]
    game["meta"] = {"x": nested}
    with pytest.raises(RecordError, match="nested more than 64"):
        parse_record(game)
    with pytest.raises(RecordError, match="nested more than 64"):
        parse_record(json.dumps(game))


@pytest.mark.parametrize("key, value", [
    ("game", ["patchwork"]), ("game", {"a": 1}), ("time_board", ["2014"]),
    ("time_board", {"x": []}), ("format", ["patchwork-game-record/1"]),
    ("players", [["Green"], "Yellow"]), ("players", [{"a": 1}, "Yellow"]),
    ("circle", [[1]] * 33), ("moves", [["advance"]]), ("moves", [{"buy": [1]}]),
    ("moves", [{"leather": {"a": 1}}]), ("moves", [{"bonus": []}]),
    ("moves", [{("k" * 3): 1}]),
])
def test_a_list_or_object_where_a_string_or_number_belongs(tmp_path, key, value):
    game = dict(GOLDEN[0], **{key: value})
    del game["result"]
    proc = _cli(tmp_path, json.dumps(game))
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert proc.stderr.strip() and "Traceback" not in proc.stderr


def test_jsonsafe_measures_depth_without_recursion():
    value: list = []
    for _ in range(100000):
        value = [value]
    assert jsonsafe.depth_of(value, 10) == 11
    assert jsonsafe.depth_of({"a": [1, {"b": []}]}) == 4
    assert jsonsafe.depth_of(7) == 0
    with pytest.raises(jsonsafe.NestingError):
        jsonsafe.loads("[" * 100000 + "]" * 100000)
    with pytest.raises(ValueError):
        jsonsafe.loads(b"\xff\xfe")
    assert jsonsafe.loads('{"a": [[1]]}') == {"a": [[1]]}


def test_demo_refuses_a_hostile_record_with_exit_2(tmp_path):
    path = tmp_path / "deep.json"
    path.write_text('{"format": ' + "[" * 60000 + "]" * 60000 + "}")
    proc = subprocess.run([sys.executable, "-m", "firmware_py.cli", "demo", "--record", str(path),
                           "--out", str(tmp_path / "out")], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 2 and "nested more than" in proc.stderr
    assert "Traceback" not in proc.stderr and not (tmp_path / "out").exists()
