"""The simulated sensor process over its real pty, read with the host's frame parser."""
from __future__ import annotations

import errno
import os
import select
import termios
import time

import pytest

from firmware_py.hw import sensor_protocol as sp
from firmware_py.sim.sensor import AIR_TIME, SimSensorError, SimSensorProcess

SPEED = 4.0


class PtyPeer:
    """The host end of the pty: raw reads with deadlines into a FrameParser."""

    def __init__(self, path):
        self.fd = os.open(path, os.O_RDWR | os.O_NOCTTY | os.O_NONBLOCK)
        termios.tcflush(self.fd, termios.TCIFLUSH)      # what a real open() does
        self.parser = sp.FrameParser()
        self.frames: list[tuple[float, sp.Frame]] = []
        self.reads = 0
        self.closed = False

    def send(self, frame: sp.Frame) -> None:
        os.write(self.fd, sp.encode(frame))

    def pump(self, seconds: float) -> None:
        """Read whatever arrives for ``seconds``."""
        deadline = time.monotonic() + seconds
        while not self.closed and (left := deadline - time.monotonic()) > 0:
            self._read_once(left)

    def until(self, predicate, timeout: float = 3.0) -> list[sp.Frame]:
        """Read until ``predicate(frames)`` holds; fail after ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        while not predicate(self.got()):
            left = deadline - time.monotonic()
            assert left > 0 and not self.closed, f"timed out; got {self.got()}"
            self._read_once(left)
        return self.got()

    def got(self) -> list[sp.Frame]:
        return [f for _, f in self.frames]

    def take(self) -> list[sp.Frame]:
        frames, self.frames = self.got(), []
        return frames

    def clear(self) -> None:
        """Read what is already in the pty (e.g. after a sync) and forget it."""
        while not self.closed and select.select([self.fd], [], [], 0.02)[0]:
            self._read_once(0.02)
        self.frames = []

    def _read_once(self, left: float) -> None:
        if not select.select([self.fd], [], [], min(left, 0.05))[0]:
            return
        try:
            data = os.read(self.fd, 4096)
        except OSError as exc:
            assert exc.errno == errno.EIO
            data = b""
        if not data:                                    # the master side was closed
            self.closed = True
            return
        self.reads += 1
        now = time.monotonic()
        self.frames += [(now, f) for f in self.parser.feed(data)]

    def close(self) -> None:
        os.close(self.fd)


@pytest.fixture
def sim(tmp_path):
    with SimSensorProcess(tmp_path / "sensor", spaces=54, speed=SPEED) as process:
        yield process


@pytest.fixture
def peer(sim):
    p = PtyPeer(sim.link)
    yield p
    p.close()


def chg(frames) -> list[tuple[int, bool]]:
    return [(f.space, f.now_occupied) for f in frames if isinstance(f, sp.Change)]


def has_change(space, on):
    return lambda frames: (space, on) in chg(frames)


def test_link_is_a_symlink_to_a_raw_pty(sim, peer):
    assert os.path.islink(sim.link) and os.readlink(sim.link) == sim.tty
    assert sim.tty.startswith("/dev/pts/") and os.isatty(peer.fd)
    lflag = termios.tcgetattr(peer.fd)[3]
    assert not lflag & (termios.ECHO | termios.ICANON)


def test_hello_and_snapshot_on_request(sim, peer):
    sim.command("reset", tokens=[0, 3])
    sim.sync()
    peer.clear()
    peer.send(sp.Request(0, "HELLO"))
    peer.send(sp.Request(1, "SNAP"))
    frames = peer.until(lambda fs: any(isinstance(f, sp.Snapshot) for f in fs))
    hello = next(f for f in frames if isinstance(f, sp.Hello))
    snap = next(f for f in frames if isinstance(f, sp.Snapshot))
    assert (hello.protocol, hello.firmware, hello.spaces) == (1, "1.1.0-sim", 54)
    assert snap.occupied == {0, 3} and snap.seq == hello.seq + 1


def test_slide_changes_occupancy_space_by_space(sim, peer):
    sim.command("reset", tokens=[2, 2])
    sim.sync()
    peer.clear()
    sim.command("move", token=0, to=5, style="slide")
    peer.until(has_change(4, False))                     # read while the hand slides
    times = [t for t, f in peer.frames if isinstance(f, sp.Change)]
    frames = peer.take()
    assert chg(frames) == [(3, True), (4, True), (3, False), (5, True), (4, False)]
    assert [f for f in frames if isinstance(f, sp.Change)][-1].occupied == {2, 5}
    assert [f.seq for f in frames] == list(range(frames[0].seq, frames[0].seq + len(frames)))
    half_step = 0.04 / SPEED / 2
    assert times[-1] - times[0] >= 4 * half_step * 0.8      # hand speed, not one burst
    assert sim.status()["tokens"] == [5, 2]


def test_slide_backwards(sim, peer):
    sim.command("reset", tokens=[9, 0])
    sim.command("move", token=0, to=7)
    sim.sync()
    frames = peer.until(has_change(8, False))
    assert chg(frames)[-4:] == [(8, True), (9, False), (7, True), (8, False)]


def test_lift_move_leaves_then_lands_after_a_moment(sim, peer):
    sim.command("reset", tokens=[2, 10])
    sim.sync()
    peer.clear()
    sim.command("move", token=0, to=6, style="lift")
    peer.until(has_change(6, True))
    changes = [(t, f) for t, f in peer.frames if isinstance(f, sp.Change)]
    assert [(f.space, f.now_occupied) for _, f in changes] == [(2, False), (6, True)]
    assert changes[0][1].occupied == {10} and changes[1][1].occupied == {6, 10}
    assert changes[1][0] - changes[0][0] >= AIR_TIME / SPEED * 0.8


def test_tokens_on_one_space_are_indistinguishable(sim, peer):
    sim.command("reset", tokens=[4, 4])
    sim.command("lift", token=1)
    sim.command("place", token=1, space=7)
    sim.sync()
    frames = peer.until(has_change(7, True))
    assert chg(frames) == [(4, True), (7, True)]        # lifting token 1 changed nothing
    assert sim.status()["tokens"] == [4, 7]


def test_heartbeats_carry_the_occupancy(tmp_path):
    with SimSensorProcess(tmp_path / "hb", heartbeat=0.1) as sim:
        peer = PtyPeer(sim.link)
        sim.command("reset", tokens=[1, 2])
        sim.sync()
        frames = peer.until(lambda fs: sum(isinstance(f, sp.Heartbeat) for f in fs) >= 4, 2.0)
        beats = [f for f in frames if isinstance(f, sp.Heartbeat)]
        assert beats[-1].occupied == {1, 2}
        peer.close()


@pytest.mark.parametrize("command, message", [
    ({"op": "fly"}, "unknown op"),
    ({"op": "move", "token": 2, "to": 3}, "token must be 0 or 1"),
    ({"op": "move", "token": 0, "to": 54}, "to must be a space 0..53"),
    ({"op": "move", "token": 0, "to": 3, "style": "throw"}, "style must be"),
    ({"op": "move", "token": 1, "to": 3}, "not on the board"),
    ({"op": "place", "token": 0}, "space must be a space"),
    ({"op": "silence", "seconds": -1}, "silence seconds"),
    ({"op": "reset", "tokens": [1]}, "reset needs tokens"),
    ({"op": "corrupt_next", "bit": 9}, "corrupt_next takes"),
    ({"op": "scan_stats", "window_ms": 0, "scans": 1, "worst_scan_us": 1, "worst_gap_us": 1},
     "window_ms must be"),
])
def test_bad_commands_are_answered_with_an_error(sim, command, message):
    sim.command("reset", tokens=[0, None])
    op = command.pop("op")
    with pytest.raises(SimSensorError, match=message):
        sim.command(op, **command)
    assert sim.status()["tokens"] == [0, None]           # nothing happened


def test_corrupt_next_breaks_exactly_the_next_frame(sim, peer):
    sim.command("reset", tokens=[0, 0])
    sim.sync()
    peer.clear()
    sim.command("corrupt_next")
    sim.command("place", token=1, space=3)
    sim.command("place", token=1, space=4)
    sim.sync()
    frames = peer.until(has_change(4, True))
    assert peer.parser.stats.crc_errors == 1
    assert (3, True) not in chg(frames)                   # the corrupted frame was dropped


def test_garbage_banner_and_split_writes(sim, peer):
    sim.command("garbage", bytes="\x00\xffnoise\r\n")
    sim.command("banner")
    sim.command("split_writes", on=True)
    sim.command("reset", tokens=[5, 6])
    frames = peer.until(has_change(6, True))          # read while the bytes trickle in
    assert chg(frames) == [(5, True), (6, True)]
    assert peer.parser.stats.garbage >= 4 and peer.parser.stats.crc_errors == 0
    assert peer.reads >= 20                               # the frames came in pieces


def test_stuck_space_reads_occupied(sim, peer):
    sim.command("stuck", space=9)
    sim.command("reset", tokens=[1, 1])
    sim.sync()
    frames = peer.until(has_change(1, True))
    assert chg(frames) == [(9, True), (1, True)]
    assert sim.status()["occupied"] == [1, 9]


def test_unplug_and_replug_under_another_name(sim, peer, tmp_path):
    sim.command("reset", tokens=[3, 8])
    sim.command("unplug")
    sim.sync()
    assert not os.path.lexists(sim.link)
    peer.pump(0.3)
    assert peer.closed
    other = tmp_path / "sensor-other"
    sim.command("replug", link=str(other))
    sim.sync()
    assert os.path.islink(other)
    again = PtyPeer(other)
    again.send(sp.Request(0, "SNAP"))
    frames = again.until(lambda fs: any(isinstance(f, sp.Snapshot) for f in fs))
    snap = next(f for f in frames if isinstance(f, sp.Snapshot))
    assert snap.occupied == {3, 8} and snap.seq <= 1       # the sensor rebooted
    again.close()


def test_silence_mutes_frames_and_requests(sim, peer):
    sim.command("silence", seconds=1.2)
    sim.sync()
    started = time.monotonic()
    peer.clear()
    peer.send(sp.Request(0, "HELLO"))
    peer.pump(1.0)
    assert peer.take() == []                              # no heartbeat, no answer
    frames = peer.until(lambda fs: any(isinstance(f, sp.Heartbeat) for f in fs))
    assert time.monotonic() - started >= 1.15
    assert not any(isinstance(f, sp.Hello) for f in frames)
    peer.send(sp.Request(1, "HELLO"))
    peer.until(lambda fs: any(isinstance(f, sp.Hello) for f in fs))


def test_client_reports_a_dead_process(tmp_path):
    sim = SimSensorProcess(tmp_path / "gone").start()
    sim.command("quit")
    sim.proc.wait(5)
    with pytest.raises(SimSensorError):
        sim.command("sync", timeout=1)
    sim.close()
    assert not os.path.lexists(tmp_path / "gone")


def test_scan_stats_on_request_settable_and_ignored_like_old_firmware(sim, peer):
    def is_stat(frames):
        return any(isinstance(f, sp.ScanStats) for f in frames)

    peer.send(sp.Request(0, "STAT"))
    stat = next(f for f in peer.until(is_stat) if isinstance(f, sp.ScanStats))
    assert (stat.window_ms, stat.scans) == (5000, 1000) and stat.rate_hz == 200.0
    sim.command("scan_stats", window_ms=5000, scans=250, worst_scan_us=9000, worst_gap_us=31000)
    sim.sync()
    peer.clear()
    peer.send(sp.Request(1, "STAT"))
    stat = next(f for f in peer.until(is_stat) if isinstance(f, sp.ScanStats))
    assert (stat.scans, stat.worst_scan_us, stat.worst_gap_us) == (250, 9000, 31000)
    sim.command("scan_stats", off=True)
    sim.sync()
    peer.clear()
    peer.send(sp.Request(2, "STAT"))
    peer.send(sp.Request(3, "SNAP"))
    frames = peer.until(lambda fs: any(isinstance(f, sp.Snapshot) for f in fs))
    assert not is_stat(frames)
