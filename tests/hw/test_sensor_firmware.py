"""The CircuitPython sensor firmware's logic on CPython, checked against the host parser.

The board I/O is replaced by fake pins that return chosen sensor levels; every
frame the firmware writes is parsed by the host's FrameParser / LinkSession.
"""
from __future__ import annotations

import ast
import binascii
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from firmware_py.hw import sensor_protocol as sp
from firmware_py.hw.sensor_link import LinkSession, SensorOccupancy, SensorStatus

FIRMWARE = Path(__file__).resolve().parents[2] / "hardware" / "sensor-firmware"
sys.path.insert(0, str(FIRMWARE))
from pwsensor import protocol as fw  # noqa: E402
from pwsensor.mux import MuxBank  # noqa: E402
from pwsensor.scanner import Debouncer, Scanner  # noqa: E402

MS = 1_000_000  # nanoseconds


class OutPin:
    """A digitalio output stand-in (a select line)."""

    value = False


class InPin:
    """A digitalio input stand-in whose level comes from ``read()``."""

    def __init__(self, read):
        self._read = read

    @property
    def value(self) -> bool:
        return self._read()


class Board:
    """Sensors behind 74HC4067 multiplexers; ``tokens`` holds the spaces with a magnet."""

    def __init__(self, spaces: int, active_low: bool = True):
        self.tokens: set[int] = set()
        self.active_low = active_low
        self.select = [OutPin() for _ in range(4)]
        self.commons = [InPin(lambda m=m: self._level(m)) for m in range((spaces + 15) // 16)]
        self.bank = MuxBank(self.select, self.commons, spaces, active_low)

    def _level(self, mux: int) -> bool:
        channel = sum(1 << bit for bit, pin in enumerate(self.select) if pin.value)
        present = mux * 16 + channel in self.tokens
        return not present if self.active_low else present


class Rig:
    """A Scanner on a fake board and clock, its output parsed by the host."""

    def __init__(self, spaces: int = 54, need: int = 3):
        self.board = Board(spaces)
        self.out = bytearray()
        self.scanner = Scanner(self.board.bank.read, spaces, self.out.extend, need=need)
        self.parser = sp.FrameParser()
        self.now = 0

    def scan(self, count: int = 1) -> list:
        """``count`` scans 5 ms apart; returns the host-parsed frames they produced."""
        for _ in range(count):
            self.now += 5 * MS
            self.scanner.step(self.now)
        return self.frames()

    def frames(self) -> list:
        frames = self.parser.feed(bytes(self.out))
        self.out.clear()
        return frames


def changes(frames) -> list[tuple[int, bool]]:
    return [(f.space, f.now_occupied) for f in frames if isinstance(f, sp.Change)]


# ------------------------------------------------------------- protocol
@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=200))
def test_firmware_crc_equals_host_crc(data):
    assert fw.crc16(data) == sp.crc16_ccitt_false(data) == binascii.crc_hqx(data, 0xFFFF)


@settings(max_examples=200, deadline=None)
@given(spaces=st.integers(1, 128), seq=st.integers(0, 65535), data=st.data())
def test_firmware_frames_are_byte_identical_to_the_host_encoder(spaces, seq, data):
    occupied = data.draw(st.frozensets(st.integers(0, spaces - 1)))
    levels = bytearray(1 if s in occupied else 0 for s in range(spaces))
    space = data.draw(st.integers(0, spaces - 1))
    assert fw.snapshot(seq, levels, spaces) == sp.encode(sp.Snapshot(seq, spaces, occupied))
    assert fw.heartbeat(seq, levels, spaces) == sp.encode(sp.Heartbeat(seq, spaces, occupied))
    assert fw.change(seq, levels, spaces, space) == sp.encode(
        sp.Change(seq, spaces, space, space in occupied, occupied))
    assert fw.hello(seq, spaces) == sp.encode(sp.Hello(seq, fw.PROTOCOL_VERSION,
                                                       fw.FIRMWARE_VERSION, spaces))


def test_request_reader_takes_host_requests_in_any_chunks():
    stream = (b"noise\r\n" + sp.encode(sp.Request(0, "HELLO")) + b"xx" + sp.encode(sp.Request(1, "SNAP"))
              + b"$PW,REQ,2,SNAP*0000\r\n" + sp.encode(sp.Snapshot(3, 54, set())))
    for cut in range(len(stream) + 1):
        reader = fw.RequestReader()
        assert reader.feed(stream[:cut]) + reader.feed(stream[cut:]) == ["HELLO", "SNAP"]
        assert reader.bad == 3


