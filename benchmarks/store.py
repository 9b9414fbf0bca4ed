"""Store benchmark: the game loop while another process locks the history index; the
memory of restoring backups; the one-time import of an older version's journal.

    python benchmarks/store.py lock [--seconds 60]
    python benchmarks/store.py restore [--games 2000]
    python benchmarks/store.py legacy [--games 10000]

Another process takes the index's write lock (``BEGIN EXCLUSIVE``, as a
``sqlite3`` shell or a backup tool does) and holds it ``--seconds``; meanwhile
the real service (loop thread, stepped clock) plays a whole game to its end,
so the game is filed while the index is locked, and a pinger keeps asking the
loop for an answer every 5 ms. Lines start with fixed labels:

* ``index locked, loop stall max:`` the longest time the loop took to answer
  one call (an event) while the index was locked, in ms, with the median and
  the 99th percentile; given
  for the whole window and for the part after the game was filed (no turns are
  played then, so no journal fsync lies in it), and the same figure for the
  same game played with the index free (``index free, loop stall max:``), which
  is what the machine itself adds;
* ``index locked, row added after release:`` seconds from the release of the
  lock to the game's row being in the index.

``restore`` restores backups of at most 10 MB, each in a fresh process, and
prints its peak resident memory (``VmHWM`` of ``/proc/self/status``: the
``ru_maxrss`` of a process started by a large one carries the parent's figure):

* ``restore peak rss <case>:`` MB, and how it ended (restored, or refused with
  the start of the message); ``python + package alone:`` the same process
  importing what a restore imports, restoring nothing. The cases: a real
  backup of ``--games`` games; 0.4 MB of records padded with spaces; a member
  with a negative size; a pax header claiming 1 GB; one incompressible 10 MB
  member; 10 MB of tiny members.

``legacy`` writes a journal of the old design (every game in one file, 31
entries a game) and loads it in a fresh process:

* ``legacy journal load <N> games:`` seconds and peak resident memory (MB),
  with the file's size.

Nothing here asserts: the figures are for people (see the README section).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]
os.environ.setdefault("BLINKA_FORCEBOARD", "OS_AGNOSTIC_BOARD")
os.environ.setdefault("BLINKA_FORCECHIP", "OS_AGNOSTIC")

def lock(seconds: float) -> None:
    """The loop's stall while the index is locked ``seconds`` and a game is filed."""
    free = _play(seconds=0.0, locked=False)
    locked = _play(seconds, locked=True)
    print(f"index locked {seconds:.0f} s (game filed {locked['filed_after']:.1f} s into it), "
          f"{len(locked['answers'])} loop calls")
    for label, run in (("index locked", locked), ("index free", free)):
        answers, after = run["answers"], run["after"]
        p99 = statistics.quantiles(answers, n=100)[98]
        print(f"{label}, loop stall max: {max(answers) * 1000:.1f} ms "
              f"(median {statistics.median(answers) * 1000:.2f} ms, p99 {p99 * 1000:.1f} ms); "
              f"after the game was filed: {max(after, default=0) * 1000:.1f} ms over "
              f"{len(after)} calls")
    print(f"index locked, row added after release: {locked['row_after']:.2f} s "
          f"({'in the index' if locked['filed'] else 'MISSING'})")


def _play(seconds: float, locked: bool) -> dict:
    """Play a game to its end with the loop pinged every 5 ms, the index locked by another
    process for ``seconds`` (or free); the loop's answer times."""
    from firmware_py.store import History
    from test_faults_rig import EXPRESS_RECORD, GOLDEN_RECORDS, StepClock, TableDriver, service_for
    from test_store_indexer import HOLDER
    folder = Path(tempfile.mkdtemp(prefix="store-bench-")) / "journal"
    History(folder).file("earlier", GOLDEN_RECORDS[3])
    holder = None
    if locked:
        holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(folder / "history.sqlite3")],
                                  text=True, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        assert holder.stdout.readline().strip() == "locked"
    locked_at = time.monotonic()
    clock = StepClock()
    service = service_for(folder, EXPRESS_RECORD, clock)
    answers: list[float] = []
    stop = threading.Event()

    def ping():
        while not stop.is_set():
            t0 = time.perf_counter()
            service.call(lambda: None, timeout=120)
            answers.append(time.perf_counter() - t0)
            time.sleep(0.005)
    pinger = threading.Thread(target=ping, daemon=True)
    pinger.start()
    final = TableDriver(service, clock, EXPRESS_RECORD).play()
    filed_after = time.monotonic() - locked_at
    during = len(answers)
    time.sleep(max(0.0, seconds - (time.monotonic() - locked_at)))
    stop.set()
    pinger.join()
    if holder is not None:
        holder.stdin.write("\n")
        holder.stdin.flush()
        holder.wait(30)
    released = time.monotonic()
    service.keeper.indexer.wait_idle(120)
    row_after = time.monotonic() - released
    with History(folder).index() as index:
        filed = index.has(Path(final.saved_to).stem)
    service.stop()
    return {"answers": answers, "after": answers[during:], "filed_after": filed_after,
            "row_after": row_after, "filed": filed}


