"""Power cuts: the companion is SIGKILLed at random points and restarted, again and again.

A child process (``test_faults_rig.py`` run as a script) resumes the game from
the real journal and plays a record on through the real ``Service`` (posted
button edges and sensor readings, stepped clock). The parent kills it either
from outside at a random moment (during start-up, resume, a turn, a journal
write, saving the record) or lets it kill itself at a random disk operation
of the journal or the record writer, leaving a torn or NUL-filled write
behind. After every restart: everything the child saw accepted is still there
and nothing more than the one turn in flight; at the end the tally equals an
uninterrupted run's and the record's, and the game record was saved once.
"""
from __future__ import annotations

import json
import random
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import pytest

from firmware_py.rules import dumps_record, replay, parse_record, untracked_copy

from test_faults_rig import EXPRESS_RECORD, GOLDEN_RECORDS, expected_result

RIG = Path(__file__).with_name("test_faults_rig.py")
GAMES = [GOLDEN_RECORDS[1], GOLDEN_RECORDS[3], GOLDEN_RECORDS[8], EXPRESS_RECORD]


class Child:
    """One run of the child: its ``ready`` and ``done`` lines and how it ended."""

    def __init__(self, record: Path, folder: Path, kill_op: int = 0, kill_byte: int = 0,
                 kill_mode: str = "torn", kill_after: float | None = None,
                 from_start: bool = False):
        cmd = [sys.executable, str(RIG), "--record", str(record), "--folder", str(folder),
               "--kill-op", str(kill_op), "--kill-byte", str(kill_byte), "--kill-mode", kill_mode]
        errors = open(folder.parent / f"{folder.name}.stderr", "ab")
        spawned = time.monotonic()
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=errors, text=True)
        self.ready = self.done = None
        lines = []
        if kill_after is not None and from_start:
            self._kill_later(proc, spawned + kill_after)
        else:
            line = proc.stdout.readline()
            lines.append(line)
            if kill_after is not None:
                self._kill_later(proc, time.monotonic() + kill_after)
        # read the rest through the same buffered pipe as the first line (communicate with a
        # timeout reads the raw pipe and would miss a "done" line buffered with "ready")
        hung = threading.Event()
        timer = threading.Timer(120, lambda: (hung.set(), proc.kill()))
        timer.start()
        out = proc.stdout.read()
        proc.wait()
        timer.cancel()
        if hung.is_set():
            raise AssertionError(f"the child hung: {cmd}")
        errors.close()
        for line in lines + out.splitlines():
            if line.strip():
                msg = json.loads(line)
                setattr(self, msg.pop("kind"), msg)
        self.returncode = proc.returncode

    @staticmethod
    def _kill_later(proc, when: float) -> None:
        while time.monotonic() < when and proc.poll() is None:
            time.sleep(min(0.002, max(0.0, when - time.monotonic())))
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)


def last_ack(folder: Path) -> dict:
    """The last turn count the child saw accepted (before it was killed)."""
    try:
        lines = (folder / "acks.jsonl").read_text().splitlines()
    except FileNotFoundError:
        return {"session": False, "groups": 0}
    return json.loads(lines[-1]) if lines else {"session": False, "groups": 0}


def check_resume(child: Child, acked: dict) -> None:
    """Nothing accepted is lost, nothing is applied twice: the resumed game holds every
    acknowledged turn and at most the one in flight, as a prefix of the record."""
    ready = child.ready
    assert ready is not None, "the child never came up"
    assert ready["prefix_ok"], "the resumed game is not a prefix of the record"
    if acked["session"]:
        assert ready["session"], "an accepted game setup was lost"
    assert acked["groups"] <= ready["groups"] <= acked["groups"] + 1, (
        f"acknowledged {acked['groups']} turns, resumed {ready['groups']}")


