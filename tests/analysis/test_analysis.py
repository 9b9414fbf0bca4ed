"""Post-game analysis: records of every kind, the stored results, the commands, the export,
and the web page's worker and JSON answer (the browser test is in test_web_browser.py)."""
from __future__ import annotations

import asyncio
import json
import os
import random
import signal
import time
from dataclasses import replace
from pathlib import Path

import pytest

from firmware_py.analysis import VERSION, Settings, analyse, costliest
from firmware_py.analysis.evaluate import price
from firmware_py.analysis.describe import report_lines
from firmware_py.analysis.review import decisions
from firmware_py.ai.search import Context, play, settle
from firmware_py.cli import main
from firmware_py.rules import (GameRecord, RecordError, action_to_move, apply, fast,
                               legal_actions, new_game, parse_record, replay, start_state, steps,
                               untracked_copy)
from firmware_py.store import History
from firmware_py.store import analyses as stored
from firmware_py.web import review

DATA = Path(__file__).resolve().parents[1] / "data"
QUICK = Settings(iterations=40, playouts=24)


def selfplay(n: int = 0) -> GameRecord:
    return parse_record((DATA / "engine-selfplay.jsonl").read_text().splitlines()[n])


def short(record: GameRecord, count: int) -> GameRecord:
    return replace(record, moves=record.moves[:count], result=None)


def random_record(game: str, board: str, seed: int, count: int, free: bool = False) -> GameRecord:
    """``count`` random legal moves (untracked, any placement) from a dealt game."""
    start = state = new_game(game, board, seed=seed, tracked=False, free=free)
    rng, moves = random.Random(seed), []
    while len(moves) < count and not state.over:
        action = rng.choice([a for a in legal_actions(state) if type(a).__name__ != "ClaimSpecialTile"])
        move = action_to_move(state.spec, action)
        if move is not None:                                 # a leather patch placed: not written
            moves.append(move)
        state, _ = apply(state, action)
    return GameRecord(game, board, ("Green", "Yellow"), start.circle, tuple(moves),
                      start.blue or None, layout="free" if free else "dealt")


def kinds() -> dict[str, GameRecord]:
    tracked = short(selfplay(0), 14)
    untracked = untracked_copy(short(selfplay(1), 14))
    corrected = replace(untracked, moves=untracked.moves[:5] + ({"adjust": 1, "buttons": 3},)
                        + untracked.moves[5:])
    express = short(parse_record((DATA / "express-game.json").read_text()), 12)
    box = replace(untracked, meta={"box_quilt": {"player": 1, "level": "normal",
                                                 "placements": [], "quilt": []}})
    return {"tracked": tracked, "untracked": untracked, "corrected": corrected,
            "express": express, "revised": random_record("patchwork", "revised", 3, 12),
            "free": random_record("patchwork", "2014", 4, 12, free=True), "box": box}


@pytest.mark.parametrize("kind", sorted(kinds()))
def test_every_kind_of_record_is_analysed(kind):
    record = kinds()[kind]
    replay(record)                                           # the test record is valid
    seen = []
    result = analyse(record, QUICK, lambda done, total: seen.append((done, total)))
    decisions = [s for s in steps(record)
                 if record.moves[s.index] == "advance" or "buy" in record.moves[s.index]]
    assert len(result["decisions"]) == len(decisions) == len(result["points"]) - 1
    assert seen[-1] == (len(decisions), len(decisions)) and len(seen) == len(decisions)
    assert [d["player"] for d in result["decisions"]] == [s.player for s in decisions]
    assert [p["frame"] for p in result["points"]] == [0] + [s.index + 1 for s in decisions]
    assert all(0 <= p["chance"] <= 1 and 0 <= p["pm"] <= 0.5 for p in result["points"])
    assert all(-1 <= d["cost"] <= 1 and d["text"].startswith(f"Turn {d['turn']}: you chose ")
               for d in result["decisions"])
    json.dumps(result)                                       # plain JSON
    assert result == analyse(record, QUICK)                  # fixed work: reproducible


def test_notes_say_what_is_judged():
    k = kinds()
    notes = {name: " ".join(analyse(r, Settings(iterations=1, playouts=2))["notes"])
             for name, r in k.items()}
    assert "placements are not judged" in notes["untracked"]
    assert "placements are judged" in notes["tracked"] and "not judged" not in notes["tracked"]
    assert "Free layout" in notes["free"] and "Free layout" not in notes["tracked"]
    assert "corrections" in notes["corrected"]
    assert "against the box (it took the second turn, level normal)" in notes["box"]
    assert "not played to its end" in notes["tracked"]


