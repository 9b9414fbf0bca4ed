"""Service benchmark: the real companion on the "sim" backend, measured.

    python benchmarks/service.py [--events 1000] [--idle-seconds 30] [--quick]

Prints, with the machine it ran on:

* latency from an input to the LED frame and to the OLED frame being handed to
  their drivers (``NeoPixel.show()`` and the luma device's ``display()``),
  separately, median and p99 over ``--events`` events each, for
  - a button press: the release edge of NEXT on gpiozero's MockFactory pin
    (a press counts on release); each press changes the selected patch, so
    both the lit target and the OLED card change;
  - a sensor frame posted to the loop as the sensor link posts it
    (``SensorOccupancy``): the mover's token set on a space two moves end on
    ("Which move?", the lit target goes out) and back (the turn screen and the
    target return); no journal write, as nothing is accepted;
  - the same frames end to end over a pseudo-terminal: CHG frames written by
    an in-process sensor emulator speaking the real protocol, read by the real
    ``SensorLink`` thread.
  A reading counts only once it has been stable for ``sensor.stable_ms`` (set
  to its minimum, 20 ms, here; 150 ms by default): sensor latencies are given
  both from the frame and from the end of that window;
* CPU time of the service process over ``--idle-seconds`` idle (a game in
  progress, the tokens where they belong, nothing happening: the active token
  pulses at ``leds.fps``), and its peak memory (VmHWM);
* time from process start to ready (READY=1 on ``NOTIFY_SOCKET``) of
  ``patchwork-companion run`` on the default (sim) config.

Nothing here asserts: the figures are for people (see the README section).
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import tty
from pathlib import Path

os.environ.setdefault("BLINKA_FORCEBOARD", "OS_AGNOSTIC_BOARD")
os.environ.setdefault("BLINKA_FORCECHIP", "OS_AGNOSTIC")

from firmware_py.companion import intents                     # noqa: E402
from firmware_py.companion.journal import Journal             # noqa: E402
from firmware_py.companion.session import Session, Setup      # noqa: E402
from firmware_py.config import validate                       # noqa: E402
from firmware_py.demo import bundled_record                   # noqa: E402
from firmware_py.hw import sensor_protocol as sp              # noqa: E402
from firmware_py.hw.backends import build_parts               # noqa: E402
from firmware_py.hw.sensor_link import SensorLink, SensorOccupancy  # noqa: E402
from firmware_py.rules import Buy, parse_record                     # noqa: E402
from firmware_py.service import Service                       # noqa: E402
from firmware_py.view.leds import WHITE                       # noqa: E402

TARGETS = {"led_p99_ms": 2.0, "oled_p99_ms": 5.0, "idle_cpu_pct": 1.0, "rss_mb": 60.0,
           "ready_s": 1.5}


# ------------------------------------------------------------------ the machine
def machine() -> dict:
    """nproc, CPU model and Python version."""
    model = platform.processor() or "?"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.lower().startswith(("model name", "hardware", "cpu model")):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {"nproc": os.cpu_count(), "cpu": model, "python": platform.python_version(),
            "system": f"{platform.system()} {platform.release()}"}


# ------------------------------------------------------------------ the game
def game_at_start():
    """The bundled game's setup: both tokens on 0, green to move; returns (record,
    setup, ambiguous space, a buy whose target is lit)."""
    record = parse_record(bundled_record())
    first = "yellow" if record.players[0].lower() == "yellow" else "green"
    setup = Setup(record.game, record.time_board, first, tuple(record.circle),
                  tuple(record.blue or ()), False)
    state = Session(setup).state
    other = state.players[1 - state.to_move].position
    ambiguous = next(s for s in range(state.spec.last_space + 1)
                     if len(intents.candidates_at(state, s)) >= 2 and s != other)
    buy = next(a for a in intents.turn_options(state) if isinstance(a, Buy)
               and not intents.why_not(state, a) and intents.target_of(state, a) != ambiguous)
    return record, setup, ambiguous, buy


def write_setup(folder: Path, setup: Setup) -> None:
    """A journal holding the game's setup (the service resumes straight into play)."""
    journal = Journal(folder)
    journal.load()
    journal.append({"kind": "setup", "setup": setup.to_json()})


