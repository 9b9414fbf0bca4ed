"""Service benchmark: the real companion on the "sim" backend, measured.

    python benchmarks/service.py [--rounds 5] [--events 200] [--idle-seconds 60] [--quick]
                                  [--idle-only] [--ready-only]

Every time is taken when the driver call returns (the strip's ``show()``, the
luma device's ``display()``), the OLED being luma's device over a serial
interface that counts the bytes it is handed. Figures are given as the median
over ``--rounds`` rounds of each round's p50 and p99, with their spread (the
lowest and highest round), since one run's p99 on a shared machine is noise.
Lines start with fixed labels so that runs can be compared:

* ``oled bytes per turn update:`` bytes sent to the OLED for each turn of a
  whole real game (the bundled one), mean, and as % of a full frame;
* ``oled bytes per cursor move:`` the same for NEXT moving the selection;
* ``oled cpu per frame p50/p99:`` drawing the screen and handing its bytes to
  the interface (render + ``display()``), over those frames;
* ``button to led/oled p50/p99:`` a NEXT release edge on gpiozero's mock pin to
  the frames that show the new selection;
* ``first light p50/p99:`` a sensor frame (CHG frames written on a pty, read by
  the real sensor link) moving the mover's token, to the LED frame that shows
  it there (long before the reading is stable);
* ``turn accepted p50/p99:`` the end of the stable window of a reading that
  makes a move, to both the LED and the OLED frame of the new turn (the rules
  step and the journal write, fsync included, lie in between);
* ``led first frame of a change p50/p99:`` / ``led pulse prepared p50/p99:``
  a pulsing game's lights handed to the real strip part: to its first frame out,
  and to the whole pulse worked out (which comes after that frame);
* ``idle cpu pulsing:`` / ``idle cpu still:`` CPU of the service process (started
  as ``run`` starts it, the live feed included / ``patchwork-companion run`` itself
  with the default config; the simulated sensor's process given apart) with a game
  in progress (the active token pulses) / on the first set-up question (nothing
  animates), the sensor beating once a second, over
  ``--idle-seconds`` (60 by default) in ``--rounds`` windows, from the scheduler's
  exact accounting (``schedstat``, ns). A calm sensor link hands its heartbeats to
  its session once per 256 of them (a few ms here); ``--idle-seconds 300`` always
  holds one such moment, 60 s one time in four;
* ``idle floor:`` a Python process that wakes once a second to do nothing, over
  the same windows as ``idle cpu still:``; ``idle still vs floor:`` their ratio;
* ``first OLED frame:`` / ``READY:`` process start of the companion as ``run``
  starts it to its first OLED frame drawn on the device, and to READY=1 (which
  waits for that frame);
* ``ready:`` process start to READY=1 of ``patchwork-companion run``;
  ``ready, empty box:`` / ``ready with N games:`` the same with ``N`` finished
  games in the history (``--history-games``; ``--ready-only`` prints just these).

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
from firmware_py.companion.buttons import PRESS, Gesture      # noqa: E402
from firmware_py.companion.journal import Journal             # noqa: E402
from firmware_py.companion.screens import build_lights, build_screen   # noqa: E402
from firmware_py.companion.session import Session, Setup      # noqa: E402
from firmware_py.companion.table import Table                  # noqa: E402
from firmware_py.config import validate                       # noqa: E402
from firmware_py.sim.demo import bundled_record                   # noqa: E402
from firmware_py.hw import sensor_protocol as sp              # noqa: E402
from firmware_py.hw.backends import build_parts               # noqa: E402
from firmware_py.hw.parts import Animation                    # noqa: E402
from firmware_py.hw.oled_pages import ByteCounter, PagedSh1106, PagedSsd1306  # noqa: E402
from firmware_py.hw.sensor_link import SensorLink             # noqa: E402
from firmware_py.rules import Advance, Buy, PlaceLeather, move_to_action, parse_record  # noqa: E402
from firmware_py.rules import untracked_copy                  # noqa: E402
from firmware_py.service.loop import Service                       # noqa: E402
from firmware_py.view.leds import TOKEN_RGB, WHITE, LedFrames, LedLayout   # noqa: E402
from firmware_py.view.oled import render                      # noqa: E402

TARGETS = {"turn_update_pct": 50.0, "cursor_pct": 15.0, "oled_cpu_ms": 0.5,
           "idle_pulsing_pct": 0.1, "idle_still_pct": 0.0, "ready_s": 0.12, "idle_ratio": 2.0}


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


# ------------------------------------------------------------------ figures
def pct(values: list[float], q: float) -> float:
    """The ``q`` quantile (0..1) of ``values`` (nearest rank)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, int(round(q * len(ordered))) - 1))]


def over_rounds(rounds: list[list[float]]) -> dict:
    """Each round's p50 and p99, then their median and spread over the rounds."""
    p50 = [statistics.median(r) for r in rounds if r]
    p99 = [pct(r, 0.99) for r in rounds if r]
    return {"rounds": len(p50), "n": min((len(r) for r in rounds if r), default=0),
            "p50": statistics.median(p50), "p50_lo": min(p50), "p50_hi": max(p50),
            "p99": statistics.median(p99), "p99_lo": min(p99), "p99_hi": max(p99)}


