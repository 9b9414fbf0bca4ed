"""The host sensor link: LinkSession with a stepped clock, SensorLink over fake ports
and over the real simulated-sensor process on a pty."""
from __future__ import annotations

import os
import queue
import termios
import threading
import time
import tty

import pytest
import serial

from firmware_py.hw import sensor_protocol as sp
from firmware_py.hw.link_session import BEATS_AHEAD
from firmware_py.hw.sensor_link import (LinkSession, LinkStats, LinkTiming, SensorLink,
                                        SensorOccupancy, SensorStatus, expand_devices)
from firmware_py.sim.sensor import SimSensorProcess

HELLO = sp.Hello(0, 1, "1.0.0", 54)


def enc(*frames) -> bytes:
    return b"".join(sp.encode(f) for f in frames)


def requests(data: bytes) -> list[str]:
    return [f.what for f in sp.FrameParser().feed(data)]


class Session:
    """A LinkSession driven by hand: ``t`` is the clock; ``posted`` the events so far."""

    def __init__(self, **timing):
        self.s = LinkSession(spaces=54, timing=LinkTiming(**timing))
        self.t = 0.0
        self.posted: list = []
        self.written = b""
        self.drop = None

    def do(self, action, *args) -> "Session":
        getattr(self.s, action)(self.t, *args)
        events, out, drop = self.s.drain()
        self.posted += events
        self.written += out
        self.drop = drop or self.drop
        return self

    def at(self, t: float) -> "Session":
        self.t = t
        return self.do("tick")

    def sent(self) -> list[str]:
        out, self.written = self.written, b""
        return requests(out)

    def statuses(self) -> list[tuple[bool, bool]]:
        return [(e.online, e.degraded) for e in self.posted if isinstance(e, SensorStatus)]

    def occupancy(self) -> list[frozenset]:
        return [e.occupied for e in self.posted if isinstance(e, SensorOccupancy)]


@pytest.fixture
def online() -> Session:
    s = Session().do("connected", "/dev/fake").do("received", enc(HELLO, sp.Snapshot(1, 54, {0})))
    s.sent()
    return s


# ----------------------------------------------------------- the session
def test_connect_asks_for_hello_and_snapshot_at_once():
    s = Session().do("connected", "/dev/fake")
    assert s.sent() == ["HELLO", "SNAP"]
    assert s.statuses() == []                           # not online before the HELLO


def test_hello_brings_the_link_online_and_snapshots_are_posted(online):
    status = [e for e in online.posted if isinstance(e, SensorStatus)]
    assert [(e.online, e.reason) for e in status] == [
        (True, "sensor online: /dev/fake, firmware 1.0.0, 54 spaces")]
    occ = [e for e in online.posted if isinstance(e, SensorOccupancy)]
    assert occ == [SensorOccupancy(frozenset({0}), 1, True, 0.0)]


def test_frames_before_the_hello_are_not_trusted():
    s = Session().do("connected", "/dev/fake").do("received", enc(sp.Snapshot(5, 54, {3})))
    assert s.occupancy() == [] and s.sent() == ["HELLO", "SNAP"]
    s.t = 0.6
    s.do("received", b"").at(0.6)
    assert s.sent() == ["HELLO", "SNAP"]                # the handshake is asked again


def test_changes_are_posted_with_their_full_occupancy(online):
    online.do("received", enc(sp.Change(2, 54, 1, True, {0, 1}), sp.Change(3, 54, 0, False, {1})))
    posted = [e for e in online.posted if isinstance(e, SensorOccupancy)][1:]
    assert [(e.occupied, e.seq, e.snapshot) for e in posted] == [
        ({0, 1}, 2, False), ({1}, 3, False)]


def test_a_sequence_gap_is_counted_and_asks_for_a_snapshot(online):
    online.do("received", enc(sp.Change(5, 54, 1, True, {0, 1})))
    assert online.s.stats(0).gaps == 1
    assert online.sent() == ["SNAP"]


