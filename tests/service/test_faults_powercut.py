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


# ------------------------------------------------------------- restore under power cuts
RESTORE_STORE = {f"20261201-19000{i}-00000{i}": GOLDEN_RECORDS[i] for i in (4, 5, 6)}
RESTORE_BACKUP = {f"20261102-1900{i:02d}-bbbb{i:02d}": GOLDEN_RECORDS[10 + i] for i in range(24)}


def restore_fixture(tmp_path: Path) -> tuple[Path, Path]:
    """A backup of 24 games and the names Anna and Ben, and a fresh store of 3 other games
    (and the name Carl) to restore it into. Returns (store, backup file)."""
    from firmware_py.store import History
    from firmware_py.store.backup import backup
    source = tmp_path / "source"
    for game_id, record in RESTORE_BACKUP.items():
        History(source).save(game_id, record)
    (source / "names.json").write_text('{"names": ["Anna", "Ben"]}')
    backup(source, tmp_path / "backup.tar.gz")
    return tmp_path / "store", tmp_path / "backup.tar.gz"


def fresh_store(store: Path) -> None:
    """The store before the restore: 3 games, the name Carl, an index."""
    import shutil
    from firmware_py.store import History
    shutil.rmtree(store, ignore_errors=True)
    for game_id, record in RESTORE_STORE.items():
        History(store).file(game_id, record)
    (store / "names.json").write_text('{"names": ["Carl"]}')


def check_after_restore(store: Path) -> bool:
    """After a cut and what the service does at its start (finish a restore cut short,
    check the index against the records): the store holds its own games untouched and
    either none or all of the backup's, each game in the file of its id, once, the names
    merged exactly when the games came; no staging or temporary file is left. Returns
    True when the restore is complete."""
    from firmware_py.companion.journal import Journal
    from firmware_py.store import History
    from firmware_py.store.backup import finish_pending
    history = History(store)
    history.remove_temporary()                  # the service's start: writes cut short,
    Journal(store).load()                       # the journal's folder's too,
    finish_pending(store)                       # a restore cut short,
    history.reconcile()                         # index against records
    files = {p.stem: parse_record(p.read_text()) for p in (store / "records").glob("*.json")}
    assert set(RESTORE_STORE) <= set(files), "a game of the store was lost"
    complete = set(files) == set(RESTORE_STORE) | set(RESTORE_BACKUP)
    assert complete or set(files) == set(RESTORE_STORE), \
        f"a restore half done: {len(set(files) - set(RESTORE_STORE))} of {len(RESTORE_BACKUP)}"
    for game_id, record in files.items():
        mine = {**RESTORE_STORE, **RESTORE_BACKUP}[game_id]
        assert record.circle == mine.circle and record.moves == mine.moves, \
            f"{game_id} holds another game"
    with history.index() as index:
        rows = sorted(r["id"] for r in index.games(limit=1000))
    assert rows == sorted(files), "index rows and records disagree"
    names = json.loads((store / "names.json").read_text())["names"]
    assert names == (["Carl", "Anna", "Ben"] if complete else ["Carl"]), names
    assert not list(store.glob(".restore-*")) and not list(store.rglob("*.tmp"))
    return complete


RESTORE_CHILD = """
import sys
sys.path.insert(0, sys.argv[1])
from test_faults_rig import KillHooks, _KillOs
import firmware_py.disk as disk
import firmware_py.store.backup as backup
hooks = KillHooks(int(sys.argv[2]), int(sys.argv[3]), sys.argv[4])
disk.os = backup.os = _KillOs(hooks)
from firmware_py.cli import main
status = main(["restore", "--store", sys.argv[5], sys.argv[6]])
print(hooks.ops)
sys.exit(status)
"""


def restore_with_cuts(tmp_path: Path, kills: int, seed: int) -> Counter:
    """``restore`` SIGKILLed ``kills`` times: at a random disk operation of its own (a
    write torn or NUL-filled, an fsync, a rename: staging, marking, the swap) or from
    outside at a random moment (start-up, reading, the index rebuild), each followed by
    the checks above."""
    rng = random.Random(seed)
    store, source = restore_fixture(tmp_path)

    def run(kill_op: int = 0, kill_after: float | None = None):
        cmd = [sys.executable, "-c", RESTORE_CHILD, str(RIG.parent), str(kill_op),
               str(rng.randrange(400)), rng.choice(["torn", "nul"]), str(store), str(source)]
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        if kill_after is not None:
            Child._kill_at(proc, time.monotonic() + kill_after)
        out, _ = proc.communicate(timeout=120)
        return proc.returncode, out
    fresh_store(store)
    started = time.monotonic()
    status, out = run()
    whole, ops = time.monotonic() - started, int(out.split()[-1])
    assert status == 0 and check_after_restore(store)
    stats: Counter = Counter()
    while stats["cuts"] < kills:
        fresh_store(store)
        if rng.random() < 0.7:
            status, _ = run(kill_op=rng.randint(1, ops))
            stats["cut inside a disk operation"] += status == -signal.SIGKILL
        else:
            status, _ = run(kill_after=rng.uniform(0.0, whole * 1.1))
            stats["cut from outside"] += status == -signal.SIGKILL
        if status == -signal.SIGKILL:
            stats["cuts"] += 1
        else:
            assert status == 0
            stats["restore ended before the cut"] += 1
        stats["complete after the start's recovery" if check_after_restore(store)
              else "undone (store unchanged)"] += 1
    print(dict(stats))
    return stats