# ------------------------------------------------------------------ the game
def game_at_start():
    """The bundled game's setup: both tokens on 0, green to move; returns (record, setup)."""
    record = parse_record(bundled_record())
    first = "yellow" if record.players[0].lower() == "yellow" else "green"
    setup = Setup(record.game, record.time_board, first, tuple(record.circle),
                  tuple(record.blue or ()), False)
    return record, setup


def write_setup(folder: Path, setup: Setup) -> None:
    """A journal holding the game's setup (the service resumes straight into play)."""
    journal = Journal(folder)
    journal.load()
    journal.append({"kind": "setup", "setup": setup.to_json()})


def game_entries() -> list[dict]:
    """Journal entries of the whole bundled game: the setup, then each turn."""
    record, setup = game_at_start()
    session = Session(setup)
    entries = [{"kind": "setup", "setup": setup.to_json()}]
    plan = untracked_copy(record).moves
    for index, move in enumerate(plan):
        if move == {"leather": "discard"}:
            continue
        group = [move_to_action(session.state.spec, move, index, tracked=False)]
        state, _ = session.check(group)
        while state.owed and state.spec.bonus_square:
            group.append(PlaceLeather())
            state, _ = session.check(group)
        session.commit(group)
        entries.append({"kind": "turn", "moves": session.group_to_json(group)})
    return entries


def ui_after(entries: list[dict], count: int) -> Table:
    """The table resumed from the first ``count`` entries (its effects are not needed)."""
    table = Table(None)
    table.resume(entries[:count])
    return table


# ------------------------------------------------------------------ OLED bytes and CPU
def oled_figures(rounds: int, say) -> dict:
    """Bytes per turn update and per cursor move over the bundled game, on both
    controllers, and the CPU time of a frame (render + display) on the SSD1306."""
    entries = game_entries()
    turns = [build_screen(ui_after(entries, k).view()) for k in range(1, len(entries) + 1)]
    moves = []                                  # (screen, screen after NEXT) pairs
    for k in range(1, len(entries) + 1):
        table = ui_after(entries, k)
        if table.view().mode != "turn":
            continue
        before = build_screen(table.view())
        for _ in range(len(intents.turn_options(table.view().state))):
            table.gesture(Gesture("next", PRESS))
            after = build_screen(table.view())
            moves.append((before, after))
            before = after
    out: dict = {"turn_updates": len(turns) - 1, "cursor_moves": len(moves)}
    for name, cls in (("ssd1306", PagedSsd1306), ("sh1106", PagedSh1106)):
        bus = ByteCounter()
        device = cls(bus)
        device.forget()                         # as after a bus error: the next frame whole
        bus.reset()
        device.display(render(turns[0]))
        full = bus.total                        # a full frame: its windows and 1,024 bytes
        per_turn, per_move = [], []
        for screen in turns[1:]:
            bus.reset()
            device.display(render(screen))
            per_turn.append(bus.total)
        for before, after in moves:
            device.display(render(before))
            bus.reset()
            device.display(render(after))
            per_move.append(bus.total)
        out[name] = {"full": full, "turn_mean": statistics.mean(per_turn),
                     "turn_max": max(per_turn), "cursor_mean": statistics.mean(per_move),
                     "cursor_max": max(per_move)}
    device = PagedSsd1306(ByteCounter())
    frames = turns + [after for _, after in moves]
    times = []
    for _ in range(rounds):
        spent = []
        for screen in frames:
            t0 = time.perf_counter()
            device.display(render(screen))
            spent.append((time.perf_counter() - t0) * 1000)
        times.append(spent)
    out["cpu"] = over_rounds(times)
    say(f"  oled: {len(frames)} frames x {rounds} rounds")
    return out


# ------------------------------------------------------------------ recording
class Recorder:
    """Timestamps (perf_counter) every frame when the driver call has returned.

    The strip's and the OLED's ``on_frame`` hooks run on their output threads
    right after ``show()`` / ``display()`` returned; :meth:`wait` sleeps on a
    condition they signal, so the measuring thread takes no CPU from them.
    """

    def __init__(self):
        self.led: list[tuple[float, list]] = []
        self.oled: list[float] = []
        self.cond = threading.Condition()

    def on_led(self, frame) -> None:
        """Strip hook: the frame went out."""
        t = time.perf_counter()
        with self.cond:
            self.led.append((t, frame))
            self.cond.notify_all()

    def on_oled(self, _image) -> None:
        """OLED hook: the image went out."""
        t = time.perf_counter()
        with self.cond:
            self.oled.append(t)
            self.cond.notify_all()

    def mark(self) -> tuple[int, int]:
        """Where the frame lists stand now (call before the event)."""
        with self.cond:
            return len(self.led), len(self.oled)

    def wait(self, mark, after: float, led_test=None, oled: bool = False,
             timeout: float = 3.0) -> tuple:
        """(LED time, OLED time) of the first frames since ``mark`` that went out at
        or after ``after`` (the LED one also passing ``led_test(frame)``; None: no
        LED frame wanted; ``oled`` False: no OLED frame wanted)."""
        deadline = time.perf_counter() + timeout
        with self.cond:
            while True:
                led = None if led_test is None else next(
                    (t for t, f in self.led[mark[0]:] if t >= after and led_test(f)), None)
                shown = next((t for t in self.oled[mark[1]:] if t >= after), None) if oled else None
                if (led_test is None or led is not None) and (not oled or shown is not None):
                    return led, shown
                left = deadline - time.perf_counter()
                if left <= 0:
                    raise RuntimeError(f"no frame within {timeout} s (led {led}, oled {shown})")
                self.cond.wait(left)


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