def test_a_crc_error_is_dropped_counted_and_asks_for_a_snapshot(online):
    bad = bytearray(enc(sp.Change(2, 54, 9, True, {0, 9})))
    bad[-8] ^= 1
    online.do("received", bytes(bad))
    assert online.occupancy() == [{0}]
    assert online.s.stats(0).crc_errors == 1 and online.sent() == ["SNAP"]
    online.t = 0.1
    online.do("received", bytes(bad)).at(0.1)           # within the hold-off: the ask waits
    assert online.sent() == []
    online.at(0.26)
    assert online.sent() == ["SNAP"]
    online.t = 0.3
    online.do("received", bytes(bad)).do("received", enc(sp.Heartbeat(2, 54, {0})))
    online.at(0.6)
    assert online.sent() == []                          # a full frame came first


def test_banners_and_garbage_are_counted_but_harmless(online):
    online.do("received", b"Adafruit CircuitPython 9.1.4\r\n>>> \r\n")
    stats = online.s.stats(0)
    assert stats.garbage_lines == 2 and stats.crc_errors == 0 and online.sent() == []
    assert online.statuses() == [(True, False)]


def test_silence_probes_then_goes_offline_within_two_seconds(online):
    online.at(1.0)
    assert online.sent() == []
    online.at(1.15)
    assert online.sent() == ["SNAP"]                    # one probe while quiet
    online.at(1.5)
    assert online.drop is None and online.sent() == []
    online.at(1.65)
    assert online.drop.startswith("silent for 1.6")
    online.do("disconnected", online.drop)
    assert online.statuses() == [(True, False), (False, False)]
    assert online.posted[-1].reason == "sensor offline: silent for 1.6 s"


def test_heartbeats_keep_the_link_alive(online):
    for k in range(1, 6):
        online.t = k * 1.0
        online.do("received", enc(sp.Heartbeat(1 + k, 54, {0}))).at(online.t + 0.01)
    assert online.drop is None and online.s.stats(5.5).last_frame_age == pytest.approx(0.5)


def test_error_rate_warns_then_drops_then_recovers(online):
    bad = b"$PW,BEAT,9,54,00000000000001*0000\r\n"
    for i in range(3):
        online.t = 0.1 * (i + 1)
        online.do("received", bad).at(online.t)
    assert online.statuses() == [(True, False), (True, True)]
    assert online.posted[-1].reason == "sensor degraded: 3 link errors in 5 s"
    online.t = 5.35
    online.do("received", enc(sp.Heartbeat(2, 54, {0}))).at(5.35)
    assert online.statuses()[-1] == (True, False)       # a clean window: online again
    for i in range(10):
        online.t = 6 + 0.1 * i
        online.do("received", bad).at(online.t)
    assert online.drop.startswith("link error rate too high (10 errors")
    assert online.statuses()[-1] == (True, True)


def test_wrong_protocol_or_space_count_drops_the_link_and_says_why():
    s = Session().do("no_device", []).do("connected", "x")
    s.do("received", enc(sp.Hello(0, 2, "9.0", 54)))
    said = "sensor speaks protocol 2, host speaks 1 (update the host or the sensor firmware)"
    assert s.drop == said
    s.do("disconnected", s.drop)                        # offline already, but a new reason
    assert [e.reason for e in s.posted] == [
        "sensor offline: no device (none present)", f"sensor offline: {said}"]
    s.do("connected", "x").do("received", enc(sp.Hello(0, 2, "9.0", 54)))
    s.do("disconnected", s.drop)
    assert len(s.posted) == 2                           # the same reason is not repeated
    s = Session().do("connected", "x").do("received", enc(sp.Hello(0, 1, "1.0", 30)))
    assert s.drop == "sensor has 30 spaces, the game needs 54 (check the sensor firmware and sensor.map)"


def test_own_requests_read_back_are_counted_as_echoes(online):
    online.do("received", enc(sp.Request(0, "HELLO")))
    assert online.s.stats(0).echoes == 1 and online.occupancy() == [{0}]


