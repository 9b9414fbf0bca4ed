"""Store benchmark: the game loop while another process locks the history index.

    python benchmarks/store.py lock [--seconds 60]

Another process takes the index's write lock (``BEGIN EXCLUSIVE``, as a
``sqlite3`` shell or a backup tool does) and holds it ``--seconds``; meanwhile
the real service (loop thread, stepped clock) plays a whole game to its end,
so the game is filed while the index is locked, and a pinger keeps asking the
loop for an answer every 5 ms. Lines start with fixed labels:

* ``index locked, loop stall max:`` the longest time the loop took to answer
  one call (an event) while the index was locked, in ms, with the median; given
  for the whole window and for the part after the game was filed (no turns are
  played then, so no journal fsync lies in it), and the same figure for the
  same game played with the index free (``index free, loop stall max:``), which
  is what the machine itself adds;
* ``index locked, row added after release:`` seconds from the release of the
  lock to the game's row being in the index.

Nothing here asserts: the figures are for people (see the README section).
"""
from __future__ import annotations

import argparse
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

HOLDER = """
import sqlite3, sys
db = sqlite3.connect(sys.argv[1], isolation_level=None)
db.execute("BEGIN EXCLUSIVE")
print("locked", flush=True)
sys.stdin.readline()
db.execute("COMMIT")
"""


def lock(seconds: float) -> None:
    """The loop's stall while the index is locked ``seconds`` and a game is filed."""
    free = _play(seconds=0.0, locked=False)
    locked = _play(seconds, locked=True)
    print(f"index locked {seconds:.0f} s (game filed {locked['filed_after']:.1f} s into it), "
          f"{len(locked['answers'])} loop calls")
    for label, run in (("index locked", locked), ("index free", free)):
        answers, after = run["answers"], run["after"]
        print(f"{label}, loop stall max: {max(answers) * 1000:.1f} ms "
              f"(median {statistics.median(answers) * 1000:.2f} ms); after the game was filed: "
              f"{max(after, default=0) * 1000:.1f} ms over {len(after)} calls")
    print(f"index locked, row added after release: {locked['row_after']:.2f} s "
          f"({'in the index' if locked['filed'] else 'MISSING'})")


def _play(seconds: float, locked: bool) -> dict:
    """Play a game to its end with the loop pinged every 5 ms, the index locked by another
    process for ``seconds`` (or free); the loop's answer times."""
    from firmware_py.store import History
    from test_faults_rig import EXPRESS_RECORD, GOLDEN_RECORDS, StepClock, TableDriver, service_for
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


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="what", required=True)
    p = sub.add_parser("lock", help="the loop while another process locks the index")
    p.add_argument("--seconds", type=float, default=60.0)
    args = parser.parse_args(argv)
    if args.what == "lock":
        lock(args.seconds)
    return 0


if __name__ == "__main__":
    sys.exit(main())