# ------------------------------------------------------------------ the live companion
class Rig:
    """One companion on the sim backend resumed at the bundled game's start, its
    sensor emulated on a pty and read by the real :class:`SensorLink`."""

    def __init__(self, stable_ms: int = 20):
        self.record, setup = game_at_start()
        self.work = Path(tempfile.mkdtemp(prefix="bench-service-"))
        self.cfg = validate({"backend": "sim", "sensor": {"stable_ms": stable_ms}}, "bench")
        self.stable = stable_ms / 1000
        write_setup(self.work / "journal", setup)
        self.rec = Recorder()
        holder: dict = {}
        self.parts = build_parts(self.cfg, lambda e: holder["service"].post(e), time.monotonic,
                                 on_oled_frame=self.rec.on_oled, on_led_frame=self.rec.on_led)
        if self.parts.sim_sensor is not None:   # the pty emulator below stands in for it
            self.parts.sim_sensor.close()
            self.parts.sim_sensor = None
        self.service = Service(self.cfg, self.parts, self.work / "journal",
                               deal=lambda game: (self.record.circle, self.record.blue or ()))
        holder["service"] = self.service
        self.service.start()
        self.pin = self.parts.pin_factory.pin(self.parts.buttons.pins["next"])
        self.sensor = PtySensor(self.work / "sensor", 54, frozenset({0}))
        self.link = SensorLink([str(self.work / "sensor")], 115200, self.service.post,
                               time.monotonic, spaces=54)
        self.link.start()
        deadline = time.monotonic() + 5
        while "sensor" in self.service.warnings or self.link.stats().state != "online":
            if time.monotonic() > deadline:
                raise RuntimeError("the emulated sensor did not come online")
            time.sleep(0.01)
        self.settle_board()

    def ask(self, fn):
        """``fn()`` on the loop thread."""
        return self.service.call(fn)

    def game(self):
        """(state, mover colour, selected action, mode) as the loop sees them."""
        ui = self.ask(lambda: self.service.view)
        return (ui.state, ui.session.setup.colours[ui.state.to_move]
                if ui.state.to_move is not None else "", ui.selected(), ui.mode)

    def board(self) -> frozenset:
        """The spaces of both tokens in the game."""
        return frozenset(p.position for p in self.ask(lambda: self.service.view.state).players)

    def settle_board(self) -> None:
        """Put the tokens where the game has them and wait until that reading is judged."""
        self.sensor.set(self.board())
        time.sleep(self.stable + 0.03)

    def press_next(self, pin=None) -> float:
        """A NEXT press (or of ``pin``); returns the time of the release edge (a press
        counts on release)."""
        pin = pin or self.pin
        pin.drive_low()
        time.sleep(0.022)                       # longer than the 20 ms debounce window
        t0 = time.perf_counter()
        pin.drive_high()
        return t0

    def press_ok(self) -> float:
        """An OK press (arms the action chosen with NEXT); the release edge's time."""
        return self.press_next(self.parts.pin_factory.pin(self.parts.buttons.pins["ok"]))

    def close(self) -> None:
        """Stop everything."""
        self.link.stop()
        self.sensor.close()
        self.service.stop()
        self.parts.close()


def lit(state, action) -> frozenset:
    """The target LED lit white for ``action`` (none when it cannot be taken)."""
    if action is None or intents.why_not(state, action):
        return frozenset()
    return frozenset({intents.target_of(state, action)})


def whites(frame) -> frozenset:
    """Spaces lit white in an LED frame (map 0-53: LED n is space n)."""
    return frozenset(i for i, rgb in enumerate(frame) if rgb == WHITE)


def buttons(rig: Rig, events: int) -> tuple[list, list]:
    """NEXT presses: release edge to the LED frame (when the lit target changes) and
    to the OLED frame (the selected card), ms."""
    leds, oleds = [], []
    while len(oleds) < events:
        state, _, chosen, _ = rig.game()
        options = intents.turn_options(rig.ask(lambda: rig.service.view.state))
        nxt = options[(options.index(chosen) + 1) % len(options) if chosen in options else 0]
        target = lit(state, nxt)
        mark = rig.rec.mark()
        t0 = rig.press_next()
        wanted = (lambda f, w=target: whites(f) == w) if target != lit(state, chosen) else None
        led, oled = rig.rec.wait(mark, t0, wanted, oled=True)
        if led is not None:
            leds.append((led - t0) * 1000)
        oleds.append((oled - t0) * 1000)
        time.sleep(0.022)
    return leds, oleds