def test_reconnect_restarts_sequence_tracking_and_asks_again(online):
    online.do("disconnected", "device lost").do("connected", "/dev/other")
    assert online.sent() == ["HELLO", "SNAP"]
    online.do("received", enc(sp.Hello(0, 1, "1.0.0", 54), sp.Snapshot(1, 54, {4})))
    stats = online.s.stats(0)
    assert (stats.reconnects, stats.gaps, stats.device) == (1, 0, "/dev/other")
    assert online.statuses() == [(True, False), (False, False), (True, False)]
    assert online.occupancy()[-1] == {4}


# --------------------------------------------------- devices and fake ports
def test_expand_devices(tmp_path):
    for name in ("sensor-b", "sensor-a", "other"):
        (tmp_path / name).touch()
    pattern = str(tmp_path / "sensor-*")
    got = expand_devices([str(tmp_path / "missing"), "loop://", pattern, str(tmp_path / "sensor-a")])
    assert got == ["loop://", str(tmp_path / "sensor-a"), str(tmp_path / "sensor-b")]


class FakePort:
    """A pyserial stand-in: reads come from ``script`` (bytes or an exception)."""

    def __init__(self, script):
        self.script = list(script)
        self.written = bytearray()
        self.dtr = False
        self.opened = self.closed = False

    def open(self):
        self.opened = True

    @property
    def in_waiting(self):
        return len(self.script[0]) if self.script and isinstance(self.script[0], bytes) else 0

    def read(self, size):
        if not self.script:
            time.sleep(0.01)
            return b""
        item = self.script.pop(0)
        if isinstance(item, BaseException):
            raise item
        return item

    def write(self, data):
        self.written += data
        return len(data)

    def close(self):
        self.closed = True


def collect(link_events, kind, predicate=lambda e: True, timeout=3.0):
    """Wait for an event of ``kind`` matching ``predicate`` on the queue."""
    deadline = time.monotonic() + timeout
    while (left := deadline - time.monotonic()) > 0:
        try:
            event = link_events.get(timeout=left)
        except queue.Empty:
            break
        if isinstance(event, kind) and predicate(event):
            return event
    raise AssertionError(f"no {kind.__name__} in {timeout} s")


@pytest.mark.parametrize("error", [OSError(5, "EIO"), serial.SerialException("gone"),
                                   termios.error(5, "EIO")])
def test_every_kind_of_vanishing_device_is_survived(error):
    ports = [FakePort([enc(HELLO), error]), FakePort([enc(sp.Hello(0, 1, "1.0.0", 54))])]
    opened = []

    def factory(device, **kwargs):
        assert kwargs["do_not_open"] and not kwargs["dsrdtr"] and not kwargs["rtscts"]
        opened.append(ports[len(opened)])
        return opened[-1]

    events = queue.Queue()
    link = SensorLink(["loop://"], post=events.put, serial_factory=factory,
                      timing=LinkTiming(retry_interval=0.05))
    link.start()
    try:
        assert collect(events, SensorStatus).online
        lost = collect(events, SensorStatus)
        assert not lost.online and "device lost" in lost.reason
        assert collect(events, SensorStatus).online
    finally:
        link.stop()
    assert opened[0].dtr and opened[0].closed and requests(bytes(opened[0].written)) == ["HELLO", "SNAP"]
    assert link.stats().reconnects == 1


def test_a_failing_post_does_not_kill_the_reader():
    calls = []

    def post(event):
        calls.append(event)
        raise RuntimeError("consumer bug")

    link = SensorLink(["loop://"], post=post, serial_factory=lambda *a, **k: FakePort(
        [enc(HELLO, sp.Snapshot(1, 54, {2}), sp.Change(2, 54, 3, True, {2, 3}))]))
    link.start()
    deadline = time.monotonic() + 3
    while len(calls) < 3 and time.monotonic() < deadline:
        time.sleep(0.01)
    link.stop()
    assert [type(c) for c in calls[:3]] == [SensorStatus, SensorOccupancy, SensorOccupancy]