def test_a_free_layout_offers_every_affordable_patch():
    record = kinds()["free"]
    result = analyse(record, QUICK)
    assert any("buy patch #" in d["played"] and "the 1st" not in d["played"]
               for d in result["decisions"])


def test_cost_is_the_movers_loss_priced_with_the_same_playouts():
    record = short(selfplay(2), 30)
    settings = Settings(iterations=60, playouts=40)
    result = analyse(record, settings)
    judged = [d for d in result["decisions"] if d["played_move"] != d["best_move"]]
    assert judged and any(d["player"] == 1 for d in judged)
    spec = start_state(record).spec
    ctx = Context(spec)
    before = {s.index: s for s in steps(record)}
    for d in judged[:6]:
        state = before[d["move"] - 1].state if d["move"] else start_state(record)
        f = settle(fast.flat(state), spec)
        seed = settings.seed * 7919 + d["move"]
        a = price(play(f, tuple(d["played_move"]), ctx), ctx, seed, settings.playouts)
        b = price(play(f, tuple(d["best_move"]), ctx), ctx, seed, settings.playouts)
        sign = 1 if d["player"] == 0 else -1
        assert d["cost"] == pytest.approx(sign * (b.chance - a.chance), abs=1e-3)


def test_a_finished_game_ends_on_certainty():
    record = selfplay(3)
    result = analyse(record, Settings(iterations=20, playouts=8))
    winner = replay(record)[1].winner
    assert result["points"][-1]["chance"] == (1.0 if winner == 0 else 0.0)


def test_costliest_lists_the_players_worst_three():
    result = analyse(short(selfplay(0), 30), QUICK)
    for seat in (0, 1):
        worst = costliest(result, seat)
        mine = sorted((d["cost"] for d in result["decisions"] if d["player"] == seat and d["cost"] > 0),
                      reverse=True)
        assert [d["cost"] for d in worst] == mine[:3]
    lines = report_lines(result, ("Anna", "Ben"))
    assert "Anna: the costliest decisions" in lines and "Ben: the costliest decisions" in lines


def test_settings_are_checked():
    with pytest.raises(ValueError, match="playouts must be a whole number 2..1000000"):
        Settings(playouts=1)
    with pytest.raises(ValueError, match="iterations"):
        Settings(iterations=0)


def test_an_illegal_record_says_which_move():
    bad = replace(short(selfplay(0), 4), moves=("advance", {"buy": 999}))
    with pytest.raises(RecordError, match="move 1"):
        analyse(bad, QUICK)


# ------------------------------------------------------------------ stored with the history

@pytest.fixture
def store(tmp_path):
    history = History(tmp_path)
    ids = []
    for k, record in enumerate([short(selfplay(0), 12), untracked_copy(short(selfplay(1), 10))]):
        game_id = f"20260101-18000{k}-abcde{k}"
        history.file(game_id, replace(record, players=("Anna", "Ben")))
        ids.append(game_id)
    return history, ids


def test_saved_analysis_survives_a_rename_and_a_rebuild_but_not_other_moves(store):
    history, (gid, other) = store
    record = parse_record(history.record_path(gid).read_bytes())
    result = analyse(record, QUICK)
    stored.save(history, gid, result, VERSION)
    assert stored.load(history, gid, VERSION) == result
    assert stored.pending(history, VERSION) == [other]
    history.file(gid, replace(record, players=("Cleo", "Dora")))      # names corrected
    assert stored.load(history, gid, VERSION) == result
    history.db_path.unlink()
    report = history.rebuild()
    assert report.games == 2 and report.analyses == 1
    assert stored.load(history, gid, VERSION) == result
    assert stored.load(history, gid, VERSION + 1) is None
    history.file(gid, replace(record, moves=record.moves[:-1]))       # a different game now
    assert stored.load(history, gid, VERSION) is None
    assert set(stored.pending(history, VERSION)) == {gid, other}
    assert history.rebuild().analyses == 0


def test_a_damaged_cache_file_is_not_taken_back(store):
    history, (gid, _) = store
    stored.save(history, gid, analyse(parse_record(history.record_path(gid).read_bytes()), QUICK),
                VERSION)
    stored.cache_path(history, gid).write_text("{not json")
    assert history.rebuild().analyses == 0
    assert stored.load(history, gid, VERSION) is None