# ------------------------------------------------------------------ recording
class Recorder:
    """Timestamps (perf_counter) every frame handed to the LED and OLED drivers.

    The wrappers run on the output threads; :meth:`wait` sleeps on a condition
    they signal and looks only at frames recorded since :meth:`mark`, so the
    measuring thread takes no CPU (and no GIL) from the threads it measures.
    """

    def __init__(self, parts):
        self.led: list[tuple[float, frozenset]] = []
        self.oled: list[float] = []
        self.cond = threading.Condition()
        pixels, device = parts.strip.pixels, parts.oled.device
        show, display = pixels.show, device.display
        count = len(pixels)
        white = list(WHITE)

        def led_show():
            t = time.perf_counter()
            whites = frozenset(i for i in range(count) if list(pixels[i]) == white)
            with self.cond:
                self.led.append((t, whites))
                self.cond.notify_all()
            return show()

        def oled_display(image):
            t = time.perf_counter()
            with self.cond:
                self.oled.append(t)
                self.cond.notify_all()
            return display(image)
        pixels.show = led_show
        device.display = oled_display

    def mark(self) -> tuple[int, int]:
        """Where the frame lists stand now (call before the event)."""
        with self.cond:
            return len(self.led), len(self.oled)

    def wait(self, mark: tuple[int, int], t0: float, whites: frozenset | None,
             timeout: float = 2.0) -> tuple:
        """(LED, OLED) latency in ms of the first frames after ``t0`` (the LED frame
        recognised by its lit targets ``whites``; None: no LED frame expected)."""
        deadline = time.perf_counter() + timeout
        led = t0 if whites is None else None
        oled = None
        i, j = mark
        with self.cond:
            while led is None or oled is None:
                for t, w in self.led[i:]:
                    if led is None and t >= t0 and w == whites:
                        led = t
                i = len(self.led)
                for t in self.oled[j:]:
                    if oled is None and t >= t0:
                        oled = t
                j = len(self.oled)
                left = deadline - time.perf_counter()
                if led is not None and oled is not None:
                    break
                if left <= 0:
                    raise RuntimeError(f"no frame within {timeout} s (led {led}, oled {oled})")
                self.cond.wait(left)
        return (led - t0) * 1000, (oled - t0) * 1000


def summary(values: list[float]) -> dict:
    """median and p99 (ms) of ``values``."""
    ordered = sorted(values)
    return {"n": len(ordered), "median": statistics.median(ordered),
            "p99": ordered[min(len(ordered) - 1, int(round(0.99 * len(ordered))) - 1)],
            "max": ordered[-1]}


# ------------------------------------------------------------------ a sensor on a pty
class PtySensor:
    """The sensor emulated in-process on a raw pty: answers HELLO/SNAP, beats once a
    second, and writes CHG frames on :meth:`set` (returning when it wrote them)."""

    def __init__(self, link: Path, spaces: int, occupied: frozenset):
        self.master, self.slave = os.openpty()
        tty.setraw(self.slave)
        os.symlink(os.ttyname(self.slave), link)
        self.spaces, self.occupied, self.seq = spaces, frozenset(occupied), 0
        self.lock = threading.Lock()
        self.parser = sp.FrameParser()
        self.running = True
        self.thread = threading.Thread(target=self._serve, name="pty-sensor", daemon=True)
        self.thread.start()

    def _send(self, *frames) -> float:
        data = b"".join(sp.encode(f) for f in frames)
        t = time.perf_counter()
        os.write(self.master, data)
        return t

    def _next(self) -> int:
        seq, self.seq = self.seq, (self.seq + 1) % sp.SEQ_MODULO
        return seq

    def _serve(self) -> None:
        import select
        beat = time.monotonic() + 1.0
        while self.running:
            ready, _, _ = select.select([self.master], [], [], max(0.0, beat - time.monotonic()))
            with self.lock:
                if ready:
                    for frame in self.parser.feed(os.read(self.master, 4096)):
                        if isinstance(frame, sp.Request) and frame.what == "HELLO":
                            self._send(sp.Hello(self._next(), sp.PROTOCOL_VERSION, "bench",
                                                self.spaces))
                        elif isinstance(frame, sp.Request):
                            self._send(sp.Snapshot(self._next(), self.spaces, self.occupied))
                if time.monotonic() >= beat:
                    beat += 1.0
                    self._send(sp.Heartbeat(self._next(), self.spaces, self.occupied))

    def set(self, occupied) -> float:
        """Change the board to ``occupied`` (one CHG frame per space, one write)."""
        with self.lock:
            frames, now = [], set(self.occupied)
            for space in sorted(frozenset(occupied) ^ self.occupied):
                now ^= {space}
                frames.append(sp.Change(self._next(), self.spaces, space, space in now, now))
            self.occupied = frozenset(occupied)
            return self._send(*frames)

    def close(self) -> None:
        """Stop answering and close the pty."""
        self.running = False
        self.thread.join(2)
        for fd in (self.master, self.slave):
            os.close(fd)