def test_no_device_is_reported_offline_and_stop_joins(tmp_path):
    events = queue.Queue()
    link = SensorLink([str(tmp_path / "nothing-*")], post=events.put)
    link.start()
    status = collect(events, SensorStatus)
    assert not status.online and status.reason == "sensor offline: no device (none present)"
    link.stop()
    assert link._thread is None and link.stats().state == "offline"
    with pytest.raises(ValueError):
        SensorLink([], post=events.put)


# ----------------------------------------------------- against the real sim
class Host:
    """A SensorLink on the simulated sensor; events are kept with their arrival time."""

    def __init__(self, devices, **kwargs):
        self.events: list[tuple[float, object]] = []
        self.cond = threading.Condition()
        self.link = SensorLink(devices, post=self._post, **kwargs)

    def _post(self, event):
        with self.cond:
            self.events.append((time.monotonic(), event))
            self.cond.notify_all()

    def wait(self, predicate, timeout=3.0, since=0):
        """The first event at index >= ``since`` matching ``predicate``, with its index and time."""
        deadline = time.monotonic() + timeout
        with self.cond:
            while True:
                for i in range(since, len(self.events)):
                    if predicate(self.events[i][1]):
                        return i, self.events[i][0], self.events[i][1]
                left = deadline - time.monotonic()
                assert left > 0, f"timed out; events: {[e for _, e in self.events[since:]]}"
                self.cond.wait(left)

    def occupancy(self, since=0) -> list[frozenset]:
        with self.cond:
            return [e.occupied for _, e in self.events[since:] if isinstance(e, SensorOccupancy)]

    def mark(self) -> int:
        with self.cond:
            return len(self.events)


def dedupe(states: list) -> list:
    """Consecutive repeats (heartbeats) removed."""
    return [s for i, s in enumerate(states) if i == 0 or states[i - 1] != s]


def is_status(online, degraded=False):
    return lambda e: isinstance(e, SensorStatus) and e.online == online and e.degraded == degraded


def is_occupancy(spaces, snapshot=None):
    return lambda e: (isinstance(e, SensorOccupancy) and e.occupied == frozenset(spaces)
                      and (snapshot is None or e.snapshot == snapshot))


@pytest.fixture
def rig(tmp_path):
    with SimSensorProcess(tmp_path / "sensor-a", speed=4) as sim:
        sim.command("reset", tokens=[0, 0])
        sim.sync()
        host = Host([str(tmp_path / "patchwork-sensor"), str(tmp_path / "sensor-*")], spaces=54)
        host.link.start()
        host.wait(is_occupancy({0}, snapshot=True))
        yield sim, host
        host.link.stop()


def test_handshake_online_then_a_trusted_snapshot(rig):
    sim, host = rig
    i, _, status = host.wait(is_status(True))
    j, _, _ = host.wait(is_occupancy({0}, snapshot=True))
    assert i < j and status.reason.startswith("sensor online: ")
    assert isinstance(status.stats, LinkStats) and status.stats.state == "online"
    assert "firmware 1.1.0-sim, 54 spaces" in status.reason
    stats = host.link.stats()
    assert stats.state == "online" and stats.device.endswith("sensor-a") and stats.frames_ok >= 2


def test_slide_and_lift_gestures_become_occupancy_events(rig):
    sim, host = rig
    start = host.mark()
    sim.command("move", token=0, to=3, style="slide")
    host.wait(is_occupancy({0, 3}), since=start)
    slide = [o for o in dedupe(host.occupancy(start)) if o != {0}]   # minus heartbeats before
    assert slide == [{0, 1}, {0, 1, 2}, {0, 2}, {0, 2, 3}, {0, 3}]
    start = host.mark()
    sim.command("move", token=1, to=5, style="lift")
    host.wait(is_occupancy({3, 5}), since=start)
    assert [o for o in dedupe(host.occupancy(start)) if o != {0, 3}] == [{3}, {3, 5}]
    assert host.link.stats().gaps == 0