def test_the_json_lines_export_carries_the_analysis_in_meta(store, capsys):
    history, (gid, other) = store
    result = analyse(parse_record(history.record_path(gid).read_bytes()), QUICK)
    stored.save(history, gid, result, VERSION)
    assert main(["export", "--store", str(history.folder)]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    by_moves = {len(line["moves"]): line for line in lines}
    assert by_moves[12]["meta"]["analysis"] == result
    assert "analysis" not in by_moves[10].get("meta", {})
    for line in lines:
        parse_record(line)                                   # still valid records
    assert "analysis" not in json.loads(history.record_path(gid).read_text()).get("meta", {})


# ------------------------------------------------------------------ the commands

def test_analyse_command_and_history_show(store, capsys):
    history, (gid, other) = store
    folder = str(history.folder)
    assert main(["history", "show", gid, "--analysis", "--store", folder]) == 0
    assert f"not analysed yet: 'patchwork-companion analyse {gid}'" in capsys.readouterr().out
    assert main(["analyse", gid, "--store", folder]) == 0
    captured = capsys.readouterr()
    assert "Anna: the costliest decisions" in captured.out
    total = decisions(parse_record(history.record_path(gid).read_bytes()))
    assert captured.err.strip().endswith(f"] move {total} of {total}")
    assert main(["history", "show", gid, "--analysis", "--store", folder]) == 0
    out = capsys.readouterr().out
    assert "chance that Anna wins" in out and "Ben: the costliest decisions" in out
    assert main(["analyse", "--all", "--store", folder]) == 0
    assert "1 games analysed" in capsys.readouterr().out
    assert stored.pending(history, VERSION) == []


def test_analyse_command_errors(store, capsys, tmp_path):
    history, _ = store
    assert main(["analyse", "nope", "--store", str(history.folder)]) == 2
    assert "no game 'nope'" in capsys.readouterr().err
    assert main(["analyse", "--store", str(history.folder)]) == 2
    assert "give one game ID, or --all" in capsys.readouterr().err
    assert main(["analyse", "--all", "--store", str(tmp_path / "empty")]) == 2
    assert "no history in" in capsys.readouterr().err


# ------------------------------------------------------------------ the web worker

def test_web_and_analysis_agree_on_the_version():
    assert review.ANALYSIS_VERSION == VERSION


def test_playing_reads_the_live_feed():
    now = 1000.0
    game = {"game_id": "abc", "over": False, "mode": "turn", "at": now - 5}
    assert review.playing(game, now)
    assert not review.playing({**game, "over": True}, now)
    assert not review.playing({**game, "mode": "end"}, now)
    assert not review.playing({**game, "game_id": None}, now)
    assert not review.playing({**game, "at": now - 2 * review.STALE_SECONDS}, now)
    assert not review.playing(None, now)


def _state(pid: int) -> str:
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]


def _until(condition, what: str, timeout: float = 120.0):
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def test_the_worker_waits_for_the_game_pauses_and_resumes(store):
    history, (gid, other) = store
    snap = {"game_id": "abc", "over": False, "mode": "turn", "at": time.time()}

    async def scenario():
        worker = review.Worker(history.folder, lambda: snap)
        await worker.check()
        assert worker.proc is None                           # a game is being played
        snap["over"] = True
        await worker.check()
        pid = worker.proc.pid
        await asyncio.to_thread(_until, lambda: stored.progress(history) is not None, "progress")
        snap["over"], snap["at"] = False, time.time()
        await worker.check()                                 # pause asked
        assert worker.paused
        await asyncio.to_thread(_until, lambda: _state(pid) == "T", "the worker to stop itself")
        held = stored.progress(history)
        assert review.answer(history, held["game_id"], True)["state"] == "paused"
        await asyncio.to_thread(time.sleep, 0.5)
        assert stored.progress(history) == held              # nothing moves while paused
        snap["over"] = True
        await worker.check()                                 # resumed
        assert not worker.paused
        code = await asyncio.wait_for(worker.proc.wait(), 300)
        assert code == 0
        await worker.close()
    asyncio.run(scenario())
    assert stored.pending(history, VERSION) == []
    body = review.answer(history, gid, False)
    assert body["state"] == "done" and body["players"] == ["Anna", "Ben"]
    assert len(body["analysis"]["points"]) == len(body["analysis"]["decisions"]) + 1
    with pytest.raises(KeyError):
        review.answer(history, "nope", False)


def test_a_pause_taken_back_before_its_safe_point_does_not_stop_the_worker():
    from firmware_py.analysis.worker import Pause
    pause = Pause()
    pause.install()
    try:
        os.kill(os.getpid(), signal.SIGUSR1)
        assert pause.asked
        os.kill(os.getpid(), signal.SIGUSR2)
        pause.point()                                        # would stop this test otherwise
        assert not pause.asked
    finally:
        signal.signal(signal.SIGUSR1, signal.SIG_DFL)
        signal.signal(signal.SIGUSR2, signal.SIG_DFL)
