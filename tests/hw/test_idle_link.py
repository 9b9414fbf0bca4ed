"""An idle sensor link wakes only for bytes and real deadlines.

The reader's serial timeout follows :meth:`LinkSession.next_deadline` (the
probe or silence deadline after the last frame heard, handshake retries,
held-off snapshot requests, the error window), capped by ``read_timeout``,
instead of ticking at a fixed short interval.
"""
from __future__ import annotations

import queue
import threading

import pytest

from firmware_py.hw import sensor_protocol as sp
from firmware_py.hw.sensor_link import LinkSession, LinkTiming, SensorLink

HELLO = sp.Hello(0, 1, "1.0.0", 54)
T = LinkTiming()


def enc(*frames) -> bytes:
    return b"".join(sp.encode(f) for f in frames)


def test_next_deadline_follows_the_sessions_timers():
    s = LinkSession(spaces=54)
    assert s.next_deadline() is None                                 # no device: bytes only
    s.connected(10.0, "/dev/fake")
    assert s.next_deadline() == pytest.approx(10.0 + T.retry_interval)   # waiting for HELLO
    s.received(10.2, enc(HELLO, sp.Snapshot(1, 54, {0})))
    assert s.next_deadline() == pytest.approx(10.2 + T.probe_after)  # heard: probe when quiet
    s.tick(10.2 + T.probe_after + 0.01)                              # quiet: probed
    assert s.next_deadline() == pytest.approx(10.2 + T.silence_timeout)
    s.received(12.0, enc(sp.Heartbeat(5, 54, {0})))                  # a gap in seq: an error
    assert s.next_deadline() == pytest.approx(min(12.0 + T.probe_after, 12.0 + T.error_window))
    s.received(12.05, b"$PW,BEAT,6,54,1*0000\n")                     # bad CRC: error, snapshot asked
    s.received(12.1, b"$PW,BEAT,7,54,1*0000\n")                      # again: the ask is held off
    assert s.next_deadline() <= 12.05 + T.request_holdoff + 1e-9


class ScriptedPort:
    """A pyserial stand-in whose reads wait (briefly) for bytes fed by the test;
    every timeout the link sets is kept in ``timeouts``."""

    def __init__(self):
        self.feed: queue.Queue = queue.Queue()
        self.timeouts: list[float] = []
        self._timeout = 0.1
        self.dtr = False
        self.written = bytearray()
        self.is_open = False

    @property
    def timeout(self):
        return self._timeout

    @timeout.setter
    def timeout(self, value):
        self._timeout = value
        self.timeouts.append(value)

    def open(self):
        self.is_open = True

    @property
    def in_waiting(self):
        return 0

    def read(self, size):
        try:
            return self.feed.get(timeout=min(self._timeout, 0.02))
        except queue.Empty:
            return b""

    def write(self, data):
        self.written += data
        return len(data)

    def close(self):
        self.is_open = False


def test_the_reader_waits_until_the_next_deadline_not_a_fixed_tick():
    """On a clock that stands still, after the sensor's HELLO and SNAP the read
    timeout is the time left to the probe deadline (1.1 s), not a short tick."""
    port = ScriptedPort()
    got = threading.Event()
    link = SensorLink(["fake://"], clock=lambda: 100.0, spaces=54,
                      post=lambda event: got.set(), serial_factory=lambda *a, **k: port)
    link.start()
    try:
        port.feed.put(enc(HELLO, sp.Snapshot(1, 54, {0})))
        assert got.wait(3)
        port.feed.put(b"")                                            # one more read after it
        deadline = threading.Event()
        for _ in range(200):
            if port.timeouts and port.timeouts[-1] == pytest.approx(T.probe_after):
                break
            deadline.wait(0.01)
        assert port.timeouts[-1] == pytest.approx(T.probe_after)
        assert T.read_timeout > T.probe_after
    finally:
        link.stop()


class CancellablePort(ScriptedPort):
    """A port whose read waits its whole timeout unless ``cancel_read`` ends it,
    as pyserial's does."""

    def __init__(self):
        super().__init__()
        self.cancels = 0

    def cancel_read(self):
        self.cancels += 1
        self.feed.put(b"")

    def read(self, size):
        try:
            return self.feed.get(timeout=self._timeout)
        except queue.Empty:
            return b""


def test_a_request_ends_the_long_read_so_it_goes_out_at_once():
    """request_scan_stats() wakes the reader waiting for a far deadline (cancel_read),
    and the STAT request is written."""
    port = CancellablePort()
    got = threading.Event()
    link = SensorLink(["fake://"], clock=lambda: 100.0, spaces=54,
                      post=lambda event: got.set(), serial_factory=lambda *a, **k: port)
    link.start()
    try:
        port.feed.put(enc(HELLO, sp.Snapshot(1, 54, {0})))
        assert got.wait(3)
        link.request_scan_stats()
        assert port.cancels == 1
        for _ in range(300):
            if b"STAT" in port.written:
                break
            threading.Event().wait(0.01)
        assert b"STAT" in port.written
    finally:
        link.stop()


def test_stop_ends_a_long_read():
    """Stopping does not wait for the reader's far deadline."""
    port = CancellablePort()
    got = threading.Event()
    link = SensorLink(["fake://"], clock=lambda: 100.0, spaces=54,
                      post=lambda event: got.set(), serial_factory=lambda *a, **k: port)
    link.start()
    port.feed.put(enc(HELLO, sp.Snapshot(1, 54, {0})))
    assert got.wait(3)
    thread = link._thread
    before = port.cancels
    link.stop()
    assert port.cancels == before + 1 and not thread.is_alive()