def test_unplug_goes_offline_within_two_seconds_and_replug_elsewhere_resumes(rig, tmp_path):
    sim, host = rig
    start = host.mark()
    sim.command("unplug")
    sim.sync()
    unplugged = time.monotonic()
    _, when, status = host.wait(is_status(False), since=start)
    assert when - unplugged < 2.0 and status.reason.startswith("sensor offline: ")
    sim.command("move", token=0, to=7, style="lift")     # moved while unplugged
    sim.command("replug", link=str(tmp_path / "sensor-b"))
    sim.sync()
    start = host.mark()
    host.wait(is_status(True), since=start, timeout=3.0)
    host.wait(is_occupancy({0, 7}, snapshot=True), since=start)
    stats = host.link.stats()
    assert stats.reconnects >= 1 and stats.device.endswith("sensor-b")


def test_silence_goes_offline_within_two_seconds_and_comes_back(rig):
    sim, host = rig
    start = host.mark()
    sim.command("silence", seconds=2.5)
    sim.sync()
    silent = time.monotonic()
    _, when, status = host.wait(is_status(False), since=start)
    assert when - silent < 2.0 and "silent" in status.reason
    host.wait(is_status(True), since=start, timeout=3.5)
    host.wait(is_occupancy({0}, snapshot=True), since=start)


def test_garbage_and_bit_flips_never_produce_a_wrong_occupancy(rig):
    sim, host = rig
    sim.command("reset", tokens=[4, 9])
    sim.sync()
    host.wait(is_occupancy({4, 9}))
    start = host.mark()
    sim.command("split_writes", on=True)
    sim.command("banner")
    sim.command("corrupt_next", count=2)                 # the snapshots asked for next
    sim.command("garbage", bytes="$PW,SNAP,1,54,00000000000FFF*1234\r\n\x00\xff$PW,\r\n")
    sim.sync()
    _, _, snap = host.wait(lambda e: isinstance(e, SensorOccupancy) and e.snapshot
                           and host.link.stats().crc_errors >= 3, since=start)
    assert snap.occupied == {4, 9}
    legit = {frozenset({0}), frozenset(), frozenset({4}), frozenset({4, 9})}
    assert set(host.occupancy()) <= legit                # every state the board really had
    assert set(host.occupancy(start)) == {frozenset({4, 9})}
    stats = host.link.stats()
    assert stats.garbage_lines >= 3 and stats.crc_errors == 3 and stats.malformed == 1


def test_corruption_after_a_change_is_repaired_by_a_snapshot(rig):
    sim, host = rig
    start = host.mark()
    asked = host.link.stats().requests_sent
    sim.command("corrupt_next")
    sim.command("place", token=1, space=20)              # this CHG arrives broken
    sim.sync()
    host.wait(is_occupancy({0, 20}, snapshot=True), since=start, timeout=1.5)
    stats = host.link.stats()
    assert stats.crc_errors == 1 and stats.requests_sent > asked
    assert set(host.occupancy(start)) <= {frozenset({0}), frozenset({0, 20})}


def test_a_rising_error_rate_warns_then_drops_then_recovers(rig):
    sim, host = rig
    start = host.mark()
    sim.command("corrupt_next", count=12)
    sim.command("place", token=1, space=2)
    _, _, warn = host.wait(is_status(True, degraded=True), since=start)
    assert warn.reason.startswith("sensor degraded: ") and warn.stats.crc_errors >= 3
    i, _, dead = host.wait(is_status(False), since=start, timeout=4.0)
    assert "error rate too high" in dead.reason
    host.wait(is_status(True), since=i, timeout=3.0)
    host.wait(is_occupancy({0, 2}, snapshot=True), since=i)
    assert set(host.occupancy(start)) <= {frozenset({0}), frozenset({0, 2})}


