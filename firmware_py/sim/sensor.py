"""The simulated token sensor: the real frame protocol over a real pseudo-terminal.

Run as a separate process::

    python -m firmware_py.sim.sensor --spaces 54 --link /tmp/pw/sensor [--speed 4]
                                     [--heartbeat 1.0] [--firmware 1.1.0-sim]

It opens a pty in raw mode, points the symlink ``--link`` at the slave device
(as udev's ``/dev/patchwork-sensor`` would), then prints one JSON line
``{"ready": true, "link": ..., "tty": ...}`` on stdout. It answers REQ frames,
sends a BEAT every ``--heartbeat`` seconds and a CHG frame for every change of
occupancy. Two physical time tokens (0 and 1) are modelled; the sensor only
reports occupied spaces, never which token is where.

Commands arrive on stdin, one JSON object per line, and each is answered by one
JSON line on stdout: ``{"ok": true}`` or ``{"ok": false, "error": "..."}``; an
``"id"`` in a command is echoed in its answer. Commands run in order; a gesture
delays the commands after it. Most are answered when queued (after checking
them against the state they will find); ``sync`` and ``status`` are answered
when they are reached. Ops: reset, move (style slide|lift), lift, place, sync,
status, unplug, replug, silence, garbage, corrupt_next, split_writes, banner,
stuck, scan_stats, hello, quit. ``hello`` with ``"fields"`` (the text after
``PW,HELLO,<seq>,``, e.g. ``"2,1.0.0,54"``) makes the sensor greet with those
fields, however odd, to test a host's handshake checks; ``"fields": null``
restores the normal HELLO.

``REQ STAT`` is answered with the scan figures a Pico running the reference
firmware reports (by default 1000 scans in a 5000 ms window, i.e. 200 Hz,
worst scan 1.8 ms, worst gap 5.4 ms); ``scan_stats`` sets other figures, or
with ``"off": true`` makes the sensor ignore ``REQ STAT`` like firmware 1.0.0. ``--speed`` divides gesture times (slides, time in the air);
heartbeats and ``silence`` stay in real seconds.

:class:`SimSensorProcess` starts the process and talks to it from tests/demos.
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import select
import signal
import subprocess
import sys
import threading
import time
import tty
from pathlib import Path

from ..disk import replace_symlink
from ..hw import sensor_protocol as sp

FIRMWARE = "1.1.0-sim"
SCAN_STATS = (5000, 1000, 1800, 5400)   #: window_ms, scans, worst_scan_us, worst_gap_us
SLIDE_STEP = 0.04        # seconds per space slid, at speed 1
AIR_TIME = 0.3           # seconds a lifted token is in the air, at speed 1
SPLIT_GAP = 0.001        # seconds between bytes when split_writes is on
MAX_PENDING = 16384      # bytes of output kept while the host does not read
BANNER = (b"\x1b]0;\xf0\x9f\x90\x8dcode.py | 9.1.4\x1b\\soft reboot\r\n\r\n"
          b"Auto-reload is off.\r\ncode.py output:\r\n"
          b"Adafruit CircuitPython 9.1.4 on 2024-09-17; Raspberry Pi Pico with rp2040\r\n"
          b"Press any key to enter the REPL. Use CTRL-D to reload.")


class CommandError(ValueError):
    """A command that is malformed or impossible in the state it will find."""


# ----------------------------------------------------------------- the board
class TokenBoard:
    """Two tokens, each covering a set of spaces (empty while in the air), and stuck spaces."""

    def __init__(self, spaces: int):
        self.spaces = spaces
        self.covers: list[set[int]] = [set(), set()]
        self.stuck: set[int] = set()

    def occupancy(self) -> frozenset[int]:
        """The spaces a perfect sensor would report occupied now."""
        return frozenset(self.covers[0] | self.covers[1] | self.stuck)


# ------------------------------------------------------------------ the plug
class PtyLink:
    """One simulated USB plug: a raw pty pair and a symlink ``path`` to its slave."""

    def __init__(self, path: str):
        self.path = path
        self.master, self.slave = os.openpty()
        tty.setraw(self.slave)
        os.set_blocking(self.master, False)
        self.tty = os.ttyname(self.slave)
        if os.path.lexists(path) and not os.path.islink(path):
            self.close()
            raise FileExistsError(f"{path} exists and is not a symlink; not replacing it")
        replace_symlink(path, self.tty, durable=False)     # the simulator's link: no fsync

    def write(self, data: bytes) -> int:
        """Write what the pty takes now; returns bytes written (0 when full)."""
        try:
            return os.write(self.master, data)
        except BlockingIOError:
            return 0

    def read(self) -> bytes:
        """Bytes the host wrote, or b"" when none are waiting."""
        try:
            return os.read(self.master, 4096)
        except (BlockingIOError, OSError):
            return b""

    def close(self) -> None:
        """Pull the plug: remove the symlink (if still ours) and close both ends."""
        try:
            if os.readlink(self.path) == self.tty:
                os.unlink(self.path)
        except OSError:
            pass
        for fd in (self.master, self.slave):
            try:
                os.close(fd)
            except OSError:
                pass


class Output:
    """Bytes waiting for the pty; byte by byte with small gaps when ``split``."""

    def __init__(self):
        self.pending = bytearray()
        self.split = False
        self.next_at = 0.0

    def add(self, data: bytes) -> None:
        """Queue ``data``; the oldest bytes are dropped beyond MAX_PENDING."""
        self.pending += data
        if len(self.pending) > MAX_PENDING:
            del self.pending[:len(self.pending) - MAX_PENDING]

    def flush(self, link: PtyLink | None, now: float) -> None:
        """Write what is due at ``now`` to ``link`` (drop everything when unplugged)."""
        if link is None:
            self.pending.clear()
            return
        while self.pending and now >= self.next_at:
            size = 1 if self.split else len(self.pending)
            written = link.write(bytes(self.pending[:size]))
            if written <= 0:
                return
            del self.pending[:written]
            if self.split:
                self.next_at = now + SPLIT_GAP
                return

    def wake_at(self) -> float | None:
        """When :meth:`flush` next has work, or None."""
        return self.next_at if self.pending else None


# ---------------------------------------------------------------- the sensor
class SimSensor:
    """The simulated sensor's state and single-threaded event loop.

    spaces: 1..128; link_path: where the symlink goes; speed: > 0, divides
    gesture times; heartbeat: seconds between BEAT frames.
    """

    def __init__(self, spaces: int, link_path: str, speed: float = 1.0,
                 heartbeat: float = 1.0, firmware: str = FIRMWARE, reply=None):
        self.board = TokenBoard(spaces)
        self.spaces, self.speed, self.heartbeat, self.firmware = spaces, speed, heartbeat, firmware
        self.reply = reply or _print_json
        self.link: PtyLink | None = PtyLink(link_path)
        self.link_path = link_path
        self.out = Output()
        self.parser = sp.FrameParser()
        self.reported: frozenset[int] = frozenset()
        self.plan: list[int | None] = [None, None]
        self.seq = 0
        self.sent = self.dropped = self.corrupt = 0
        self.corrupt_at: tuple[int, int] = (-1, 0)
        self.silent_until = 0.0
        self.next_beat = time.monotonic()
        self.queue: collections.deque = collections.deque()
        self.task = None
        self.wake = 0.0
        self.running = True
        self.hello_fields: str | None = None    # an odd HELLO to greet with (tests)
        self.scan_figures: tuple[int, int, int, int] | None = SCAN_STATS

    # ------------------------------------------------------------ protocol
    def send(self, frame: sp.Frame) -> None:
        """Put one frame on the wire (lost while unplugged or silent)."""
        data = bytearray(sp.encode(frame))
        if self.corrupt > 0:
            self.corrupt -= 1
            index, bit = self.corrupt_at
            data[index] ^= 1 << bit
        if self.link is None or time.monotonic() < self.silent_until:
            self.dropped += 1
            return
        self.sent += 1
        self.out.add(bytes(data))

    def next_seq(self) -> int:
        """The sequence number for the next frame (0..65535, wrapping)."""
        seq, self.seq = self.seq, (self.seq + 1) % sp.SEQ_MODULO
        return seq

    def emit_changes(self) -> None:
        """One CHG frame per space whose occupancy differs from what was reported."""
        now = self.board.occupancy()
        for space in sorted(now ^ self.reported):
            self.reported = self.reported ^ {space}
            self.send(sp.Change(self.next_seq(), self.spaces, space, space in self.reported,
                                self.reported))

    def answer(self, request: sp.Request) -> None:
        """Answer a host request with a HELLO, SNAP or STAT frame (STAT only while
        ``scan_figures`` is set: otherwise ignored, as firmware 1.0.0 does)."""
        if request.what == "HELLO" and self.hello_fields is not None:
            body = f"PW,HELLO,{self.next_seq()},{self.hello_fields}".encode("ascii")
            self.sent += 1
            self.out.add(b"$" + body + b"*%04X\r\n" % sp.crc16_ccitt_false(body))
            return
        if request.what == "STAT":
            if self.scan_figures is not None:
                self.send(sp.ScanStats(self.next_seq(), *self.scan_figures))
        elif request.what == "HELLO":
            self.send(sp.Hello(self.next_seq(), sp.PROTOCOL_VERSION, self.firmware, self.spaces))
        else:
            self.send(sp.Snapshot(self.next_seq(), self.spaces, self.reported))

    def beat(self, now: float) -> None:
        """Send a BEAT when one is due."""
        if now < self.next_beat:
            return
        self.next_beat = max(self.next_beat + self.heartbeat, now)
        self.send(sp.Heartbeat(self.next_seq(), self.spaces, self.reported))

    # -------------------------------------------------------------- loop
    def run(self) -> None:
        """Serve stdin commands and the pty until ``quit`` or end of stdin."""
        stdin = sys.stdin.fileno()
        lines = bytearray()
        while self.running:
            ready = self._wait(stdin)
            if stdin in ready:
                lines = self._stdin(stdin, lines)
            if self.link is not None and self.link.master in ready:
                self._host_bytes(self.link.read())
            now = time.monotonic()
            self._run_tasks(now)
            self.beat(now)
            self.out.flush(self.link, now)

    def _wait(self, stdin: int) -> list[int]:
        """Block until a command or host bytes arrive, or the next deadline (the heartbeat,
        a gesture's next step, a split write's next byte): an idle sensor wakes only
        for its heartbeat."""
        now = time.monotonic()
        due = [self.next_beat, self.wake if (self.task or self.queue) else None, self.out.wake_at()]
        timeout = min(d for d in due if d is not None) - now
        fds = [stdin] + ([self.link.master] if self.link is not None else [])
        return select.select(fds, [], [], max(0.0, timeout))[0]

    def _stdin(self, fd: int, buf: bytearray) -> bytearray:
        data = os.read(fd, 65536)
        if not data:
            self.running = False
        buf += data
        while b"\n" in buf:
            line, _, rest = bytes(buf).partition(b"\n")
            buf = bytearray(rest)
            if line.strip():
                self.command(line)
        return buf

    def _host_bytes(self, data: bytes) -> None:
        for frame in self.parser.feed(data):
            if isinstance(frame, sp.Request) and time.monotonic() >= self.silent_until:
                self.answer(frame)

    def _run_tasks(self, now: float) -> None:
        while now >= self.wake and self.running:
            if self.task is None:
                if not self.queue:
                    return
                self.task = self.queue.popleft()
            try:
                delay = next(self.task)
            except StopIteration:
                self.task = None
                continue
            self.wake = now + delay

    # ----------------------------------------------------------- commands
    def command(self, line: bytes) -> None:
        """Check one JSON command, queue its steps and answer (now or when reached)."""
        cid = None
        try:
            cmd = json.loads(line)
            if not isinstance(cmd, dict):
                raise CommandError("a command must be a JSON object")
            cid = cmd.get("id")
            handler = getattr(self, f"_op_{cmd.get('op')}", None)
            if handler is None:
                raise CommandError(f"unknown op {cmd.get('op')!r}")
            steps, deferred = handler(cmd)
        except (ValueError, TypeError) as exc:
            self._answer(cid, {"ok": False, "error": str(exc)})
            return
        self.queue.append(steps)
        if not deferred:
            self._answer(cid, {"ok": True})

    def _answer(self, cid, body: dict) -> None:
        if cid is not None:
            body = {"id": cid, **body}
        self.reply(body)

    # op handlers: check the command, update the plan, return (steps, deferred)
    def _op_reset(self, cmd):
        tokens = cmd.get("tokens")
        if not isinstance(tokens, list) or len(tokens) != 2:
            raise CommandError("reset needs tokens: [space or null, space or null]")
        spaces = [None if t is None else self._space(t, "tokens[]") for t in tokens]
        self.plan = list(spaces)
        return self._steps_set(spaces), False

    def _op_move(self, cmd):
        token, to = self._token(cmd), self._space(cmd.get("to"), "to")
        style = cmd.get("style", "slide")
        if style not in ("slide", "lift"):
            raise CommandError(f"style must be 'slide' or 'lift', got {style!r}")
        start = self.plan[token]
        if start is None:
            raise CommandError(f"token {token} is not on the board; use place")
        self.plan[token] = to
        if style == "slide":
            return self._steps_slide(token, start, to), False
        return self._steps_lift(token, to), False

    def _op_lift(self, cmd):
        token = self._token(cmd)
        if self.plan[token] is None:
            raise CommandError(f"token {token} is already in the air")
        self.plan[token] = None
        return self._steps_put(token, None), False

    def _op_place(self, cmd):
        token, space = self._token(cmd), self._space(cmd.get("space"), "space")
        self.plan[token] = space
        return self._steps_put(token, space), False

    def _op_stuck(self, cmd):
        space, on = self._space(cmd.get("space"), "space"), bool(cmd.get("on", True))
        return self._steps_call(lambda: self._set_stuck(space, on)), False

    def _op_sync(self, cmd):
        return self._steps_sync(cmd.get("id")), True

    def _op_status(self, cmd):
        return self._steps_status(cmd.get("id")), True

    def _op_unplug(self, cmd):
        return self._steps_call(self.unplug), False

    def _op_replug(self, cmd):
        path = cmd.get("link", self.link_path)
        if not isinstance(path, str) or not path:
            raise CommandError("replug link must be a path")
        return self._steps_call(lambda: self.replug(path)), False

    def _op_silence(self, cmd):
        seconds = cmd.get("seconds")
        if not isinstance(seconds, (int, float)) or not 0 < seconds <= 60:
            raise CommandError(f"silence seconds must be in (0, 60], got {seconds!r}")
        return self._steps_call(lambda: self._silence(seconds)), False

    def _op_garbage(self, cmd):
        text = cmd.get("bytes")
        if not isinstance(text, str) or len(text) > 4096:
            raise CommandError("garbage bytes must be a string of at most 4096 characters")
        return self._steps_call(lambda: self._raw(text.encode("latin-1"))), False

    def _op_corrupt_next(self, cmd):
        count, index, bit = cmd.get("count", 1), cmd.get("byte", -8), cmd.get("bit", 0)
        if not all(isinstance(v, int) for v in (count, index, bit)) or count < 1 or not 0 <= bit < 8:
            raise CommandError("corrupt_next takes count >= 1, byte (index), bit 0..7")
        return self._steps_call(lambda: self._corrupt(count, index, bit)), False

    def _op_split_writes(self, cmd):
        on = bool(cmd.get("on", True))
        return self._steps_call(lambda: setattr(self.out, "split", on)), False

    def _op_banner(self, cmd):
        return self._steps_call(lambda: self._raw(BANNER)), False

    def _op_hello(self, cmd):
        fields = cmd.get("fields")
        if fields is not None and not (isinstance(fields, str) and fields.isascii()
                                       and "*" not in fields and "$" not in fields
                                       and len(fields) <= 400):
            raise CommandError("hello fields must be ASCII text without '*' or '$', or null")
        return self._steps_call(lambda: setattr(self, "hello_fields", fields)), False

    def _op_scan_stats(self, cmd):
        if cmd.get("off"):
            return self._steps_call(lambda: setattr(self, "scan_figures", None)), False
        names = ("window_ms", "scans", "worst_scan_us", "worst_gap_us")
        values = tuple(cmd.get(name) for name in names)
        try:
            sp.ScanStats(0, *values)
        except sp.FieldError as exc:
            raise CommandError(f"scan_stats: {exc}") from None
        return self._steps_call(lambda: setattr(self, "scan_figures", values)), False

    def _op_quit(self, cmd):
        return self._steps_call(lambda: setattr(self, "running", False)), False

    def _token(self, cmd) -> int:
        token = cmd.get("token")
        if token not in (0, 1) or isinstance(token, bool):
            raise CommandError(f"token must be 0 or 1, got {token!r}")
        return token

    def _space(self, value, name: str) -> int:
        if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value < self.spaces:
            raise CommandError(f"{name} must be a space 0..{self.spaces - 1}, got {value!r}")
        return value

    # ------------------------------------------------------------- steps
    def _steps_call(self, action):
        action()
        yield 0.0

    def _steps_set(self, spaces):
        for token, space in enumerate(spaces):
            self.board.covers[token] = set() if space is None else {space}
        self.emit_changes()
        yield 0.0

    def _steps_put(self, token, space):
        self.board.covers[token] = set() if space is None else {space}
        self.emit_changes()
        yield 0.0

    def _steps_slide(self, token, start, to):
        half = SLIDE_STEP / self.speed / 2
        step = 1 if to >= start else -1
        for space in range(start + step, to + step, step):
            self.board.covers[token] = {space - step, space}
            self.emit_changes()
            yield half
            self.board.covers[token] = {space}
            self.emit_changes()
            yield half

    def _steps_lift(self, token, to):
        self.board.covers[token] = set()
        self.emit_changes()
        yield AIR_TIME / self.speed
        self.board.covers[token] = {to}
        self.emit_changes()
        yield 0.0

    def _steps_sync(self, cid):
        give_up = time.monotonic() + 5.0
        while self.out.pending and self.link is not None and time.monotonic() < give_up:
            yield SPLIT_GAP
        self._answer(cid, {"ok": True})

    def _steps_status(self, cid):
        self._answer(cid, {"ok": True, "tokens": [self._where(0), self._where(1)],
                           "occupied": sorted(self.board.occupancy()), "seq": self.seq,
                           "link": self.link.path if self.link else None,
                           "tty": self.link.tty if self.link else None,
                           "sent": self.sent, "dropped": self.dropped,
                           "requests_bad": self.parser.stats.crc_errors + self.parser.stats.malformed})
        yield 0.0

    def _where(self, token: int) -> int | None:
        cover = self.board.covers[token]
        return max(cover) if cover else None

    # ------------------------------------------------------------- faults
    def unplug(self) -> None:
        """Close the pty and remove the symlink; frames are lost until replug."""
        if self.link is not None:
            self.link.close()
            self.link = None
        self.out.pending.clear()

    def replug(self, path: str) -> None:
        """A new pty at ``path``; the sensor 'reboots': seq restarts at 0."""
        self.unplug()
        self.link_path = path
        self.link = PtyLink(path)
        self.parser.reset()
        self.seq = 0
        self.reported = self.board.occupancy()

    def _set_stuck(self, space: int, on: bool) -> None:
        (self.board.stuck.add if on else self.board.stuck.discard)(space)
        self.emit_changes()

    def _silence(self, seconds: float) -> None:
        self.silent_until = time.monotonic() + seconds
        self.out.pending.clear()

    def _raw(self, data: bytes) -> None:
        if self.link is not None and time.monotonic() >= self.silent_until:
            self.out.add(data)

    def _corrupt(self, count: int, index: int, bit: int) -> None:
        self.corrupt, self.corrupt_at = count, (index, bit)


def _print_json(body: dict) -> None:
    sys.stdout.write(json.dumps(body) + "\n")
    sys.stdout.flush()


# -------------------------------------------------------------------- client
class SimSensorError(RuntimeError):
    """The simulated sensor answered ``ok: false``, died, or did not answer in time."""


class SimSensorProcess:
    """Runs ``python -m firmware_py.sim.sensor`` and talks to it over its stdin/stdout.

    link: path of the symlink (its folder must exist); spaces: 1..128;
    speed: gesture speed factor (> 0); heartbeat: seconds between BEATs.
    Use as a context manager, or call :meth:`start` and :meth:`close`.
    """

    def __init__(self, link: str | os.PathLike, spaces: int = 54, speed: float = 1.0,
                 heartbeat: float = 1.0, python: str = sys.executable):
        self.link = os.fspath(link)
        self.args = [python, "-m", "firmware_py.sim.sensor", "--spaces", str(spaces),
                     "--link", self.link, "--speed", str(speed), "--heartbeat", str(heartbeat)]
        self.proc: subprocess.Popen | None = None
        self.tty: str | None = None
        self._replies: dict = {}
        self._cond = threading.Condition()
        self._next_id = 0

    def start(self, timeout: float = 10.0) -> "SimSensorProcess":
        """Start the process; return once the link symlink exists. Raises SimSensorError."""
        root = str(Path(__file__).resolve().parents[2])
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(
            [root] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
        # its own process group: a Ctrl-C in the terminal stops the companion, which then
        # ends this process in order (quit, end of stdin); it never dies half-way on its own
        self.proc = subprocess.Popen(self.args, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     env=env, text=True, bufsize=1, process_group=0)
        threading.Thread(target=self._read_replies, name="sim-sensor-replies", daemon=True).start()
        ready = self._wait_reply("ready", timeout)
        self.tty = ready.get("tty")
        return self

    def command(self, op: str, timeout: float = 10.0, **fields) -> dict:
        """Send ``{"op": op, **fields}`` and return its answer; raises SimSensorError if not ok."""
        with self._cond:
            self._next_id += 1
            cid = self._next_id
        self._write({"id": cid, "op": op, **fields})
        reply = self._wait_reply(cid, timeout)
        if not reply.get("ok"):
            raise SimSensorError(f"{op}: {reply.get('error')}")
        return reply

    def sync(self, timeout: float = 10.0) -> dict:
        """Wait until every command sent before has run and its bytes are written."""
        return self.command("sync", timeout=timeout)

    def status(self, timeout: float = 10.0) -> dict:
        """Token positions, occupancy, seq, link and counters, once queued commands ran."""
        return self.command("status", timeout=timeout)

    def close(self, timeout: float = 5.0) -> None:
        """Ask the process to quit; kill it if it does not within ``timeout`` seconds."""
        if self.proc is None:
            return
        try:
            self._write({"op": "quit"})
            self.proc.stdin.close()
        except (OSError, ValueError, SimSensorError):
            pass
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.proc = None

    def __enter__(self) -> "SimSensorProcess":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.close()

    def _write(self, body: dict) -> None:
        if self.proc is None or self.proc.poll() is not None:
            raise SimSensorError("the simulated sensor is not running")
        self.proc.stdin.write(json.dumps(body) + "\n")
        self.proc.stdin.flush()

    def _read_replies(self) -> None:
        for line in self.proc.stdout:
            try:
                body = json.loads(line)
            except ValueError:
                continue
            key = "ready" if body.get("ready") else body.get("id")
            with self._cond:
                self._replies[key] = body
                self._cond.notify_all()
        with self._cond:
            self._replies["eof"] = True
            self._cond.notify_all()

    def _wait_reply(self, key, timeout: float) -> dict:
        deadline = time.monotonic() + timeout
        with self._cond:
            while key not in self._replies:
                left = deadline - time.monotonic()
                if "eof" in self._replies or left <= 0:
                    raise SimSensorError(f"no answer for {key!r} (process ended or timed out)")
                self._cond.wait(left)
            return self._replies.pop(key)


# ----------------------------------------------------------------------- CLI
def build_parser() -> argparse.ArgumentParser:
    """The command line of the simulated sensor process."""
    parser = argparse.ArgumentParser(prog="python -m firmware_py.sim.sensor",
                                     description="Simulated Patchwork token sensor on a pty.")
    parser.add_argument("--spaces", type=int, default=54, help="time-board spaces (54 or 30)")
    parser.add_argument("--link", required=True, help="symlink to create for the pty slave")
    parser.add_argument("--speed", type=float, default=1.0, help="gesture speed factor (> 0)")
    parser.add_argument("--heartbeat", type=float, default=1.0, help="seconds between BEATs")
    parser.add_argument("--firmware", default=FIRMWARE, help="firmware version in HELLO")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the simulated sensor until ``quit``, end of stdin, SIGTERM or Ctrl-C (exit 130)."""
    args = build_parser().parse_args(argv)
    if not 1 <= args.spaces <= sp.MAX_SPACES or args.speed <= 0 or args.heartbeat <= 0:
        build_parser().error("need 1 <= spaces <= 128, speed > 0 and heartbeat > 0")
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    sensor = SimSensor(args.spaces, args.link, args.speed, args.heartbeat, args.firmware)
    try:
        _print_json({"ready": True, "link": args.link, "tty": sensor.link.tty})
        sensor.run()
    except KeyboardInterrupt:            # Ctrl-C when run on its own: stop, no traceback
        return 130
    finally:
        sensor.unplug()
    return 0


if __name__ == "__main__":
    sys.exit(main())
