"""Power cuts: the companion is SIGKILLed at random points and restarted, again and again.

A child process (``test_faults_rig.py`` run as a script) resumes from the real
journal and plays a sequence of game records through the real ``Service``
(posted button edges and sensor readings, stepped clock), leaving each end
screen for the next game, so finished games move into the history
(``records/`` and the SQLite index) under fire. The parent kills it from
outside at a random moment (during start-up, resume, a turn, a journal write,
filing a game), or lets it kill itself at a random disk operation of the
journal, the record writer or the index commit (before or after it), a write
it kills being torn or NUL-filled; one kind of cut aims only at the moments a
finished game moves into the history.

After every restart: everything the child saw accepted is still there and at
most the one step in flight more; no game goes back; the history holds
exactly the games finished so far, each once. At the end every game's record
replays to an uninterrupted run's tally and no temporary file is left.

The child's lines are read by one reader thread to the end of its output (a
``readline()`` followed by ``communicate()`` would lose lines still in the
file object's buffer).
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

from firmware_py.rules import dumps_record, parse_record, replay, untracked_copy

from test_faults_rig import EXPRESS_RECORD, GOLDEN_RECORDS, expected_result

RIG = Path(__file__).with_name("test_faults_rig.py")
GAMES = [GOLDEN_RECORDS[1], GOLDEN_RECORDS[3], GOLDEN_RECORDS[8], EXPRESS_RECORD]


class Child:
    """One run of the child: its ``ready`` and ``done`` lines and how it ended.

    ``kill_after`` seconds after the ``ready`` line (or after spawning, with
    ``from_start``) the child is SIGKILLed from outside, if it still runs.
    """

    def __init__(self, records: list[Path], folder: Path, kill_op: int = 0, kill_byte: int = 0,
                 kill_mode: str = "torn", kill_scope: str = "all",
                 kill_after: float | None = None, from_start: bool = False):
        cmd = [sys.executable, str(RIG), "--record", *map(str, records), "--folder", str(folder),
               "--kill-op", str(kill_op), "--kill-byte", str(kill_byte), "--kill-mode", kill_mode,
               "--kill-scope", kill_scope]
        spawned = time.monotonic()
        with open(folder.parent / f"{folder.name}.stderr", "ab") as errors:
            proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=errors, text=True)
            lines: list[str] = []
            first = threading.Event()
            reader = threading.Thread(target=self._read, args=(proc, lines, first), daemon=True)
            reader.start()
            if kill_after is not None:
                if not from_start:
                    first.wait(120)
                    spawned = time.monotonic()
                self._kill_at(proc, spawned + kill_after)
            reader.join(180)
            if reader.is_alive():
                proc.kill()
                raise AssertionError(f"the child hung: {cmd}")
            proc.wait(10)
        self.ready = self.done = None
        self.lines = list(lines)
        for line in lines:
            if line.strip():
                msg = json.loads(line)
                setattr(self, msg.pop("kind"), msg)
        self.returncode = proc.returncode

    @staticmethod
    def _read(proc, lines: list[str], first: threading.Event) -> None:
        """Every line of the child's output to its end (the one reader of the pipe)."""
        for line in proc.stdout:
            lines.append(line)
            first.set()
        first.set()

    @staticmethod
    def _kill_at(proc, when: float) -> None:
        while time.monotonic() < when and proc.poll() is None:
            time.sleep(min(0.002, max(0.0, when - time.monotonic())))
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)


def last_ack(folder: Path) -> dict | None:
    """The last step the child saw accepted (game index, turns, ended) before it was killed."""
    try:
        lines = (folder / "acks.jsonl").read_text().splitlines()
    except FileNotFoundError:
        return None
    return json.loads(lines[-1]) if lines else None


def check_history(history: dict, finished: set[int]) -> None:
    """The history holds exactly the games in ``finished``, each once, records and index agree."""
    games = history["games"]
    assert len(games) == len(set(games)), f"a game is in the history twice: {games}"
    assert set(games) == finished, f"history holds games {sorted(games)}, expected {sorted(finished)}"
    assert history["rows"] == history["files"] and not history["unindexed"], history


def check_resume(child: Child, acked: dict | None) -> None:
    """Nothing accepted is lost, nothing is applied twice, no game goes back, and the
    history holds exactly the games finished before the one resumed."""
    ready = child.ready
    assert ready is not None, "the child never came up"
    assert ready["prefix_ok"], "the resumed game is not a prefix of its record"
    game = ready["game"]
    if acked is not None and acked["game"] is not None:
        assert game is not None, "an accepted game setup was lost"
        if game == acked["game"]:
            assert acked["groups"] <= ready["groups"] <= acked["groups"] + 1, (
                f"game {game}: acknowledged {acked['groups']} turns, resumed {ready['groups']}")
            if acked["ended"]:
                assert ready["mode"] == "end", "an ended game was resumed for play"
        else:
            assert game == acked["game"] + 1 and acked["ended"] and ready["groups"] == 0, (
                f"acknowledged {acked}, resumed game {game} at {ready['groups']} turns")
    if game is None:
        check_history(ready["history"], set(range(ready["history"]["rows"])))
    else:
        check_history(ready["history"], set(range(game + (ready["mode"] == "end"))))


def write_records(tmp_path: Path, games, n: int) -> list[Path]:
    paths = []
    for i, record in enumerate(games):
        path = tmp_path / f"record-{n}-{i}.json"
        path.write_text(dumps_record(record))
        paths.append(path)
    return paths