# ------------------------------------------------------------------ latency
def latency(events: int, say) -> dict:
    """Button, posted-frame and pty end-to-end latencies (ms) to the LED and OLED drivers."""
    record, setup, ambiguous, buy = game_at_start()
    home = frozenset({0})
    work = Path(tempfile.mkdtemp(prefix="bench-service-"))
    cfg = validate({"backend": "sim", "sensor": {"stable_ms": 20}}, "bench")
    write_setup(work / "journal", setup)
    holder: dict = {}
    parts = build_parts(cfg, lambda e: holder["service"].post(e), time.monotonic)
    if parts.sim_sensor is not None:            # the pty emulator below stands in for it
        parts.sim_sensor.close()
        parts.sim_sensor = None
    rec = Recorder(parts)
    service = Service(cfg, parts, work / "journal",
                      deal=lambda game: (record.circle, record.blue or ()))
    holder["service"] = service
    service.start()
    stable = cfg["sensor"]["stable_ms"]
    results: dict = {}
    try:
        # ---- buttons: NEXT on the mock pin, timed from the release edge
        pin = parts.pin_factory.pin(parts.buttons.pins["next"])
        leds, oleds = [], []

        def lit(state, action):
            if action is None or intents.why_not(state, action):
                return frozenset()
            return frozenset({intents.target_of(state, action)})
        while len(leds) < events or len(oleds) < events:
            state, options, chosen = service.call(
                lambda: (service.ui.state, service.ui.options(), service.ui.selected()))
            nxt = options[(options.index(chosen) + 1) % len(options) if chosen in options else 0]
            whites = lit(state, nxt)
            pin.drive_low()
            time.sleep(0.022)                   # longer than the 20 ms debounce window
            mark = rec.mark()
            t0 = time.perf_counter()
            pin.drive_high()
            if whites != lit(state, chosen):    # the lit target changes: both outputs do
                led, oled = rec.wait(mark, t0, whites)
                leds.append(led)
            else:                               # same target (or none): only the OLED card
                oled = rec.wait(mark, t0, None)[1]
            oleds.append(oled)
            time.sleep(0.022)
        leds, oleds = leds[:events], oleds[:events]
        results["button"] = {"led": summary(leds), "oled": summary(oleds)}
        say(f"  button press: {len(leds)} events")

        # choose the buy (its target lit) so that the frames below change both outputs
        while service.call(service.ui.selected) != buy:
            pin.drive_low()
            time.sleep(0.022)
            pin.drive_high()
            time.sleep(0.022)
        target = frozenset({intents.target_of(service.call(lambda: service.ui.state), buy)})

        def run_frames(send, label):
            leds, oleds = [], []
            for k in range(events):
                away = k % 2 == 0
                mark = rec.mark()
                t0 = send(home | {ambiguous} if away else home)
                led, oled = rec.wait(mark, t0, frozenset() if away else target)
                leds.append(led)
                oleds.append(oled)
                mode = "confirm" if away else "turn"
                deadline = time.monotonic() + 2
                while service.status.mode != mode and time.monotonic() < deadline:
                    time.sleep(0.0005)
                time.sleep(0.005)
            results[label] = {"led": summary(leds), "oled": summary(oleds)}
            results[label + "_net"] = {"led": summary([v - stable for v in leds]),
                                       "oled": summary([v - stable for v in oleds])}
            say(f"  {label}: {len(leds)} events")

        seq = iter(range(10**9))

        def post(occupied):
            t0 = time.perf_counter()
            service.post(SensorOccupancy(frozenset(occupied), next(seq) % 65536, False,
                                         time.monotonic()))
            return t0
        post(home)
        time.sleep(0.1)
        run_frames(post, "sensor_posted")

        sensor = PtySensor(work / "sensor", 54, home)
        link = SensorLink([str(work / "sensor")], 115200, service.post, time.monotonic, spaces=54)
        link.start()
        deadline = time.monotonic() + 5
        while "sensor" in service.ui.warnings or link.stats().state != "online":
            if time.monotonic() > deadline:
                raise RuntimeError("the emulated sensor did not come online")
            time.sleep(0.01)
        time.sleep(0.1)
        try:
            run_frames(sensor.set, "sensor_pty")
        finally:
            link.stop()
            sensor.close()
    finally:
        service.stop()
        parts.close()
    results["stable_ms"] = stable
    return results