def play_with_power_cuts(tmp_path: Path, record, n: int, kills: int, rng: random.Random,
                         baseline: dict, stats: Counter) -> int:
    """Play ``record`` from scratch in a fresh folder, cutting the power about ``kills``
    times spread over the game; returns the number of cuts made."""
    path = tmp_path / f"record-{n}.json"
    path.write_text(dumps_record(record))
    folder = tmp_path / f"cut-{n}"
    folder.mkdir()
    total_moves = len(untracked_copy(record).moves)
    cuts = 0
    while cuts < kills:
        acked = last_ack(folder)
        left = max(1, kills - cuts)
        remaining = max(0.05, 1 - acked["groups"] / max(1, total_moves))
        if rng.random() < 0.5:                  # the child dies inside a disk operation
            ops = max(2, int(baseline["ops"] * remaining * 2 / left))
            mode = rng.choice(["torn", "nul"])
            child = Child(path, folder, kill_op=rng.randint(1, ops),
                          kill_byte=rng.randrange(400), kill_mode=mode)
            stats[f"inside a disk operation ({mode} write left)"] += child.done is None
        elif rng.random() < 0.2:                # pulled from outside while starting/resuming
            child = Child(path, folder, kill_after=rng.uniform(0.0, 0.3), from_start=True)
            stats["from outside, while starting"] += child.done is None
        else:                                   # pulled from outside at any moment of play
            window = baseline["seconds"] * remaining * 2 / left
            child = Child(path, folder, kill_after=rng.uniform(0.0, window))
            stats["from outside, while playing"] += child.done is None
        if child.ready is not None:
            check_resume(child, acked)
            stats["restarts that repaired the journal"] += bool(child.ready["problems"])
            stats["restarts with the turn in flight kept"] += child.ready["groups"] > acked["groups"]
        if child.done is not None:
            break                               # the game ended before the cut came
        assert child.returncode == -signal.SIGKILL, f"child ended with {child.returncode}"
        cuts += 1
    acked = last_ack(folder)
    final = Child(path, folder)
    check_resume(final, acked)
    done = final.done
    assert done is not None, f"the last run did not finish (rc {final.returncode})"
    expected = expected_result(record)
    assert (done["scores"], done["winner"]) == (baseline["scores"], baseline["winner"])
    assert (done["scores"], done["winner"]) == (list(expected.scores), expected.winner)
    assert done["moves"] == baseline["moves"] and done["groups"] == baseline["groups"]
    assert len(done["records"]) == 1, f"the game record was saved {len(done['records'])} times"
    saved = parse_record(Path(done["saved_to"]).read_text())
    assert replay(saved)[1].scores == expected.scores
    return cuts


def baseline_run(tmp_path: Path, record, n: int) -> dict:
    """An uninterrupted run of the child: the reference tally, disk operations and time."""
    path = tmp_path / f"record-{n}.json"
    path.write_text(dumps_record(record))
    folder = tmp_path / f"base-{n}"
    folder.mkdir()
    child = Child(path, folder)
    assert child.returncode == 0 and child.done is not None
    return child.done


def run_power_cuts(tmp_path: Path, total: int, games, seed: int) -> Counter:
    """Cut the power ``total`` times over repeated games; returns counts for the report."""
    rng = random.Random(seed)
    stats: Counter = Counter()
    baselines = [baseline_run(tmp_path, record, n) for n, record in enumerate(games)]
    cuts = episodes = 0
    while cuts < total:
        n = episodes % len(games)
        kills = min(total - cuts, rng.randint(15, 30))
        cuts += play_with_power_cuts(tmp_path, games[n], 100 + episodes, kills, rng,
                                     baselines[n], stats)
        episodes += 1
    stats.update(cuts=cuts, episodes=episodes)
    print(dict(stats))
    return stats


def test_a_few_power_cuts_lose_nothing(tmp_path):
    """The quick version (runs everywhere): 12 cuts in one Patchwork game."""
    counts = run_power_cuts(tmp_path, 12, [GAMES[0]], seed=7)
    assert counts["cuts"] >= 12


@pytest.mark.slow
def test_two_hundred_power_cuts_across_several_games_lose_nothing(tmp_path):
    """200 cuts over Patchwork games on both boards (with a 7x7 claim) and an Express game
    (leather patches placed and set aside); each game ends with the uninterrupted tally."""
    counts = run_power_cuts(tmp_path, 200, GAMES, seed=20240611)
    assert counts["cuts"] >= 200 and counts["episodes"] >= len(GAMES)
