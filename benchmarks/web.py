"""Web benchmark: the game service on the "sim" backend, the web process, 20 open pages.

    python benchmarks/web.py [--changes 200] [--clients 20] [--games 10000] [--quick]

Prints, with the machine it ran on:

* ``web update p50/p95``: from a state change at the table (the release edge of a
  NEXT press on gpiozero's MockFactory pin, which moves the cursor on the OLED) to
  the server-sent event carrying the new state being read by each of the open
  pages (``--clients`` of them, each on its own connection and thread), over
  ``--changes`` changes; the companion runs in this process (its loop, its
  output threads and the live-feed publisher, as in ``run``), the web page is
  ``patchwork-companion web`` in its own process, as on the Pi;
* ``web rss``: the web process's resident memory at the end (VmRSS; and its
  peak, VmHWM);
* ``history page with N games``: the time to answer ``GET /history`` (the
  newest 50 of a store of ``--games`` finished games), median of 20 requests,
  and the same for a page filtered by player and game;
* ``web export peak``: the web process's resting RSS and its peak (VmHWM, reset
  through ``/proc/PID/clear_refs`` first) while the whole history is downloaded
  as CSV, JSON Lines and BG Stats (streamed: the target is a peak within 10 MB
  of the resting size);
* ``first load of <page>``: the bytes a browser fetches to show each page the
  first time (HTML, stylesheet, script, the patch pictures; target < 100 KB).

Nothing here asserts: the figures are for people (see the README section).
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

os.environ.setdefault("BLINKA_FORCEBOARD", "OS_AGNOSTIC_BOARD")
os.environ.setdefault("BLINKA_FORCECHIP", "OS_AGNOSTIC")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from firmware_py.service.assembly import start_companion          # noqa: E402
from firmware_py.config import validate              # noqa: E402
from firmware_py.rules import dumps_record, parse_record  # noqa: E402


def machine() -> str:
    """One line naming the machine (CPUs, model, Python, kernel)."""
    model = "?"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith(("model name", "Model")):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return (f"{os.cpu_count()} CPUs ({model}), Python {platform.python_version()}, "
            f"{platform.system()} {platform.release()}")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_web(config: Path, port: int, store: Path) -> subprocess.Popen:
    """``patchwork-companion web`` in its own process; returns once it answers."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "firmware_py.cli", "web", "--config", str(config),
                             "--port", str(port), "--store", str(store)], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return proc
        except OSError:
            time.sleep(0.05)
    proc.kill()
    raise RuntimeError(f"the web process did not start: {proc.stderr.read().decode()}")