def first_light(rig: Rig, events: int) -> list:
    """The mover's token set down away from its space: CHG frame written on the pty
    to the LED frame that shows it there, ms. Each is taken back well inside the
    stable window, so no move is ever made."""
    state, colour, _, _ = rig.game()
    mover = state.players[state.to_move].position
    other = state.players[1 - state.to_move].position
    spaces = [s for s in range(1, 40) if s not in (mover, other)]
    home = frozenset({mover, other})
    out = []
    for k in range(events):
        space = spaces[k % len(spaces)]
        mark = rig.rec.mark()
        t0 = rig.sensor.set({other, space})
        led, _ = rig.rec.wait(mark, t0, lambda f, s=space: f[s] == TOKEN_RGB[colour])
        out.append((led - t0) * 1000)
        mark = rig.rec.mark()
        t1 = rig.sensor.set(home)
        rig.rec.wait(mark, t1, lambda f, s=space: f[s] != TOKEN_RGB[colour])
        time.sleep(0.002)
    time.sleep(rig.stable + 0.03)
    return out


def accepted_turns(rig: Rig, turns: int) -> list:
    """Moves made by the sensor alone: the mover advances past the other token (a
    move needing no button when the Advance is chosen first). From the end of the
    stable window to both the LED and the OLED frame of the new turn, ms."""
    out = []
    for _ in range(turns):
        state, _, chosen, mode = rig.game()
        if state.over or mode != "turn":
            break
        other = state.players[1 - state.to_move].position
        target = min(other + 1, state.spec.last_space)
        if target == other:                     # onto the other token at the end: a question
            break
        shared = state.players[0].position == state.players[1].position
        if shared or len(rig.ask(lambda: intents.candidates_at(state, target))) > 1:
            while not isinstance(rig.game()[2], Advance):   # choose it with NEXT and OK:
                rig.press_next()                             # no question asked (a move
                time.sleep(0.03)                             # from a shared space or one
            rig.press_ok()                                   # of several is asked)
            time.sleep(0.03)
        count = rig.ask(lambda: rig.service.view.turns)
        mark = rig.rec.mark()
        t0 = rig.sensor.set({other, target})
        stable_end = t0 + rig.stable
        # after the hand's frame nothing animates (the pulsing token is in the hand):
        # the first LED frame after the window is the new turn's
        led, oled = rig.rec.wait(mark, stable_end, lambda f: True, oled=True)
        if rig.ask(lambda: rig.service.view.turns) != count + 1:
            raise RuntimeError(f"the move to {target} was not taken: mode "
                               f"{rig.game()[3]}, board {rig.service.status.lights}, "
                               f"notice {rig.service.status.screen.notice!r}")
        out.append((max(led, oled) - stable_end) * 1000)
        time.sleep(0.01)
    return out


def live_figures(rounds: int, events: int, say) -> dict:
    """Button, first-light and turn-accepted latencies over ``rounds`` fresh companions."""
    got: dict = {"button_led": [], "button_oled": [], "first_light": [], "turn_accepted": []}
    for r in range(rounds):
        rig = Rig()
        try:
            leds, oleds = buttons(rig, events)
            got["button_led"].append(leds)
            got["button_oled"].append(oleds)
            while not isinstance(rig.game()[2], Buy):        # a card selected, target lit
                rig.press_next()
                time.sleep(0.03)
            got["first_light"].append(first_light(rig, events))
            got["turn_accepted"].append(accepted_turns(rig, 200))
        finally:
            rig.close()
        say(f"  live round {r + 1}/{rounds}: {len(got['turn_accepted'][-1])} turns accepted")
    return {key: over_rounds(value) for key, value in got.items()}


# ------------------------------------------------------------------ a change's first LED frame
def pulse_figures(rounds: int, events: int, say) -> dict:
    """A change handed to the real strip part (sim backend, the real ``neopixel``
    driver) as the loop hands it, a game in progress whose active token pulses:
    from ``submit`` to its first frame out (the driver's ``show()`` returned), and to
    the whole pulse prepared (the animation's ``next_at`` returned, which works out
    every frame of the cycle), ms."""
    lights = build_lights(ui_after(game_entries(), 2).view())
    cfg = validate({"backend": "sim"}, "bench")
    out = threading.Event()
    stamps: dict = {}

    def on_led(_frame):
        stamps.setdefault("first", time.perf_counter())
    parts = build_parts(cfg, lambda e: None, time.monotonic, on_led_frame=on_led)
    if parts.sim_sensor is not None:
        parts.sim_sensor.close()
        parts.sim_sensor = None
    leds = cfg["leds"]
    layout = LedLayout.parse(leds["map"], leds["count"], lights.last_space)
    first, prepared = [], []
    try:
        for _ in range(rounds):
            got_first, got_prepared = [], []
            for _ in range(events):
                frames = LedFrames(lights, layout, None, leds["fps"])

                def next_at(now, frames=frames):
                    """The animation's next frame; notes when the pulse was worked out."""
                    due = frames.next_at(now)
                    stamps.setdefault("prepared", time.perf_counter())
                    out.set()
                    return due
                dark = parts.strip.submit([(0, 0, 0)] * leds["count"])   # the last pulse
                parts.strip.wait_sent(dark, 3.0)                         # stops first
                stamps.clear()
                out.clear()
                t0 = time.perf_counter()
                parts.strip.submit(Animation(frames.render, next_at))
                if not out.wait(3.0):
                    raise RuntimeError("the strip did not prepare the pulse")
                got_first.append((stamps["first"] - t0) * 1000)
                got_prepared.append((stamps["prepared"] - t0) * 1000)
            first.append(got_first)
            prepared.append(got_prepared)
    finally:
        parts.close()
    say(f"  led first frame: {events} changes x {rounds} rounds")
    return {"first": over_rounds(first), "prepared": over_rounds(prepared)}


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