def test_request_reader_bounds_its_buffer():
    reader = fw.RequestReader()
    assert reader.feed(b"z" * 1000) == []
    assert len(reader.buf) <= fw.MAX_LINE
    assert reader.feed(b"\r\n" + sp.encode(sp.Request(9, "SNAP"))) == ["SNAP"]


def test_request_reader_rejects_every_bit_flip():
    line = sp.encode(sp.Request(5, "HELLO"))
    for bit in range((len(line) - 2) * 8):
        flipped = bytearray(line)
        flipped[bit // 8] ^= 1 << (bit % 8)
        assert fw.RequestReader().feed(bytes(flipped)) == [], flipped


# ------------------------------------------------------------------- mux
@pytest.mark.parametrize("spaces", [54, 30])
@pytest.mark.parametrize("active_low", [True, False])
def test_mux_bank_reads_each_space(spaces, active_low):
    board = Board(spaces, active_low)
    board.tokens = {0, 15, 16, spaces - 1}
    levels = bytearray(spaces)
    board.bank.read(levels)
    assert {i for i, v in enumerate(levels) if v} == {0, 15, 16, spaces - 1}


@pytest.mark.parametrize("active_low", [True, False])
def test_one_sensor_without_a_multiplexer_is_one_space_with_pw_no_mux(active_low):
    """The one-space test wires a sensor straight to GP6: that pin answers for all 16
    channels of multiplexer 0, so without PW_NO_MUX = 1 one magnet shows as 16 spaces."""
    magnet = [True]
    level = InPin(lambda: not magnet[0] if active_low else magnet[0])
    free = InPin(lambda: active_low)
    commons = [level, free, free, free]
    for no_mux, expect in ((False, set(range(16))), (True, {0})):
        bank = MuxBank([OutPin() for _ in range(4)], commons, 54, active_low, no_mux=no_mux)
        levels = bytearray(54)
        bank.read(levels)
        assert {i for i, v in enumerate(levels) if v} == expect
    magnet[0] = False
    bank.read(levels)
    assert not any(levels)


def test_mux_bank_needs_enough_multiplexers():
    with pytest.raises(ValueError, match="54 spaces need 4 multiplexers"):
        MuxBank([OutPin() for _ in range(4)], [InPin(lambda: True)] * 3, 54)
    with pytest.raises(ValueError, match="4 select lines"):
        MuxBank([OutPin() for _ in range(3)], [InPin(lambda: True)] * 4, 54)


# -------------------------------------------------------------- debounce
def test_debouncer_needs_consecutive_equal_scans():
    deb = Debouncer(4, need=3)
    on, off = bytearray([0, 1, 0, 0]), bytearray(4)
    assert deb.update(on) == [] and deb.update(on) == []
    assert deb.update(off) == []                   # a glitch resets the count
    assert [deb.update(on) for _ in range(3)] == [[], [], [1]]
    assert list(deb.stable) == [0, 1, 0, 0]
    with pytest.raises(ValueError):
        Debouncer(4, need=0)


def test_scanner_reports_a_token_within_three_scans():
    rig = Rig()
    rig.scanner.start()
    rig.scan()                                      # the first heartbeat
    rig.board.tokens = {12}
    placed_at = rig.now
    assert changes(rig.scan(2)) == []
    frames = rig.scan()
    assert changes(frames) == [(12, True)]
    assert frames[0].occupied == {12}
    assert rig.now - placed_at == 15 * MS           # 3 scans at 200 Hz: well under 50 ms


def test_scanner_ignores_short_glitches_and_reports_slides_in_order():
    rig = Rig()
    rig.scanner.start()
    rig.scan()
    rig.board.tokens = {7}
    rig.scan(2)
    rig.board.tokens = set()
    assert changes(rig.scan(5)) == []
    seen = []
    for tokens in ({3}, {3, 4}, {4}, {4, 5}, {5}):
        rig.board.tokens = tokens
        seen += changes(rig.scan(4))
    assert seen == [(3, True), (4, True), (3, False), (5, True), (4, False)]


def test_scanner_primes_with_tokens_already_on_the_board():
    rig = Rig(30)
    rig.board.tokens = {0, 29}
    rig.scanner.start()
    frames = rig.scan()
    assert changes(frames) == []
    assert [f.occupied for f in frames if isinstance(f, sp.Heartbeat)] == [{0, 29}]


def test_heartbeat_every_second_with_consecutive_sequence_numbers():
    rig = Rig()
    rig.scanner.start()
    frames = rig.scan(600)                          # 3 s at 200 Hz
    beats = [f for f in frames if isinstance(f, sp.Heartbeat)]
    assert len(beats) == 3
    assert [f.seq for f in frames] == list(range(len(frames)))
    assert rig.parser.stats == sp.ParserStats(frames=len(frames))


def test_sequence_numbers_wrap_after_65535():
    rig = Rig()
    rig.scanner.start()
    rig.scanner.reporter.seq = 65534
    frames = rig.scan()                             # the first heartbeat
    rig.scanner.received(sp.encode(sp.Request(0, "SNAP")) + sp.encode(sp.Request(1, "HELLO")))
    frames += rig.frames()
    assert [(f.KIND, f.seq) for f in frames] == [("BEAT", 65534), ("SNAP", 65535), ("HELLO", 0)]


def test_scanner_answers_requests_and_greets_on_connect():
    rig = Rig()
    rig.board.tokens = {5}
    rig.scanner.start()
    rig.scanner.connected()
    hello, snap = rig.frames()
    assert hello == sp.Hello(0, fw.PROTOCOL_VERSION, fw.FIRMWARE_VERSION, 54)
    assert snap == sp.Snapshot(1, 54, {5})
    rig.scanner.received(b"garbage\r\n" + sp.encode(sp.Request(4, "SNAP"))[:9])
    assert rig.frames() == []
    rig.scanner.received(sp.encode(sp.Request(4, "SNAP"))[9:])
    assert rig.frames() == [sp.Snapshot(2, 54, {5})]


def test_firmware_and_host_session_agree_on_a_game_of_moves():
    """Loopback: the host session's requests go to the firmware, its frames to the host."""
    rig = Rig()
    rig.board.tokens = {0}
    rig.scanner.start()
    session, now = LinkSession(spaces=54), 0.0
    session.connected(now, "fake")
    posted = []

    def exchange():
        events, out, drop = session.drain()
        assert drop is None
        posted.extend(events)
        rig.scanner.received(out)

    exchange()
    for tokens in ({0}, {0, 1}, {1}, {1, 2}, {2}, set(), {9}, {9, 20}):
        rig.board.tokens = tokens
        for _ in range(4):
            rig.now += 5 * MS
            now += 0.005
            rig.scanner.step(rig.now)
            session.received(now, bytes(rig.out))
            rig.out.clear()
            session.tick(now)
            exchange()
    status = [e for e in posted if isinstance(e, SensorStatus)]
    occupancy = [e.occupied for e in posted if isinstance(e, SensorOccupancy)]
    assert [s.online for s in status] == [True]
    assert occupancy[0] == {0} and occupancy[-1] == {9, 20}
    assert {1} in occupancy and set() in occupancy
    stats = session.stats(now)
    assert (stats.gaps, stats.crc_errors, stats.garbage_lines) == (0, 0, 0)


# ------------------------------------------------------- CircuitPython
FORBIDDEN_IMPORTS = {"dataclasses", "typing", "re", "enum", "abc", "collections"}


@pytest.mark.parametrize("path", sorted(FIRMWARE.rglob("*.py")), ids=lambda p: p.name)
def test_firmware_sources_stay_in_circuitpython_subset(path):
    tree = ast.parse(path.read_text(), filename=str(path))
    for node in ast.walk(tree):
        assert not isinstance(node, (ast.JoinedStr, ast.NamedExpr, ast.Match, ast.AnnAssign)), \
            f"{path.name}:{node.lineno}: {type(node).__name__} is not for the firmware"
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module]
            assert not FORBIDDEN_IMPORTS & {n.split(".")[0] for n in names}, names
        if isinstance(node, (ast.FunctionDef, ast.arg)):
            assert getattr(node, "annotation", None) is None and getattr(node, "returns", None) is None


