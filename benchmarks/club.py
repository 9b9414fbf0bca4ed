"""Club mode's speed: from a turn accepted on a box to the scoreboard page updated.

Starts a throw-away Mosquitto on 127.0.0.1 (Debian's ``mosquitto``), the real
scoreboard (``patchwork-companion club serve``) and 100 simulated boxes in 4
processes (real paho-mqtt bridges, each at 2.5 moves a second: a state and an
event message per move, 5 messages a second a box). A page client reads the
scoreboard's server-sent events; each time a table's turn changes it takes
``now - ts``, where ``ts`` is the time the box accepted that move. Each round
plays fresh games at tables of its own (``r<round>p<process>-NN``): the
scoreboard counts each table's ``(game, seq)`` once, so a round replaying an
earlier round's games at the same tables would measure nothing.

Prints, with fixed labels (medians over the rounds, with min-max):
  club update p50/p99: X / Y ms
  scoreboard rss: Z MB
  box networked process rss: W MB (one box's bridge process, VmHWM)
It never asserts; run ``--quick`` for a short rough run.
"""
from __future__ import annotations

import argparse
import http.client
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port: int, seconds: float = 10) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"nothing listens on port {port}")


def hwm_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def sse_latencies(port: int, stop: threading.Event, out: list[float]) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    conn.request("GET", "/events")
    resp = conn.getresponse()
    turns: dict[str, int] = {}
    while not stop.is_set():
        line = resp.readline()
        if not line:
            break
        if not line.startswith(b"data: "):
            continue
        now = time.time()
        for row in json.loads(line[6:])["tables"]:
            if turns.get(row["table"]) not in (None, row["turn"]) and row["ts"]:
                out.append((now - row["ts"]) * 1000)
            turns[row["table"]] = row["turn"]
    conn.close()


def one_round(cfg: Path, web_port: int, seconds: float, folder: Path,
              number: int) -> tuple[list[float], list[float]]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    stop = threading.Event()
    samples: list[float] = []
    reader = threading.Thread(target=sse_latencies, args=(web_port, stop, samples), daemon=True)
    reader.start()
    boxes = [subprocess.Popen([sys.executable, "-m", "firmware_py.cli", "club", "simulate", "--config",
                               str(cfg), "--boxes", "25", "--rate", "2.5", "--seconds", str(seconds),
                               "--prefix", f"r{number}p{i}"], env=env, stdout=subprocess.DEVNULL)
             for i in range(4)]
    for b in boxes:
        b.wait(seconds + 60)
    stop.set()
    reader.join(5)
    one = subprocess.Popen([sys.executable, "-m", "firmware_py.cli", "club", "simulate", "--config",
                            str(cfg), "--boxes", "1", "--rate", "2", "--seconds", "3", "--prefix", f"rss{number}"],
                           env=env, stdout=subprocess.DEVNULL)
    time.sleep(2.5)
    rss = [hwm_mb(one.pid)]
    one.wait(30)
    return samples, rss


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=10.0, help="length of a round")
    parser.add_argument("--quick", action="store_true", help="2 rounds of 4 s")
    args = parser.parse_args(argv)
    if args.quick:
        args.rounds, args.seconds = 2, 4.0
    with tempfile.TemporaryDirectory(prefix="club-bench-") as tmp:
        folder = Path(tmp)
        port, web_port = free_port(), free_port()
        (folder / "m.conf").write_text(f"listener {port} 127.0.0.1\nallow_anonymous true\n"
                                       f"persistence false\nmax_queued_messages 100000\n")
        cfg = folder / "c.toml"
        cfg.write_text(f'backend = "sim"\n[club]\nenabled = true\nhost = "127.0.0.1"\nport = {port}\nclub = "bench"\n')
        broker = subprocess.Popen(["mosquitto", "-c", str(folder / "m.conf")], stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL)
        wait_port(port)
        board = subprocess.Popen([sys.executable, "-m", "firmware_py.cli", "club", "serve", "--config",
                                  str(cfg), "--port", str(web_port), "--results", str(folder / "results")],
                                 env={**os.environ, "PYTHONPATH": str(ROOT)}, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL)
        try:
            wait_port(web_port)
            p50s, p99s, counts, box_rss = [], [], [], []
            for number in range(args.rounds):
                samples, rss = one_round(cfg, web_port, args.seconds, folder, number)
                if len(samples) >= 2:
                    q = statistics.quantiles(samples, n=100)
                    p50s.append(statistics.median(samples))
                    p99s.append(q[98])
                counts.append(len(samples))
                box_rss += rss
            board_rss = hwm_mb(board.pid)
        finally:
            board.send_signal(signal.SIGINT)
            board.wait(10)
            broker.terminate()
            broker.wait(10)

    def fig(values):
        return f"{statistics.median(values):.1f} (min {min(values):.1f}, max {max(values):.1f})"
    print(f"rounds: {args.rounds} of {args.seconds:.0f} s, 100 boxes at 5 messages/s, "
          f"{statistics.median(counts):.0f} table updates seen per round")
    print(f"club update p50/p99: {statistics.median(p50s):.1f} / {statistics.median(p99s):.1f} ms")
    print(f"club update p50 per round: {fig(p50s)} ms")
    print(f"club update p99 per round: {fig(p99s)} ms")
    print(f"scoreboard rss: {board_rss:.1f} MB")
    print(f"box networked process rss: {statistics.median(box_rss):.1f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
