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
import sys
import time

from ..hw import sensor_protocol as sp
from .sensor_client import SimSensorError, SimSensorProcess  # noqa: F401  (read from here)
from .sensor_commands import AIR_TIME, BANNER, SLIDE_STEP, CommandError, Commands  # noqa: F401
from .sensor_pty import MAX_PENDING, SPLIT_GAP, Output, PtyLink  # noqa: F401

FIRMWARE = "1.1.0-sim"
SCAN_STATS = (5000, 1000, 1800, 5400)   #: window_ms, scans, worst_scan_us, worst_gap_us


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


# ---------------------------------------------------------------- the sensor
class SimSensor(Commands):
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
