"""The companion end to end on simulated hardware: `demo` plays real records."""
from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from firmware_py.sim.demo import run_demo
from firmware_py.rules import parse_record, replay

from conftest import DATA, GOLDEN


def _record_file(tmp_path, game) -> str:
    path = tmp_path / "record.json"
    path.write_text(json.dumps(game))
    return str(path)


def _check_outputs(out: Path, record) -> None:
    frames = sorted((out / "oled").glob("frame-*.png"))
    assert len(frames) > 30
    assert (out / "oled.gif").stat().st_size > 1000
    leds = [json.loads(line) for line in (out / "leds.jsonl").read_text().splitlines()]
    assert len(leds) > 30 and all(len(f["leds"]) == 54 for f in leds)
    assert any(any(c != [0, 0, 0] for c in f["leds"]) for f in leds)
    saved = parse_record((out / "game-record.json").read_text())
    assert not saved.tracked
    _, expected = replay(record)
    assert replay(saved)[1].scores == expected.scores
    assert (out / "journal" / "journal.jsonl").exists()


@pytest.mark.parametrize("game", [GOLDEN[1], GOLDEN[3], GOLDEN[8]],
                         ids=["revised-double-income", "revised-7x7", "2014-7x7"])
def test_demo_follows_shared_games(tmp_path, game):
    out = tmp_path / "out"
    stream = io.StringIO()
    rc = run_demo(_record_file(tmp_path, game), out, as_json=True, fast=True, stream=stream)
    assert rc == 0
    tally = json.loads(stream.getvalue())
    assert tally["scores"] == game["result"]["scores"] and tally["winner"] == game["result"]["winner"]
    assert tally["over"] is True
    _check_outputs(out, parse_record(game))


def test_demo_follows_an_express_game_with_a_leather_patch_set_aside(tmp_path):
    path = DATA / "express-game.json"
    record = parse_record(path.read_text())
    assert {"leather": "discard"} in record.moves and record.players[0] == "Yellow"
    stream = io.StringIO()
    rc = run_demo(str(path), tmp_path / "out", as_json=True, fast=True, stream=stream)
    assert rc == 0
    assert json.loads(stream.getvalue())["scores"] == record.result["scores"]


def test_demo_plays_a_free_layout_record_and_saves_it_as_one(tmp_path):
    """Each patch is bought by moving first and confirming among the patches whose
    time matches; the end screen is the tally (not an error) and the record is saved."""
    game = dict(json.loads(json.dumps(GOLDEN[8])), layout="free")
    record = parse_record(game)
    assert record.free and record.tracked
    out = tmp_path / "out"
    stream = io.StringIO()
    rc = run_demo(_record_file(tmp_path, game), out, as_json=True, fast=True, stream=stream)
    assert rc == 0
    assert json.loads(stream.getvalue())["scores"] == game["result"]["scores"]
    saved = parse_record((out / "game-record.json").read_text())
    assert saved.layout == "free" and saved.circle == record.circle
    assert saved.result == game["result"] and replay(saved)[1].scores == game["result"]["scores"]
    assert {"started", "ended", "duration_s", "app"} <= set(saved.meta)


def test_demo_plays_corrections_through_the_menu(tmp_path):
    game = json.loads(json.dumps(GOLDEN[1]))
    game["moves"].insert(3, {"adjust": 1, "buttons": 2})
    game["moves"].insert(8, {"adjust": 1, "buttons": -1})
    game["moves"].insert(12, {"adjust": 0, "buttons": 1})
    del game["result"]
    record = parse_record(game)
    _, expected = replay(record)
    out = tmp_path / "out"
    stream = io.StringIO()
    rc = run_demo(_record_file(tmp_path, game), out, as_json=True, fast=True, stream=stream)
    assert rc == 0
    assert json.loads(stream.getvalue())["scores"] == expected.scores
    saved = parse_record((out / "game-record.json").read_text())
    adjusts = [m for m in saved.moves if isinstance(m, dict) and "adjust" in m]
    assert adjusts == [{"adjust": 1, "buttons": 2}, {"adjust": 1, "buttons": -1},
                       {"adjust": 0, "buttons": 1}]
    assert replay(saved)[1].scores == expected.scores


def test_demo_command_prints_the_tally_as_the_oled_shows_it(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "firmware_py.cli", "demo", "--fast",
                           "--out", str(tmp_path / "out")], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == "Yellow wins the tie"
    assert lines[1].startswith("Green") and lines[1].endswith("= 5")
    assert lines[2].startswith("Yellow") and lines[2].endswith("= 5")
    assert lines[3].startswith("Green: ")         # the last move's instruction, addressed
    assert lines[4] == "Tie: Yellow got to the last space first."


def _turns_in(journal: Path) -> int:
    try:
        return journal.read_text().count('"kind":"turn"')
    except FileNotFoundError:
        return 0


def test_sigkill_mid_demo_then_restart_finishes_with_the_same_tally(tmp_path):
    game = GOLDEN[5]
    record = _record_file(tmp_path, game)
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "firmware_py.cli", "demo", "--fast", "--json",
           "--record", record, "--out", str(out)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while _turns_in(out / "journal" / "journal.jsonl") < 15 and time.monotonic() < deadline:
        time.sleep(0.05)
        assert proc.poll() is None, proc.stderr.read()
    os.kill(proc.pid, signal.SIGKILL)            # a power cut in the middle of the game
    proc.wait()
    kept = _turns_in(out / "journal" / "journal.jsonl")
    assert 15 <= kept < len(game["moves"])
    again = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stderr
    tally = json.loads(again.stdout)
    assert tally["scores"] == game["result"]["scores"]
    assert tally["winner"] == game["result"]["winner"]


def _tie_screen():
    from firmware_py.companion.model import PlayerLine, Screen
    players = (PlayerLine("Green", "green", 53, 24, 13, 13, True, 5),
               PlayerLine("Yellow", "yellow", 53, 41, 20, 18, False, 5))
    return Screen("end", "Yellow wins the tie", players=players, footer="OK:new game",
                  lines=("Green: take 1 button, +13 income",
                         "Tie: Yellow got to the last space first."))


def test_the_demo_waits_until_every_page_of_the_final_tally_is_captured(tmp_path, monkeypatch):
    """The final tally can need two pages, shown in turn: the demo's frames must end
    with both, and waiting gives up (without an error) when a page never comes."""
    import threading

    from firmware_py.sim import demo
    from firmware_py.service.capture import Capture
    from firmware_py.view.oled import page_count, render

    screen = _tie_screen()
    assert page_count(screen) == 2
    capture = Capture(tmp_path / "out")
    capture.oled(render(screen, 0))
    later = threading.Timer(0.3, lambda: capture.oled(render(screen, 1)))
    later.start()
    assert demo.await_pages(capture, screen, slack=5.0)
    later.join()
    monkeypatch.setattr(demo, "PAGE_SECONDS", 0.1)
    alone = Capture(tmp_path / "alone")
    alone.oled(render(screen, 0))
    assert not demo.await_pages(alone, screen, slack=0.1)
    capture.close()
    alone.close()