def test_a_few_cuts_of_restore_lose_nothing(tmp_path):
    counts = restore_with_cuts(tmp_path, 10, seed=3)
    assert counts["cuts"] == 10


# ------------------------------------------ name edits racing the end of games, under cuts
RENAMER = """
import json, sys, time
from pathlib import Path
from firmware_py.companion.names import save_names
from firmware_py.rules import parse_record
from firmware_py.web.library import Library
folder, circles = Path(sys.argv[1]), json.loads(sys.argv[2])
library, k = Library(folder), 0
while True:
    k += 1
    for path in sorted((folder / "records").glob("*.json")):
        try:
            idx = circles.index(list(parse_record(path.read_bytes()).circle))
            library.rename(path.stem, (f"R{idx}-{k}", f"S{idx}-{k}"))
        except (OSError, KeyError, ValueError):
            pass
    save_names(folder / "names.json", [f"N{k}", f"M{k}"])
    time.sleep(0.005)
"""


class Renamer:
    """Another process (the web page behind its PIN) renaming the players of every filed
    game, names encoding the game (``R<i>-<k>``), and rewriting names.json, in a loop."""

    def __init__(self, folder: Path, games):
        circles = json.dumps([list(r.circle) for r in games])
        self.proc = subprocess.Popen([sys.executable, "-c", RENAMER, str(folder), circles],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def kill(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(10)


def check_names_on_games(folder: Path, games) -> None:
    """Each record holds its own game's names (the box's, or a rename of that very game);
    names.json is one whole list written."""
    circles = [tuple(r.circle) for r in games]
    for path in (folder / "records").glob("*.json"):
        record = parse_record(path.read_text())
        idx = circles.index(tuple(record.circle))
        a, b = record.players
        if a.startswith("R"):
            assert a.split("-")[0] == f"R{idx}" and b == f"S{idx}-{a.split('-')[1]}", \
                f"{path.name} (game {idx}) holds names of another game: {record.players}"
    names = folder / "names.json"
    if names.exists():
        listed = json.loads(names.read_text())["names"]
        assert len(listed) == 2 and listed[0][1:] == listed[1][1:], listed


def names_race_with_cuts(tmp_path: Path, kills: int, seed: int) -> Counter:
    """Games played to their end (the rig's child) while another process renames players
    and rewrites names.json; both are SIGKILLed at random moments, ``kills`` times."""
    rng = random.Random(seed)
    stats: Counter = Counter()
    games = [GAMES[3], GAMES[0], GAMES[1]]
    baseline = baseline_run(tmp_path, games)
    episode = 0
    while stats["cuts"] < kills:
        episode += 1
        records = write_records(tmp_path, games, 100 + episode)
        folder = tmp_path / f"race-{episode}"
        folder.mkdir()
        renamer = Renamer(folder / "journal", games)
        while stats["cuts"] < kills:
            acked = last_ack(folder)
            remaining = max(0.05, 1 - progress(acked, games))
            window = baseline["seconds"] * remaining / 3
            child = Child(records, folder, kill_after=rng.uniform(0.0, window))
            if child.ready is not None:
                check_resume(child, acked)
            check_names_on_games(folder / "journal", games)
            if rng.random() < 0.4:
                renamer.kill()
                stats["cuts"] += 1
                stats["renamer cut"] += 1
                renamer = Renamer(folder / "journal", games)
            if child.done is not None:
                break
            assert child.returncode == -signal.SIGKILL, child.lines[-3:]
            stats["cuts"] += 1
            stats["service cut"] += 1
        renamer.kill()
        final = Child(records, folder)
        assert final.done is not None, f"the last run did not finish (rc {final.returncode})"
        check_history(final.done["history"], set(range(len(games))))
        check_records(folder / "journal" / "records", games)
        check_names_on_games(folder / "journal", games)
        stats["games filed"] += len(games)
    print(dict(stats))
    return stats


def test_a_few_cuts_while_names_are_edited_lose_nothing(tmp_path):
    counts = names_race_with_cuts(tmp_path, 8, seed=5)
    assert counts["cuts"] >= 8 and counts["games filed"] >= 3


@pytest.mark.slow
def test_two_hundred_cuts_of_restore_and_of_name_edits_racing_games_lose_nothing(tmp_path):
    """100 SIGKILLs of `restore` and 100 of the service and of a renaming process racing the
    end of games: nothing lost, nothing doubled, nothing filed under the wrong game."""
    (tmp_path / "restore").mkdir()
    (tmp_path / "race").mkdir()
    restored = restore_with_cuts(tmp_path / "restore", 100, seed=28)
    raced = names_race_with_cuts(tmp_path / "race", 100, seed=2028)
    assert restored["cuts"] + raced["cuts"] >= 200
    assert raced["games filed"] >= 3