def test_an_unexpected_error_in_the_driver_is_survived():
    ports = [FakePort([enc(HELLO), TypeError("driver bug")]), FakePort([enc(HELLO)])]
    events = queue.Queue()
    link = SensorLink(["loop://"], post=events.put, serial_factory=lambda *a, **k: ports.pop(0),
                      timing=LinkTiming(retry_interval=0.05))
    link.start()
    try:
        assert collect(events, SensorStatus).online
        lost = collect(events, SensorStatus)
        assert not lost.online and "reader error (TypeError: driver bug)" in lost.reason
        assert collect(events, SensorStatus).online
    finally:
        link.stop()


# ------------------------------------------------- a sensor that never greets
def _waiting_run(feed, until: float = 10.5) -> Session:
    """A session connected at 0 s, given ``feed(t)`` bytes every 0.1 s (the link reconnects
    after a drop, as the reader thread does), up to ``until`` seconds."""
    s = Session().do("connected", "/dev/fake")
    for step in range(1, int(until * 10) + 1):
        s.t = step / 10
        data = feed(s.t)
        if data:
            s.do("received", data)
        s.at(s.t)
        if s.drop:
            s.do("disconnected", s.drop)
            s.drop = None
            s.do("connected", "/dev/fake")
    return s


def _reasons(s: Session) -> list[str]:
    return [e.reason for e in s.posted if isinstance(e, SensorStatus)]


def _beat(t: float, seq=[0]) -> bytes:
    if round(t * 10) % 10:
        return b""
    seq[0] = (seq[0] + 1) % 65536
    return enc(sp.Snapshot(seq[0], 54, frozenset()))


def _bad_hello() -> bytes:
    body = b"PW,HELLO,1,1,1.2\x07\xe9,54"
    return b"$" + body + b"*" + f"{sp.crc16_ccitt_false(body):04X}".encode() + b"\r\n"


@pytest.mark.parametrize("feed, says", [
    (lambda t: b"", "nothing heard: firmware flashed? cable? sensor.baud?"),
    (lambda t: b"\xff\xfe\x80 noise at the wrong baud\r\n", "unreadable bytes: sensor.baud wrong?"),
    (_beat, "never hears the host: check the Pi TX to sensor RX wire"),
    (lambda t: (_bad_hello() if round(t * 10) % 5 == 0 else b"") + _beat(t),
     "HELLO has control/non-ASCII bytes"),
], ids=["silent", "garbage", "frames but no answer", "HELLO with odd bytes"])
def test_a_sensor_that_never_greets_is_diagnosed_after_ten_seconds(feed, says):
    """Never "connecting" forever: 10 s without an accepted HELLO (over reconnects), the
    offline reason says what was heard and what to check; not a moment before."""
    early = _waiting_run(feed, until=9.8)
    assert not any("no HELLO" in r for r in _reasons(early))
    late = _waiting_run(feed, until=10.5)
    said = [r for r in _reasons(late) if "no HELLO in 10 s" in r]
    assert len(said) == 1 and says in said[0] and said[0].startswith("sensor offline: ")
    assert late.s.state == "offline"


def test_a_hello_in_time_brings_the_link_online_and_no_diagnosis_follows():
    s = _waiting_run(lambda t: _beat(t) + (enc(HELLO) if abs(t - 6.0) < 1e-9 else b""),
                     until=20)
    assert s.s.state == "online"
    assert not any("no HELLO" in r for r in _reasons(s))


def test_a_refused_hello_keeps_its_own_diagnosis_after_ten_seconds():
    """A HELLO of another protocol version is refused with that reason at once; the 10 s
    diagnosis never replaces it with a vaguer one."""
    other = enc(sp.Hello(0, sp.PROTOCOL_VERSION + 1, "9.0.0", 54))
    s = _waiting_run(lambda t: other if round(t * 10) % 5 == 0 else b"", until=12)
    reasons = _reasons(s)
    assert reasons and all("protocol" in r for r in reasons)
    assert not any("no HELLO" in r for r in reasons)