def _child(code: str, *args: str) -> dict:
    """Run ``code`` in a fresh interpreter (argv: ``args``); its last line of JSON, plus its
    peak resident memory in MB."""
    script = ("import json, sys, time; sys.path[:0] = %r\n" % [str(ROOT)]) + code + \
        "\nout['rss_mb'] = int(open('/proc/self/status').read().split('VmHWM:')[1].split()[0]) / 1024" \
        "\nprint(json.dumps(out))"
    done = subprocess.run([sys.executable, "-c", script, *args], capture_output=True, text=True,
                          timeout=1800)
    if done.returncode:
        return {"rss_mb": float("nan"), "said": done.stderr.strip().splitlines()[-1:]}
    return json.loads(done.stdout.strip().splitlines()[-1])


RESTORE_CHILD = """
from firmware_py.store.backup import BackupError, restore
out = {}
if sys.argv[2] != "-":
    t0 = time.perf_counter()
    try:
        done = restore(sys.argv[1], sys.argv[2])
        out["said"] = f"restored {done.games} games"
    except BackupError as exc:
        out["said"] = "refused: " + str(exc).split(": ", 1)[1][:70]
    out["seconds"] = time.perf_counter() - t0
"""


def restore_cases(games: int) -> None:
    """Peak memory of restoring each case of backup (each at most 10 MB)."""
    import gzip
    from firmware_py.rules import dumps_record
    from firmware_py.store import History
    from firmware_py.store.backup import backup
    from test_faults_rig import GOLDEN_RECORDS
    from test_store_backup import header, manifest, member, octal
    work = Path(tempfile.mkdtemp(prefix="restore-bench-"))
    store = work / "store"
    history = History(store)
    for i in range(games):
        history.save(f"20260101-000000-{i:06x}", GOLDEN_RECORDS[i % len(GOLDEN_RECORDS)])
    cases = {f"{games} games": work / "real.tar.gz"}
    backup(store, cases[f"{games} games"])
    padded = dumps_record(GOLDEN_RECORDS[0]).encode() + b" " * 60_000
    raw = {
        "padded records (0.4 MB)": [member("backup.json", manifest(400))] + [
            member(f"records/20260101-000000-{i:06x}.json", padded) for i in range(400)],
        "negative size": [member("backup.json", manifest(1)), header("records/x.json", b"\xff" * 12)],
        "1 GB pax header": [header("././@PaxHeader", octal(1 << 30), b"x"), os.urandom(1 << 20)],
        "one 10 MB member": [member("records/big.json", os.urandom(10 << 20))],
        "60,000 tiny members (the first refused)": [
            member(f"records/{i:07d}.json", b"{}") for i in range(60_000)],
    }
    for label, parts in raw.items():
        path = work / f"{len(cases)}.tar.gz"
        data = gzip.compress(b"".join(parts) + b"\0" * 1024, compresslevel=6)
        path.write_bytes(data[:10 << 20])
        cases[label] = path
    base = _child(RESTORE_CHILD, str(work / "unused"), "-")
    print(f"restore, python + package alone: {base['rss_mb']:.1f} MB")
    for label, path in cases.items():
        target = work / f"into-{abs(hash(label))}"
        got = _child(RESTORE_CHILD, str(target), str(path))
        print(f"restore peak rss {label}: {got['rss_mb']:.1f} MB "
              f"({path.stat().st_size / 1e6:.2f} MB file, {got.get('seconds', 0):.1f} s; "
              f"{got['said']})")


LEGACY_CHILD = """
from firmware_py.companion.journal import Journal
t0 = time.perf_counter()
loaded = Journal(sys.argv[1]).load()
out = {"seconds": time.perf_counter() - t0, "entries": len(loaded.entries)}
"""


def legacy(games: int) -> None:
    """Load a journal of the old design holding ``games`` games, in a fresh process."""
    from test_companion_journal import old_design_journal
    folder = Path(tempfile.mkdtemp(prefix="legacy-bench-"))
    size = old_design_journal(folder, games)
    got = _child(LEGACY_CHILD, str(folder))
    print(f"legacy journal load {games} games: {got['seconds']:.1f} s, peak rss "
          f"{got['rss_mb']:.1f} MB ({size / 1e6:.1f} MB file, {got['entries']} entries resumed)")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="what", required=True)
    p = sub.add_parser("lock", help="the loop while another process locks the index")
    p.add_argument("--seconds", type=float, default=60.0)
    p = sub.add_parser("restore", help="peak memory of restoring backups of up to 10 MB")
    p.add_argument("--games", type=int, default=2000)
    p = sub.add_parser("legacy", help="loading an older version's journal of many games")
    p.add_argument("--games", type=int, default=10_000)
    args = parser.parse_args(argv)
    if args.what == "lock":
        lock(args.seconds)
    elif args.what == "restore":
        restore_cases(args.games)
    else:
        legacy(args.games)
    return 0


if __name__ == "__main__":
    sys.exit(main())