def progress(acked: dict | None, games) -> float:
    """How much of the sequence is played (0..1) by the last acknowledgement."""
    if acked is None or acked["game"] is None:
        return 0.0
    total = len(untracked_copy(games[acked["game"]]).moves)
    return min(1.0, (acked["game"] + acked["groups"] / max(1, total)) / len(games))


def play_with_power_cuts(tmp_path: Path, games, n: int, kills: int, rng: random.Random,
                         baseline: dict, stats: Counter) -> int:
    """Play ``games`` one after the other from scratch in a fresh folder, cutting the power
    about ``kills`` times spread over them; returns the number of cuts made."""
    records = write_records(tmp_path, games, n)
    folder = tmp_path / f"cut-{n}"
    folder.mkdir()
    cuts = 0
    while cuts < kills:
        acked = last_ack(folder)
        left = max(1, kills - cuts)
        remaining = max(0.05, 1 - progress(acked, games))
        roll = rng.random()
        if roll < 0.4:                          # the child dies inside a disk operation
            ops = max(2, int(baseline["ops"] * remaining * 2 / left))
            mode = rng.choice(["torn", "nul"])
            child = Child(records, folder, kill_op=rng.randint(1, ops),
                          kill_byte=rng.randrange(400), kill_mode=mode)
            stats[f"inside a disk operation ({mode} write left)"] += child.done is None
        elif roll < 0.6:                        # ... while a finished game moves into the history
            ops = max(2, int(baseline["filing_ops"] * remaining * 2 / left))
            child = Child(records, folder, kill_op=rng.randint(1, ops), kill_scope="filing",
                          kill_byte=rng.randrange(400), kill_mode=rng.choice(["torn", "nul"]))
            stats["while a finished game moves into the history"] += child.done is None
        elif roll < 0.7:                        # pulled from outside while starting/resuming
            child = Child(records, folder, kill_after=rng.uniform(0.0, 0.3), from_start=True)
            stats["from outside, while starting"] += child.done is None
        else:                                   # pulled from outside at any moment of play
            window = baseline["seconds"] * remaining * 2 / left
            child = Child(records, folder, kill_after=rng.uniform(0.0, window))
            stats["from outside, while playing"] += child.done is None
        if child.ready is not None:
            check_resume(child, acked)
            stats["restarts that repaired the journal"] += bool(child.ready["problems"])
            stats["restarts on an end screen"] += child.ready["mode"] == "end"
        if child.done is not None:
            break                               # the last game ended before the cut came
        assert child.returncode == -signal.SIGKILL, \
            f"child ended with {child.returncode}: {child.lines[-3:]}"
        cuts += 1
    acked = last_ack(folder)
    final = Child(records, folder)
    check_resume(final, acked)
    done = final.done
    assert done is not None, f"the last run did not finish (rc {final.returncode})"
    check_history(done["history"], set(range(len(games))))
    assert done["leftovers"] == [], f"temporary files left: {done['leftovers']}"
    check_records(folder / "journal" / "records", games)
    stats["games filed"] += len(games)
    return cuts


def check_records(folder: Path, games) -> None:
    """Each game's saved record holds exactly its moves and replays to its tally."""
    saved = {tuple(r.circle): r for r in (parse_record(p.read_text()) for p in folder.glob("*.json"))}
    assert len(saved) == len(games)
    for record in games:
        mine = saved[tuple(record.circle)]
        assert list(mine.moves) == list(untracked_copy(record).moves)
        expected = expected_result(record)
        assert replay(mine)[1].scores == expected.scores
        assert mine.result == {"scores": expected.scores, "winner": expected.winner}


def baseline_run(tmp_path: Path, games) -> dict:
    """An uninterrupted run of the child: disk operations and time of the whole sequence."""
    folder = tmp_path / "base"
    folder.mkdir()
    child = Child(write_records(tmp_path, games, 0), folder)
    assert child.returncode == 0 and child.done is not None, child.lines
    check_history(child.done["history"], set(range(len(games))))
    for result, record in zip(child.done["results"][-1:], games[-1:]):
        assert (result["scores"], result["winner"]) == \
            (expected_result(record).scores, expected_result(record).winner)
    check_records(folder / "journal" / "records", games)
    return child.done


def run_power_cuts(tmp_path: Path, total: int, games, seed: int, kills=(40, 70)) -> Counter:
    """Cut the power ``total`` times over repeated sequences of ``games``; returns counts."""
    rng = random.Random(seed)
    stats: Counter = Counter()
    baseline = baseline_run(tmp_path, games)
    cuts = episodes = 0
    while cuts < total:
        episodes += 1
        order = list(games)
        rng.shuffle(order)
        cuts += play_with_power_cuts(tmp_path, order, episodes, min(total - cuts, rng.randint(*kills)),
                                     rng, baseline, stats)
    stats.update(cuts=cuts, episodes=episodes)
    print(dict(stats))
    return stats


def test_a_few_power_cuts_lose_nothing(tmp_path):
    """The quick version (runs everywhere): 12 cuts over two games, so that the first moves
    into the history under fire."""
    counts = run_power_cuts(tmp_path, 12, [GAMES[3], GAMES[0]], seed=7, kills=(12, 12))
    assert counts["cuts"] >= 12 and counts["games filed"] >= 2


@pytest.mark.slow
def test_two_hundred_power_cuts_across_several_games_lose_nothing(tmp_path):
    """200 cuts over sequences of Patchwork games on both boards (with a 7x7 claim) and an
    Express game (leather patches placed and set aside); every game ends with the
    uninterrupted tally and is in the history exactly once."""
    counts = run_power_cuts(tmp_path, 200, GAMES, seed=20240611)
    assert counts["cuts"] >= 200 and counts["episodes"] >= 2
    assert counts["while a finished game moves into the history"] >= 20