def _online_session():
    s = LinkSession(54)
    s.connected(10.0, "/dev/ttyACM0")
    s.received(10.0, sp.encode(sp.Hello(0, sp.PROTOCOL_VERSION, "1.0", 54)))
    s.received(10.1, sp.encode(sp.Snapshot(1, 54, frozenset({0, 7}))))
    s.drain()
    return s


def test_the_expected_heartbeat_is_taken_as_a_parsed_one_would_be():
    """An unchanged board's heartbeat is recognised by its exact bytes and taken without
    parsing: the same counters, sequence, events and deadlines as a session that parses
    every frame (fed byte by byte, so no read is ever the whole expected line)."""
    fast, slow = _online_session(), _online_session()
    for i, now in enumerate((11.1, 12.1, 13.1)):
        line = sp.encode(sp.Heartbeat(2 + i, 54, frozenset({0, 7})))
        assert fast.next_beat == line
        fast.received(now, line)
        for byte in line:                            # byte by byte: always parsed
            slow.received(now, bytes([byte]))
        fast.tick(now)
        slow.tick(now)
        (fe, _, fd), (se, _, sd) = fast.drain(), slow.drain()
        assert fe == se and fd == sd is None
        assert fast.stats(now) == slow.stats(now) and fast.next_deadline() == slow.next_deadline()
    assert fast.parser.stats.frames == 2 and slow.parser.stats.frames == 5   # the shortcut taken


def test_a_heartbeat_of_another_board_or_out_of_sequence_is_parsed():
    s = _online_session()
    moved = sp.encode(sp.Heartbeat(2, 54, frozenset({0, 8})))
    assert moved != s.next_beat
    s.received(11.0, moved)
    events, _, _ = s.drain()
    assert [e.occupied for e in events] == [frozenset({0, 8})]
    gap = sp.encode(sp.Heartbeat(5, 54, frozenset({0, 8})))   # seq 3 and 4 lost
    s.received(12.0, gap)
    assert s.stats(12.0).gaps == 1


def test_a_calm_links_heartbeats_taken_together_end_as_one_by_one():
    """``calm_beats`` / ``beats``: the expected heartbeats of a calm link handed over
    together (the first alone, then the rest of the lines ahead) give the counters,
    sequence and deadlines that ``received`` and ``tick`` of each give, and the last
    one's reading; a link with errors in its window is not calm."""
    short, full = _online_session(), _online_session()
    for s in (short, full):
        s.tick(10.2)
        s.drain()
    lines = short.calm_beats()
    assert len(lines) == BEATS_AHEAD
    assert lines == [sp.encode(sp.Heartbeat(2 + i, 54, frozenset({0, 7})))
                     for i in range(BEATS_AHEAD)]
    times = [11.1 + i for i in range(BEATS_AHEAD)]
    for part in (times[:1], times[1:]):
        reading = short.beats(part)
        for now, line in zip(part, lines[times.index(part[0]):]):
            full.received(now, line)
            full.tick(now)
        events, out, drop = full.drain()
        assert reading == events[-1] and not out and drop is None
        assert reading.seq == 1 + times.index(part[-1]) + 1 and reading.at == part[-1]
        assert short.stats(part[-1]) == full.stats(part[-1])
        assert short.next_deadline() == full.next_deadline()
    assert short.drain() == ([], b"", None)
    assert short.beats([]) is None
    assert short.calm_beats()[0] == sp.encode(sp.Heartbeat(2 + BEATS_AHEAD, 54, frozenset({0, 7})))
    short.received(80.0, b"$PW,BEAT,66,54,0*0000\r\n")          # a bad CRC: an error
    short.received(80.1, sp.encode(sp.Heartbeat(66, 54, frozenset({0, 8}))))
    short.drain()
    assert short.calm_beats() == []                             # errors in the window