class Page(threading.Thread):
    """One open live page: reads /events and notes when each event arrived."""

    def __init__(self, port: int):
        super().__init__(daemon=True)
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=30)
        self.sock.sendall(b"GET /events HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                          b"Accept: text/event-stream\r\n\r\n")
        self.events: list[tuple[float, dict]] = []
        self.lock = threading.Lock()

    def run(self) -> None:
        reader = self.sock.makefile("rb")
        try:
            for line in reader:
                if line.startswith(b"data: "):
                    at = time.monotonic()
                    snap = json.loads(line[6:])
                    with self.lock:
                        self.events.append((at, snap))
        except (OSError, ValueError):
            pass

    def first_after(self, since: float, test) -> float | None:
        with self.lock:
            for at, snap in self.events:
                if at >= since and test(snap):
                    return at
        return None


def updates(changes: int, clients: int, work: Path, say) -> dict:
    """Latency of state change -> event read by every page; RSS of the web process."""
    feed = work / "feed"
    store = work / "store-empty"
    config = work / "config.toml"
    config.write_text(f'backend = "sim"\n[feed]\ndir = "{feed}"\n[journal]\ndir = "{store}"\n')
    cfg = validate({"backend": "sim", "feed": {"dir": str(feed)}, "journal": {"dir": str(store)},
                    "buttons": {"hold_seconds": 1.0}}, "benchmark")
    companion = start_companion(cfg, folder=work / "journal", feed=feed)
    port = free_port()
    web = start_web(config, port, store)
    pages = [Page(port) for _ in range(clients)]
    for page in pages:
        page.start()
    factory = companion.parts.pin_factory
    pin = factory.pin(companion.parts.buttons.pins["next"])
    latencies: list[float] = []
    try:
        deadline = time.monotonic() + 30
        while any(not p.events for p in pages) and time.monotonic() < deadline:
            time.sleep(0.01)                    # every page has the first snapshot
        say(f"{clients} pages open")
        for k in range(changes):
            want = "> Patchwork Express" if k % 2 == 0 else "> Patchwork"
            pin.drive_low()
            time.sleep(0.03)
            pressed = time.monotonic()
            pin.drive_high()                    # a press counts on its release
            test = (lambda s, w=want: w in s["oled"]["lines"])
            deadline = pressed + 10
            got = [None] * clients
            while time.monotonic() < deadline and None in got:
                for i, page in enumerate(pages):
                    if got[i] is None:
                        got[i] = page.first_after(pressed, test)
                time.sleep(0.001)
            latencies += [(at - pressed) * 1000 for at in got if at is not None]
            time.sleep(0.02)
        status = Path(f"/proc/{web.pid}/status").read_text()
        rss = {k: int(line.split()[1]) / 1024 for line in status.splitlines()
               for k in ("VmRSS", "VmHWM") if line.startswith(k + ":")}
    finally:
        web.terminate()
        web.wait(10)
        companion.close()
    latencies.sort()
    return {"p50_ms": statistics.median(latencies),
            "p95_ms": latencies[int(0.95 * (len(latencies) - 1))],
            "samples": len(latencies), "expected": changes * clients,
            "rss_mb": rss["VmRSS"], "hwm_mb": rss["VmHWM"]}


def fill(store: Path, games: int, say) -> None:
    """``games`` finished games: record files written, then the index built from them."""
    from firmware_py.store import History
    lines = (ROOT / "tests/data/engine-selfplay.jsonl").read_text().splitlines()
    records = [parse_record(line) for line in lines if line.strip()]
    names = ("Anna", "Ben", "Cleo", "Dora", "Emil", "Finn", "Gina", "Hugo")
    folder = store / "records"
    folder.mkdir(parents=True, exist_ok=True)
    for k in range(games):
        record = records[k % len(records)]
        day, hour = divmod(k, 24)
        meta = {"started": f"2020-01-01T00:00:00+00:00", "duration_s": 1500 + k % 900}
        stamp = time.gmtime(1577836800 + k * 3600)
        meta["started"] = time.strftime("%Y-%m-%dT%H:%M:%S+00:00", stamp)
        players = (names[k % 8], names[(k // 8 + k + 1) % 8] if (k // 8 + k + 1) % 8 != k % 8
                   else names[(k + 3) % 8])
        text = dumps_record(type(record)(**{**record.__dict__, "players": players,
                                            "result": None, "meta": meta}))
        (folder / f"{time.strftime('%Y%m%d-%H%M%S', stamp)}-{k:06x}.json").write_text(text + "\n")
    say(f"{games} records written; indexing")
    report = History(store).rebuild()
    say(f"{report.games} games indexed")


def history_page(games: int, work: Path, say) -> dict:
    """Median time of GET /history (and a filtered one) on a store of ``games`` games."""
    store = work / "store"
    fill(store, games, say)
    config = work / "config-history.toml"
    config.write_text(f'backend = "sim"\n[feed]\ndir = "{work / "feed2"}"\n'
                      f'[journal]\ndir = "{store}"\n')
    port = free_port()
    web = start_web(config, port, store)
    out = {}
    try:
        for label, path in (("plain", "/history"), ("filtered", "/history?player=Cleo&game=patchwork"),
                            ("page 100", "/history?page=100")):
            times = []
            for _ in range(21):
                began = time.monotonic()
                with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
                    s.sendall(f"GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n".encode())
                    body = b""
                    while chunk := s.recv(65536):
                        body += chunk
                times.append((time.monotonic() - began) * 1000)
                assert body.startswith(b"HTTP/1.0 200") or body.startswith(b"HTTP/1.1 200"), body[:80]
            out[label] = statistics.median(times[1:])      # the first warms the caches
        out.update(export_memory(web.pid, port, say))
        out["weights"] = page_weights(port, store)
    finally:
        web.terminate()
        web.wait(10)
    return out


def _get(port: int, path: str) -> bytes:
    """The body of GET ``path`` (HTTP/1.0), read to the end."""
    with socket.create_connection(("127.0.0.1", port), timeout=120) as s:
        s.sendall(f"GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n".encode())
        data = bytearray()
        while chunk := s.recv(1 << 16):
            data += chunk
    head, _, body = bytes(data).partition(b"\r\n\r\n")
    assert b" 200 " in head.split(b"\r\n")[0], head[:80]
    return body


def _memory(pid: int) -> dict:
    status = Path(f"/proc/{pid}/status").read_text()
    return {k: int(line.split()[1]) / 1024 for line in status.splitlines()
            for k in ("VmRSS", "VmHWM") if line.startswith(k + ":")}


def export_memory(pid: int, port: int, say) -> dict:
    """The web process's resting RSS, then its peak (VmHWM, reset first through
    ``clear_refs``) while each export of the whole history is downloaded."""
    rest = _memory(pid)["VmRSS"]
    Path(f"/proc/{pid}/clear_refs").write_text("5")        # VmHWM := VmRSS now
    sizes = {}
    for path in ("/export/games.csv", "/export/games.jsonl", "/export/bgstats.json"):
        sizes[path] = len(_get(port, path))
        say(f"{path}: {sizes[path] / 1e6:.1f} MB")
    peak = _memory(pid)["VmHWM"]
    return {"rest_mb": rest, "export_peak_mb": peak, "export_sizes": sizes}


def page_weights(port: int, store: Path) -> dict:
    """Bytes a browser fetches on the first load of each page (the HTML, its stylesheet
    and scripts, and the pictures it names that the server makes)."""
    import re
    game = next(iter(sorted((store / "records").glob("*.json")))).stem
    out = {}
    for name, path in (("live", "/"), ("history", "/history"), ("replay", f"/game/{game}"),
                       ("statistics", "/stats"), ("downloads", "/downloads"),
                       ("players", "/players")):
        html = _get(port, path)
        total = len(html)
        for ref in set(re.findall(rb'(?:src|href)="(/static/[^"]+)"', html)):
            total += len(_get(port, ref.decode()))
        if name in ("replay", "live"):    # the patch pictures on offer: three
            total += 3 * len(_get(port, "/patch/patchwork/21.svg"))
        out[name] = total
    return out


def main(argv: list[str] | None = None) -> int:
    """Run the measurements and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--changes", type=int, default=200, help="state changes to time")
    parser.add_argument("--clients", type=int, default=20, help="open live pages")
    parser.add_argument("--games", type=int, default=10000, help="games in the history store")
    parser.add_argument("--quick", action="store_true", help="50 changes, 2000 games")
    parser.add_argument("--json", action="store_true", help="also print the raw figures as JSON")
    args = parser.parse_args(argv)
    if args.quick:
        args.changes, args.games = 50, 2000
    began = time.monotonic()

    def say(text):
        print(f"[{time.monotonic() - began:6.1f} s] {text}", file=sys.stderr, flush=True)
    with tempfile.TemporaryDirectory(prefix="pwc-web-bench-") as tmp:
        work = Path(tmp)
        say("updates ...")
        up = updates(args.changes, args.clients, work, say)
        say("history page ...")
        hist = history_page(args.games, work, say)
    print(f"machine: {machine()}")
    print(f"web update p50/p95: {up['p50_ms']:.1f} / {up['p95_ms']:.1f} ms "
          f"({args.clients} pages, {up['samples']} of {up['expected']} events)")
    print(f"web rss: {up['rss_mb']:.1f} MB (peak {up['hwm_mb']:.1f} MB)")
    print(f"history page with {args.games} games: {hist['plain']:.1f} ms")
    print(f"web export peak: {hist['export_peak_mb']:.1f} MB, resting {hist['rest_mb']:.1f} MB "
          f"(+{hist['export_peak_mb'] - hist['rest_mb']:.1f} MB) for CSV, JSON Lines and BG Stats "
          f"of {args.games} games")
    for page, size in hist["weights"].items():
        print(f"first load of {page}: {size / 1024:.1f} KB")
    print(f"history page with {args.games} games, filtered by player and game: "
          f"{hist['filtered']:.1f} ms; page 100: {hist['page 100']:.1f} ms")
    if args.json:
        print(json.dumps({"machine": machine(), "updates": up, "history": hist}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