# ------------------------------------------------------- scan statistics
class Clock:
    """A monotonic nanosecond clock the test moves by hand."""

    def __init__(self):
        self.ns = 0

    def __call__(self) -> int:
        return self.ns


def test_scan_timer_latches_each_window():
    from pwsensor.scanner import ScanTimer
    timer = ScanTimer(window_ms=1000)
    assert timer.figures(0) == (1, 0, 0, 0)
    start = 0
    for i in range(200):                      # 200 scans 5 ms apart, each 1 ms long,
        timer.scanned(start, start + 1 * MS)  # one of them 3 ms long and followed
        start += 5 * MS if i != 100 else 9 * MS   # by a 9 ms gap
    assert timer.figures(start) == (start // MS, 200, 1000, 9000)    # window not over yet
    timer.scanned(start, start + 2 * MS)      # first scan at or after 1000 ms: latch
    assert timer.last == (start // MS, 200, 1000, 9000)
    assert timer.figures(start + 50 * MS) == timer.last
    assert (timer.scans, timer.worst_scan_us, timer.worst_gap_us) == (1, 2000, 5000)


def test_scanner_times_its_scans_and_answers_stat_requests():
    clock = Clock()
    out = bytearray()
    board = Board(54)

    def read(levels):
        board.bank.read(levels)
        clock.ns += 700_000                   # reading the multiplexers takes 0.7 ms

    scanner = Scanner(read, 54, out.extend, clock=clock, window_ms=1000)
    scanner.start()
    for _ in range(401):                      # 2 s of scans every 5 ms
        clock.ns = (clock.ns // (5 * MS) + 1) * 5 * MS
        scanner.step(clock.ns)
    out.clear()
    scanner.received(sp.encode(sp.Request(3, "STAT")))
    frames = sp.FrameParser().feed(bytes(out))
    assert len(frames) == 1 and isinstance(frames[0], sp.ScanStats)
    stat = frames[0]
    assert (stat.window_ms, stat.scans, stat.worst_scan_us, stat.worst_gap_us) == (1000, 200, 700, 5000)
    assert stat.rate_hz == pytest.approx(200.0)


def test_firmware_stat_frame_is_byte_identical_and_capped():
    assert fw.scan_stats(7, 5000, 1000, 1800, 5400) == sp.encode(sp.ScanStats(7, 5000, 1000, 1800, 5400))
    assert fw.scan_stats(7, 70000, 2_000_000, 5_000_000, 1) == sp.encode(
        sp.ScanStats(7, 65535, 999999, 999999, 1))


def test_host_session_reads_the_firmware_scan_rate_and_old_firmware_stays_usable():
    for old in (False, True):
        rig = Rig()
        rig.scanner.start()
        session = LinkSession(spaces=54)
        session.connected(0.0, "fake")
        _, out, _ = session.drain()
        if old:                                   # firmware 1.0.0 ignores REQ STAT
            rig.scanner.reporter.answer = lambda what, figures=None, real=rig.scanner.reporter.answer: \
                None if what == "STAT" else real(what)
        rig.scanner.received(out)
        for _ in range(3):
            rig.now += 5 * MS
            rig.scanner.step(rig.now)
        session.received(0.01, bytes(rig.out))       # HELLO, SNAP and a BEAT
        rig.out.clear()
        session.ask_scan_stats(0.02)
        _, out, _ = session.drain()
        assert fw.parse_request(out.rstrip(b"\r\n")) == "STAT"
        rig.scanner.received(out)
        session.received(0.03, bytes(rig.out))
        events, _, drop = session.drain()
        stats = session.stats(0.03)
        assert drop is None and stats.state == "online" and stats.gaps == 0
        assert (stats.scan is None) == old
        if not old:
            assert stats.scan.scans == 3 and stats.scan.window_ms >= 1


def test_scan_stats_are_forgotten_when_the_port_is_reopened():
    session = LinkSession(spaces=54)
    session.connected(0.0, "fake")
    session.received(0.01, sp.encode(sp.Hello(0, 1, "1.1.0", 54)) + sp.encode(
        sp.ScanStats(1, 5000, 1000, 1800, 5400)))
    assert session.stats(0.01).scan == sp.ScanStats(1, 5000, 1000, 1800, 5400)
    session.connected(0.5, "another")
    assert session.stats(0.5).scan is None