def _proc_cpu_all(pid: int) -> float:
    """CPU seconds used by ``pid`` since it started, threads that already ended
    included (user + system time from ``stat``, in clock ticks of 10 ms)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _proc_status(pid: int, key: str) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1]) / 1024
    return float("nan")


def serve_idle(folder: str) -> int:
    """(Child mode) the companion as ``run`` starts it on ``folder`` (the live feed
    in ``folder/feed``; no sd_notify socket, so no watchdog); with a game
    there, the tokens are placed on the simulated board where the game says.
    Prints a line when ready and serves until stdin closes."""
    from firmware_py.service.assembly import start_companion
    cfg = validate({"backend": "sim", "journal": {"dir": folder},
                    "feed": {"dir": str(Path(folder) / "feed")}}, "bench")
    companion = start_companion(cfg, feed=Path(cfg["feed"]["dir"]),   # the live feed and its
                                names=Path(folder) / "names.json")    # beat, as ``run`` has
    state = companion.service.call(lambda: companion.service.view.state)
    if state is not None:
        companion.parts.sim_sensor.command("reset", tokens=[p.position for p in state.players])
        companion.parts.sim_sensor.sync()
    print(json.dumps({"ready": True, "sensor_pid": companion.parts.sim_sensor.proc.pid}), flush=True)
    sys.stdin.read()
    companion.close()
    return 0


FLOOR = "import time\nwhile True:\n    time.sleep(1.0)\n"   #: wakes once a second, does nothing


def idle(rounds: int, seconds: float, in_game: bool, say) -> dict:
    """CPU share of an idle companion process over ``seconds`` in all, taken as
    ``rounds`` equal windows: a game in progress (the active token pulses) or the first
    set-up question (nothing animates); the simulated sensor's process apart; and, over
    the same windows, the floor: a Python process that wakes once a second and does
    nothing. Shares are CPU time over wall time (``schedstat``, ns), of the whole
    window (a window's share is also kept, for the spread); and memory."""
    _, setup = game_at_start()
    work = Path(tempfile.mkdtemp(prefix="bench-idle-"))
    if in_game:
        write_setup(work, setup)
        proc = subprocess.Popen([sys.executable, __file__, "--serve-idle", str(work)],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    else:
        proc = _run_command(work)
    floor = subprocess.Popen([sys.executable, "-c", FLOOR])
    window = seconds / rounds
    shares, totals = [], {"service": 0.0, "sensor": 0.0, "floor": 0.0, "wall": 0.0}
    try:
        if in_game:
            sensor_pid = json.loads(proc.stdout.readline())["sensor_pid"]
        else:
            sensor_pid = _child_of(proc.pid)
        time.sleep(2.0)                                  # settle: link online, board judged
        pids = {"service": proc.pid, "sensor": sensor_pid, "floor": floor.pid}
        for _ in range(rounds):
            cpu0, t0 = {k: _proc_cpu(p) for k, p in pids.items()}, time.monotonic()
            time.sleep(window)
            cpu1, t1 = {k: _proc_cpu(p) for k, p in pids.items()}, time.monotonic()
            shares.append(100 * (cpu1["service"] - cpu0["service"]) / (t1 - t0))
            for key in pids:
                totals[key] += cpu1[key] - cpu0[key]
            totals["wall"] += t1 - t0
        wall = totals["wall"]
        out = {"pct": 100 * totals["service"] / wall, "lo": min(shares), "hi": max(shares),
               "rounds": rounds, "seconds": wall, "sim_sensor_pct": 100 * totals["sensor"] / wall,
               "floor_pct": 100 * totals["floor"] / wall,
               "rss_mb": _proc_status(proc.pid, "VmRSS"),
               "peak_rss_mb": _proc_status(proc.pid, "VmHWM"),
               "threads": len(os.listdir(f"/proc/{proc.pid}/task"))}
    finally:
        floor.kill()
        floor.wait(10)
        if in_game:
            proc.stdin.close()
        else:
            proc.terminate()
        proc.wait(10)
        shutil.rmtree(work, ignore_errors=True)
    say(f"  idle {'pulsing' if in_game else 'still'}: {rounds} x {window:g} s")
    return out


def _run_command(work: Path) -> subprocess.Popen:
    """``patchwork-companion run`` with the default config (sim backend), its state and
    live feed in ``work``, started and READY (its sd_notify socket this process's)."""
    name = f"bench-idle-{os.getpid()}"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind("\0" + name)
    sock.settimeout(20)
    env = dict(os.environ, NOTIFY_SOCKET="@" + name, XDG_STATE_HOME=str(work),
               XDG_RUNTIME_DIR=str(work))
    exe = Path(sys.executable).with_name("patchwork-companion")
    cmd = [str(exe), "run"] if exe.exists() else [sys.executable, "-m", "firmware_py.cli", "run"]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        while b"READY=1" not in sock.recv(4096):
            pass
    finally:
        sock.close()
    return proc


def _child_of(pid: int) -> int:
    """The process id of ``pid``'s child (the simulated sensor), from any of its threads."""
    for task in Path(f"/proc/{pid}/task").iterdir():
        children = (task / "children").read_text().split()
        if children:
            return int(children[0])
    raise RuntimeError(f"process {pid} has no child: no simulated sensor")


def serve_first_screen(fd: int) -> int:
    """(Child mode) the companion as ``run`` starts it (the sd_notify socket from the
    environment, the live feed, the names file), its OLED hook writing the monotonic
    time of the first frame drawn on the device to ``fd``; serves until stdin closes."""
    from firmware_py.service.assembly import names_path, start_companion
    from firmware_py.service.feed import feed_dir
    from firmware_py.service.sdnotify import Notifier
    cfg = validate({"backend": "sim"}, "bench")
    said: list = []

    def on_oled(_image):
        if not said:
            said.append(True)
            os.write(fd, f"{time.monotonic()!r}\n".encode())
    companion = start_companion(cfg, notifier=Notifier.from_environment(), feed=feed_dir(cfg),
                                names=names_path(cfg), on_oled_frame=on_oled)
    sys.stdin.read()
    companion.close()
    return 0


def first_screen(runs: int, say) -> dict:
    """Seconds from starting the companion (as ``run`` does, sim backend) to its first
    OLED frame drawn on the device, and to READY=1 on its ``NOTIFY_SOCKET``; both on the
    system's monotonic clock, READY when this process received it."""
    ready, shown = [], []
    for n in range(runs):
        work = Path(tempfile.mkdtemp(prefix="bench-first-"))
        name = f"bench-first-{os.getpid()}-{n}"
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        sock.bind("\0" + name)
        sock.settimeout(20)
        env = dict(os.environ, NOTIFY_SOCKET="@" + name, XDG_STATE_HOME=str(work),
                   XDG_RUNTIME_DIR=str(work))
        read_end, write_end = os.pipe()
        t0 = time.monotonic()
        proc = subprocess.Popen([sys.executable, __file__, "--serve-first-screen", str(write_end)],
                                env=env, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, pass_fds=(write_end,))
        os.close(write_end)
        try:
            while b"READY=1" not in sock.recv(4096):
                pass
            ready.append(time.monotonic() - t0)
            with os.fdopen(read_end, "rb") as pipe:
                shown.append(float(pipe.readline()) - t0)
        finally:
            proc.stdin.close()
            proc.wait(10)
            sock.close()
            shutil.rmtree(work, ignore_errors=True)
    say(f"  first screen: {runs} starts")
    return {"ready_s": statistics.median(ready), "shown_s": statistics.median(shown), "runs": runs,
            "ready_lo": min(ready), "ready_hi": max(ready), "shown_lo": min(shown),
            "shown_hi": max(shown),
            "ready_after_shown": sum(r >= s for r, s in zip(ready, shown))}


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


def ready_time(runs: int, backend: str, say, games: int = 0) -> dict:
    """Seconds from starting ``patchwork-companion run`` to READY=1 on ``backend``
    ("sim": the default config; "pi": the Pi's config, whose parts are absent here),
    with ``games`` finished games in the history."""
    import compileall
    import firmware_py
    # bytecode as an installed package has it (pip compiles it at install time; a source
    # tree run with PYTHONDONTWRITEBYTECODE would compile every module on each start)
    compileall.compile_dir(str(Path(firmware_py.__file__).parent), quiet=1)
    times, cpus, peaks = [], [], []
    prepared = Path(tempfile.mkdtemp(prefix="bench-store-")) / "patchwork-companion"
    prepared.mkdir()
    if games:
        say(f"  ready: filling a history of {games} games")
        fill_history(prepared, games)
    for n in range(runs):
        work = Path(tempfile.mkdtemp(prefix="bench-ready-"))
        if games:
            os.symlink(prepared, work / "patchwork-companion")
        name = f"bench-ready-{os.getpid()}-{backend}-{games}-{n}"
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        sock.bind("\0" + name)
        sock.settimeout(20)
        env = dict(os.environ, NOTIFY_SOCKET="@" + name, XDG_STATE_HOME=str(work))
        exe = Path(sys.executable).with_name("patchwork-companion")
        cmd = [str(exe), "run"] if exe.exists() else [sys.executable, "-m", "firmware_py.cli", "run"]
        if backend == "pi":
            config = work / "pi.toml"
            config.write_text('backend = "pi"\n[sensor]\nports = []\n')
            cmd += ["--config", str(config)]
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            while b"READY=1" not in sock.recv(4096):
                pass
            times.append(time.perf_counter() - t0)
            cpus.append(_proc_cpu_all(proc.pid))   # CPU it used so far: less shaken by load
            time.sleep(1.0)
            peaks.append(_proc_status(proc.pid, "VmHWM"))
        finally:
            proc.terminate()
            proc.wait(10)
            sock.close()
    shutil.rmtree(prepared.parent, ignore_errors=True)
    say(f"  ready ({backend}): {runs} starts with {games} games")
    return {"median_s": statistics.median(times), "lo": min(times), "hi": max(times),
            "max_s": max(times), "cpu_s": statistics.median(cpus), "runs": runs,
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
def report(m: dict, oled: dict, live: dict, pulsing: dict, still: dict, ready: dict,
           ready_pi: dict, pulse: dict, first: dict) -> list[str]:
    """The figures as printed lines, each starting with its fixed label."""
    ok = _ok

    def lat(label: str, r: dict, target: str = "") -> str:
        return (f"{label} {r['p50']:.2f} / {r['p99']:.2f} ms   (median of {r['rounds']} rounds "
                f"of {r['n']}+; p50 {r['p50_lo']:.2f}..{r['p50_hi']:.2f}, "
                f"p99 {r['p99_lo']:.2f}..{r['p99_hi']:.2f})" + (f"   {target}" if target else ""))
    a, b = oled["ssd1306"], oled["sh1106"]
    turn_pct = 100 * a["turn_mean"] / a["full"]
    cursor_pct = 100 * a["cursor_mean"] / a["full"]
    cpu = oled["cpu"]
    lines = [
        f"machine: {m['nproc']} CPUs, {m['cpu']}, Python {m['python']}, {m['system']}", "",
        f"oled bytes per turn update: {a['turn_mean']:.0f} B = {turn_pct:.1f} % of a full frame "
        f"({a['full']} B), SSD1306, mean of {oled['turn_updates']} turns of a game (max "
        f"{a['turn_max']} B; SH1106 {b['turn_mean']:.0f} B = {100 * b['turn_mean'] / b['full']:.1f} %"
        f" of {b['full']} B)   target <= {TARGETS['turn_update_pct']:g} %   "
        f"{ok(turn_pct, TARGETS['turn_update_pct'])}",
        f"oled bytes per cursor move: {a['cursor_mean']:.0f} B = {cursor_pct:.1f} % of a full "
        f"frame, SSD1306, mean of {oled['cursor_moves']} NEXT presses on turn screens (max "
        f"{a['cursor_max']} B; SH1106 {b['cursor_mean']:.0f} B = "
        f"{100 * b['cursor_mean'] / b['full']:.1f} %)   target <= {TARGETS['cursor_pct']:g} %   "
        f"{ok(cursor_pct, TARGETS['cursor_pct'])}",
        lat("oled cpu per frame p50/p99:", cpu, f"(render + display) target p50 <= "
            f"{TARGETS['oled_cpu_ms']} ms   {ok(cpu['p50'], TARGETS['oled_cpu_ms'])}"),
        lat("button to led p50/p99:", live["button_led"]),
        lat("button to oled p50/p99:", live["button_oled"]),
        lat("first light p50/p99:", live["first_light"], "(sensor frame on the pty to the LED "
            "frame showing the token; within one LED frame)"),
        lat("turn accepted p50/p99:", live["turn_accepted"], "(end of the stable window to "
            "LED and OLED frames; rules step and journal fsync included)"),
        lat("led first frame of a change p50/p99:", pulse["first"], "(submit to the strip's "
            "show() returned, a pulsing game; sent before the pulse is prepared)"),
        lat("led pulse prepared p50/p99:", pulse["prepared"], "(submit to every frame of the "
            "pulse worked out, after the first frame went out)"),
        *idle_lines(pulsing, still),
        f"first OLED frame: {first['shown_s']:.3f} s   (median of {first['runs']} starts as "
        f"'run' starts, sim backend, {first['shown_lo']:.3f}..{first['shown_hi']:.3f}: process "
        f"start to the first frame drawn on the device)",
        f"READY: {first['ready_s']:.3f} s   (the same starts, {first['ready_lo']:.3f}.."
        f"{first['ready_hi']:.3f}: process start to READY=1 received; after the first OLED "
        f"frame in {first['ready_after_shown']} of {first['runs']})",
        f"ready: {ready['median_s']:.3f} s   (median of {ready['runs']} starts of "
        f"'patchwork-companion run', sim backend, {ready['lo']:.3f}..{ready['hi']:.3f}, "
        f"CPU {ready['cpu_s']:.3f} s; pi backend here, its parts absent: "
        f"{ready_pi['median_s']:.3f} s, CPU {ready_pi['cpu_s']:.3f} s)   target <= "
        f"{TARGETS['ready_s']} s   {ok(ready['median_s'], TARGETS['ready_s'])}",
        f"peak memory (VmHWM): {pulsing['peak_rss_mb']:.1f} MB with a game in progress, "
        f"{pulsing['threads']} threads; 'run' 1 s after ready: {ready['peak_rss_mb']:.1f} MB"]
    return lines


def _ok(value: float, target: float) -> str:
    return "ok" if value <= target else "MISSED"


def idle_lines(pulsing: dict, still: dict) -> list[str]:
    """The idle figures' lines (see the module's docstring for their labels)."""
    ok = _ok

    def times(part: float, floor: float) -> float:
        return part / floor if floor > 0 else float("inf")
    ratio = times(still["pct"], still["floor_pct"])
    return [
        f"idle cpu pulsing: {pulsing['pct']:.4f} % of a core   (service process, over "
        f"{pulsing['seconds']:.0f} s in {pulsing['rounds']} windows, {pulsing['lo']:.4f}.."
        f"{pulsing['hi']:.4f}; simulated sensor process apart {pulsing['sim_sensor_pct']:.4f} %)"
        f"   target <= {TARGETS['idle_pulsing_pct']} %   "
        f"{ok(pulsing['pct'], TARGETS['idle_pulsing_pct'])}",
        f"idle cpu still: {still['pct']:.4f} % of a core   ('patchwork-companion run' on the "
        f"first set-up question, over {still['seconds']:.0f} s in {still['rounds']} windows, "
        f"{still['lo']:.4f}..{still['hi']:.4f}; simulated sensor process apart "
        f"{still['sim_sensor_pct']:.4f} %; nothing animates: the sensor link wakes for the "
        f"sensor's heartbeat)",
        f"idle floor: {still['floor_pct']:.4f} % of a core   (a Python process waking once a "
        f"second to do nothing, over the same {still['seconds']:.0f} s)",
        f"idle still vs floor: {ratio:.1f} x   (service process; with the simulated sensor's "
        f"process {times(still['pct'] + still['sim_sensor_pct'], still['floor_pct']):.1f} x)   "
        f"target <= {TARGETS['idle_ratio']:g} x   {ok(ratio, TARGETS['idle_ratio'])}",
    ]


def main(argv: list[str] | None = None) -> int:
    """Run every measurement and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5, help="rounds per figure (>= 5 advised)")
    parser.add_argument("--events", type=int, default=200, help="events per round")
    parser.add_argument("--idle-seconds", type=float, default=60.0,
                        help="seconds of each idle measurement, in --rounds windows (>= 60 "
                             "advised: an idle service uses well under a clock tick a second)")
    parser.add_argument("--quick", action="store_true", help="3 rounds of 50 events, 30 s idle")
    parser.add_argument("--json", action="store_true", help="also print the raw figures as JSON")
    parser.add_argument("--history-games", type=int, default=10000,
                        help="finished games in the history for the second start-up figure")
    parser.add_argument("--ready-only", action="store_true", help="only the start-up figures")
    parser.add_argument("--idle-only", action="store_true", help="only the idle figures")
    parser.add_argument("--serve-idle", help=argparse.SUPPRESS)
    parser.add_argument("--serve-first-screen", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve_idle:
        return serve_idle(args.serve_idle)
    if args.serve_first_screen is not None:
        return serve_first_screen(args.serve_first_screen)
    if args.quick:
        args.rounds, args.events, args.idle_seconds = 3, 50, 30.0

    began = time.monotonic()

    def say(text):
        print(f"[{time.monotonic() - began:6.1f} s] {text}", file=sys.stderr, flush=True)
    m = machine()
    runs = max(args.rounds, 5)
    if args.ready_only:
        say("start-up ...")
        empty = ready_time(runs, "sim", say)
        full = ready_time(runs, "sim", say, args.history_games)
        print("\n".join([f"machine: {m['nproc']} CPUs, {m['cpu']}, Python {m['python']}, "
                         f"{m['system']}"] + ready_lines(empty, full)))
        return 0
    if args.idle_only:
        say("idle ...")
        pulsing = idle(args.rounds, args.idle_seconds, True, say)
        still = idle(args.rounds, args.idle_seconds, False, say)
        print("\n".join([f"machine: {m['nproc']} CPUs, {m['cpu']}, Python {m['python']}, "
                         f"{m['system']}"] + idle_lines(pulsing, still)))
        return 0
    say("oled ...")
    oled = oled_figures(args.rounds, say)
    say("live companion ...")
    live = live_figures(args.rounds, args.events, say)
    say("led first frame ...")
    pulse = pulse_figures(args.rounds, args.events, say)
    say("idle ...")
    pulsing = idle(args.rounds, args.idle_seconds, True, say)
    still = idle(args.rounds, args.idle_seconds, False, say)
    say("start-up ...")
    ready = ready_time(runs, "sim", say)
    ready_pi = ready_time(runs, "pi", say)
    full = ready_time(runs, "sim", say, args.history_games)
    first = first_screen(runs, say)
    print("\n".join(report(m, oled, live, pulsing, still, ready, ready_pi, pulse, first)
                    + ready_lines(ready, full)))
    if args.json:
        print(json.dumps({"machine": m, "oled": oled, "live": live, "idle_pulsing": pulsing,
                          "idle_still": still, "ready": ready, "ready_pi": ready_pi,
                          "ready_with_history": full, "led_pulse": pulse,
                          "first_screen": first}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