class Pty:
    """A pseudo-terminal the test writes sensor frames into; the link opens its far end."""

    def __init__(self):
        self.master, self.slave = os.openpty()
        tty.setraw(self.master)
        tty.setraw(self.slave)
        os.set_blocking(self.master, False)
        self.path = os.ttyname(self.slave)

    def write(self, *frames) -> None:
        os.write(self.master, enc(*frames))

    def requests(self) -> list[str]:
        """The requests the link wrote since the last call."""
        try:
            return requests(os.read(self.master, 4096))
        except BlockingIOError:
            return []

    def close(self) -> None:
        os.close(self.master)
        os.close(self.slave)


@pytest.fixture
def calm():
    """A link online on a pty, the board {0, 7} given by a snapshot (seq 1)."""
    pty = Pty()
    host = Host([pty.path], spaces=54)
    host.link.start()
    deadline = time.monotonic() + 3
    while "HELLO" not in pty.requests():
        assert time.monotonic() < deadline, "the link never asked for HELLO"
        time.sleep(0.01)
    pty.write(HELLO, sp.Snapshot(1, 54, frozenset({0, 7})))
    host.wait(is_occupancy({0, 7}, snapshot=True))
    time.sleep(0.05)
    pty.requests()
    yield pty, host
    host.link.stop()
    pty.close()


def _beats(first: int, count: int, board=frozenset({0, 7})) -> list:
    return [sp.Heartbeat(seq, 54, board) for seq in range(first, first + count)]


def test_an_idle_links_heartbeats_are_counted_as_they_come_and_posted_once_a_stretch(calm):
    pty, host = calm
    mark = host.mark()
    seq = 2
    for beat in _beats(seq, 6):
        pty.write(beat)
        time.sleep(0.05)
    i, _, first = host.wait(is_occupancy({0, 7}), since=mark)
    assert first.seq == 2                                    # the stretch's first, at once
    deadline = time.monotonic() + 3
    while host.link.stats().frames_ok < 2 + 6:               # HELLO, SNAP, six beats
        assert time.monotonic() < deadline, host.link.stats()
        time.sleep(0.01)
    assert host.link.stats().last_frame_age < 1.0
    assert host.occupancy(i + 1) == []                       # the same board: held back
    host.link.request_snapshot()                             # a request ends the stretch:
    _, _, last = host.wait(lambda e: isinstance(e, SensorOccupancy) and e.seq == 7, since=i + 1)
    assert last.occupied == frozenset({0, 7})                # the last heartbeat's reading
    time.sleep(0.1)
    assert "SNAP" in pty.requests() and host.link.stats().gaps == 0


def test_a_change_during_a_calm_stretch_is_posted_at_once(calm):
    pty, host = calm
    for beat in _beats(2, 3):
        pty.write(beat)
        time.sleep(0.05)
    mark = host.mark()
    pty.write(sp.Change(5, 54, 8, True, frozenset({0, 7, 8})))  # a token set down on 8
    _, _, moved = host.wait(is_occupancy({0, 7, 8}), since=mark)
    assert moved.seq == 5 and not moved.snapshot
    pty.write(*_beats(6, 1, frozenset({0, 7, 8})))          # the new board's heartbeat
    _, _, beat = host.wait(lambda e: isinstance(e, SensorOccupancy) and e.seq == 6, since=mark)
    assert beat.occupied == frozenset({0, 7, 8})
    assert host.link.stats().gaps == 0 and host.link.stats().crc_errors == 0


def test_a_new_space_count_ends_a_calm_stretch_and_the_next_heartbeat_is_posted(calm):
    pty, host = calm
    for beat in _beats(2, 3):
        pty.write(beat)
        time.sleep(0.05)
    host.wait(lambda e: isinstance(e, SensorOccupancy) and e.seq == 2)
    time.sleep(0.05)
    host.link.need_spaces(54, "Patchwork")                   # the game changed (a setup choice)
    mark = host.mark()
    pty.write(*_beats(5, 1))
    _, _, beat = host.wait(lambda e: isinstance(e, SensorOccupancy) and e.seq == 5, since=mark)
    assert beat.occupied == frozenset({0, 7})