# ------------------------------------------------------------------ the process
def _proc_cpu(pid: int) -> float:
    """CPU seconds run by ``pid``'s threads (not its children), from the scheduler's
    exact accounting (``schedstat``, ns) rather than the 10 ms ticks of ``stat``."""
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            total += int((task / "schedstat").read_text().split()[0])
        except (OSError, ValueError, IndexError):
            pass                                # a thread that just ended
    return total / 1e9


def _proc_status(pid: int, key: str) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1]) / 1024
    return float("nan")


def serve_idle(folder: str) -> int:
    """(Child mode) the companion as ``run`` starts it, with the tokens placed on the
    simulated board where the game says; prints "ready" and serves until stdin closes."""
    from firmware_py.app import start_companion
    cfg = validate({"backend": "sim", "journal": {"dir": folder}}, "bench")
    companion = start_companion(cfg)
    state = companion.service.call(lambda: companion.service.ui.state)
    companion.parts.sim_sensor.command("reset", tokens=[p.position for p in state.players])
    companion.parts.sim_sensor.sync()
    print(json.dumps({"ready": True, "sensor_pid": companion.parts.sim_sensor.proc.pid}), flush=True)
    sys.stdin.read()
    companion.close()
    return 0


def idle(seconds: float, say) -> dict:
    """CPU share and memory of an idle companion process (a game in progress)."""
    _, setup, _, _ = game_at_start()
    work = Path(tempfile.mkdtemp(prefix="bench-idle-"))
    write_setup(work, setup)
    proc = subprocess.Popen([sys.executable, __file__, "--serve-idle", str(work)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        hello = json.loads(proc.stdout.readline())
        time.sleep(2.0)                                  # settle: link online, board judged
        cpu0, sensor0, t0 = _proc_cpu(proc.pid), _proc_cpu(hello["sensor_pid"]), time.monotonic()
        say(f"  idle: measuring {seconds:g} s")
        time.sleep(seconds)
        cpu1, sensor1, t1 = _proc_cpu(proc.pid), _proc_cpu(hello["sensor_pid"]), time.monotonic()
        out = {"cpu_pct": 100 * (cpu1 - cpu0) / (t1 - t0),
               "sim_sensor_cpu_pct": 100 * (sensor1 - sensor0) / (t1 - t0),
               "rss_mb": _proc_status(proc.pid, "VmRSS"), "peak_rss_mb": _proc_status(proc.pid, "VmHWM"),
               "threads": len(os.listdir(f"/proc/{proc.pid}/task"))}
    finally:
        proc.stdin.close()
        proc.wait(10)
    return out


def fill_history(folder: Path, games: int) -> None:
    """``games`` finished games in the store in ``folder``: record files and index rows
    (made from the bundled game under new ids and start times; replayed once)."""
    import dataclasses
    from datetime import datetime, timedelta, timezone

    from firmware_py.store import History, summarise
    history = History(folder)
    history.records.mkdir(parents=True, exist_ok=True)
    record = parse_record(bundled_record())
    base = datetime(2024, 1, 1, tzinfo=timezone.utc)
    rows, template = [], None
    for n in range(games):
        start = base + timedelta(hours=n)
        game_id = f"{start:%Y%m%d-%H%M%S}-{n:06x}"
        one = dataclasses.replace(record, meta={"started": start.isoformat(),
                                                "ended": (start + timedelta(minutes=40)).isoformat()})
        data = (json.dumps(one.to_json(), separators=(",", ":")) + "\n").encode()
        (history.records / f"{game_id}.json").write_bytes(data)
        template = template or summarise(one, game_id, f"{game_id}.json", len(data), 0.0)
        rows.append({**template, "id": game_id, "record": f"{game_id}.json",
                     "started": one.meta["started"], "ended": one.meta["ended"],
                     "ended_unix": (start + timedelta(minutes=40)).timestamp()})
    with history.index() as index:
        index.upsert(rows[0], rows=rows)


def ready_time(runs: int, say, games: int = 0) -> dict:
    """Seconds from starting ``patchwork-companion run`` to READY=1 (default sim config),
    with ``games`` finished games in the history."""
    times, peaks = [], []
    prepared = Path(tempfile.mkdtemp(prefix="bench-store-")) / "patchwork-companion"
    prepared.mkdir()
    if games:
        say(f"  ready: filling a history of {games} games")
        fill_history(prepared, games)
    for n in range(runs):
        work = Path(tempfile.mkdtemp(prefix="bench-ready-"))
        if games:
            os.symlink(prepared, work / "patchwork-companion")
        name = f"bench-ready-{os.getpid()}-{n}"
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        sock.bind("\0" + name)
        sock.settimeout(20)
        env = dict(os.environ, NOTIFY_SOCKET="@" + name, XDG_STATE_HOME=str(work))
        exe = Path(sys.executable).with_name("patchwork-companion")
        cmd = [str(exe), "run"] if exe.exists() else [sys.executable, "-m", "firmware_py.cli", "run"]
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            while b"READY=1" not in sock.recv(4096):
                pass
            times.append(time.perf_counter() - t0)
            time.sleep(1.0)
            peaks.append(_proc_status(proc.pid, "VmHWM"))
        finally:
            proc.terminate()
            proc.wait(10)
            sock.close()
    shutil.rmtree(prepared.parent, ignore_errors=True)
    say(f"  ready: {runs} starts with {games} games")
    return {"median_s": statistics.median(times), "max_s": max(times), "runs": runs,
            "peak_rss_mb": max(peaks), "median_rss_mb": statistics.median(peaks), "games": games}


def ready_lines(empty: dict, full: dict) -> list[str]:
    """The start-up figures of an empty box and of one with a long history, side by side."""
    def line(r):
        return f"{r['median_s']:.2f} s, RSS {r['median_rss_mb']:.1f} MB"
    dt, dm = full["median_s"] - empty["median_s"], full["median_rss_mb"] - empty["median_rss_mb"]
    verdict = "ok" if dt <= 0.1 and dm <= 5 else "MISSED"
    return [f"ready, empty box: {line(empty)}",
            f"ready with {full['games']} games: {line(full)}   "
            f"({dt:+.2f} s, {dm:+.1f} MB; target within 0.1 s and 5 MB of empty   {verdict})"]


# ------------------------------------------------------------------ report
def report(m: dict, lat: dict, idle_: dict, ready: dict) -> list[str]:
    """The figures as printed lines."""
    def ok(value, target):
        return "ok" if value < target else "MISSED"
    lines = [f"machine: {m['nproc']} CPUs, {m['cpu']}, Python {m['python']}, {m['system']}",
             "", f"{'latency (ms), to the driver':44s} {'LED med':>8s} {'LED p99':>8s} "
             f"{'OLED med':>9s} {'OLED p99':>9s}  n"]
    names = {"button": "button press (mock pin release edge)",
             "sensor_posted": "sensor frame posted, from the frame",
             "sensor_posted_net": "  ... from the end of the stable window",
             "sensor_pty": "sensor frame over the pty, from the write",
             "sensor_pty_net": "  ... from the end of the stable window"}
    for key, name in names.items():
        r = lat[key]
        lines.append(f"{name:44s} {r['led']['median']:8.2f} {r['led']['p99']:8.2f} "
                     f"{r['oled']['median']:9.2f} {r['oled']['p99']:9.2f}  {r['led']['n']}")
    lines.append(f"(sensor.stable_ms = {lat['stable_ms']} here; the default 150 ms adds 130 ms "
                 f"to every 'from the frame' figure by design)")
    worst_led = max(lat[k]["led"]["p99"] for k in ("button", "sensor_posted_net", "sensor_pty_net"))
    worst_oled = max(lat[k]["oled"]["p99"] for k in ("button", "sensor_posted_net", "sensor_pty_net"))
    lines += ["",
              f"LED frame p99 (worst of the three)     {worst_led:7.2f} ms   target < "
              f"{TARGETS['led_p99_ms']} ms   {ok(worst_led, TARGETS['led_p99_ms'])}",
              f"OLED frame p99 (worst of the three)    {worst_oled:7.2f} ms   target < "
              f"{TARGETS['oled_p99_ms']} ms   {ok(worst_oled, TARGETS['oled_p99_ms'])}",
              f"idle CPU, service process             {idle_['cpu_pct']:7.2f} %    target < "
              f"{TARGETS['idle_cpu_pct']} %    {ok(idle_['cpu_pct'], TARGETS['idle_cpu_pct'])}"
              f"   (simulated sensor process: {idle_['sim_sensor_cpu_pct']:.2f} %)",
              f"peak RSS (VmHWM), idle companion      {idle_['peak_rss_mb']:7.1f} MB   target < "
              f"{TARGETS['rss_mb']} MB   {ok(idle_['peak_rss_mb'], TARGETS['rss_mb'])}"
              f"   (run, 1 s after ready: {ready['peak_rss_mb']:.1f} MB; "
              f"{idle_['threads']} threads)",
              f"process start to READY=1 (median)     {ready['median_s']:7.2f} s    target < "
              f"{TARGETS['ready_s']} s    {ok(ready['median_s'], TARGETS['ready_s'])}"
              f"   (max of {ready['runs']}: {ready['max_s']:.2f} s)"]
    return lines


def main(argv: list[str] | None = None) -> int:
    """Run every measurement and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=1000, help="events per latency figure")
    parser.add_argument("--idle-seconds", type=float, default=30.0)
    parser.add_argument("--ready-runs", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="200 events, 5 s idle, 2 starts")
    parser.add_argument("--json", action="store_true", help="also print the raw figures as JSON")
    parser.add_argument("--history-games", type=int, default=10000,
                        help="finished games in the history for the second start-up figure")
    parser.add_argument("--ready-only", action="store_true", help="only the start-up figures")
    parser.add_argument("--serve-idle", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve_idle:
        return serve_idle(args.serve_idle)
    if args.quick:
        args.events, args.idle_seconds, args.ready_runs = 200, 5.0, 2

    began = time.monotonic()

    def say(text):
        print(f"[{time.monotonic() - began:6.1f} s] {text}", file=sys.stderr, flush=True)
    m = machine()
    if args.ready_only:
        say("start-up ...")
        empty = ready_time(args.ready_runs, say)
        full = ready_time(args.ready_runs, say, args.history_games)
        print("\n".join([f"machine: {m['nproc']} CPUs, {m['cpu']}, Python {m['python']}, "
                         f"{m['system']}"] + ready_lines(empty, full)))
        return 0
    say("latency ...")
    lat = latency(args.events, say)
    say("idle ...")
    idle_ = idle(args.idle_seconds, say)
    say("start-up ...")
    ready = ready_time(args.ready_runs, say)
    full = ready_time(args.ready_runs, say, args.history_games)
    print("\n".join(report(m, lat, idle_, ready) + ready_lines(ready, full)))
    if args.json:
        print(json.dumps({"machine": m, "latency": lat, "idle": idle_, "ready": ready,
                          "ready_with_history": full}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
