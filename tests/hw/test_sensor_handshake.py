"""The sensor port and the sensor's greeting, over a real pty with the simulated sensor.

* The port is opened exclusively: a second process gets "sensor port in use"
  at once and never a frame.
* A HELLO this host cannot accept (extra fields, a long or odd firmware
  version, another protocol version, fewer spaces than the game needs) gets a
  one-line diagnosis as the offline reason, in the log and on the OLED;
  hardware/protocol.md's rule is enforced (the port is closed, retried later),
  and the port is reopened at most twice a second.
"""
from __future__ import annotations

import json
import logging
import subprocess
import sys
import textwrap
import threading
import time

import pytest

from firmware_py.service.assembly import start_companion
from firmware_py.config import validate
from firmware_py.hw import sensor_protocol as sp
from firmware_py.hw.sensor_link import SensorLink, SensorOccupancy, SensorStatus
from firmware_py.sim.sensor import SimSensorProcess

from test_faults_rig import GOLDEN_RECORDS, setup_journal, wait_until


class Host:
    """A SensorLink on ``device`` keeping every event it posts."""

    def __init__(self, device: str, **kwargs):
        self.events: list = []
        self.lock = threading.Lock()
        self.link = SensorLink([device], post=self._post, **kwargs)

    def _post(self, event) -> None:
        with self.lock:
            self.events.append(event)

    def statuses(self) -> list[SensorStatus]:
        with self.lock:
            return [e for e in self.events if isinstance(e, SensorStatus)]

    def occupancy(self) -> list[SensorOccupancy]:
        with self.lock:
            return [e for e in self.events if isinstance(e, SensorOccupancy)]

    def reason(self, words: str, timeout: float = 3.0) -> str:
        return wait_until(lambda: next((s.reason for s in self.statuses() if words in s.reason),
                                       None), f"a status saying {words!r}", timeout)


@pytest.fixture
def sim(tmp_path):
    with SimSensorProcess(tmp_path / "sensor", speed=4) as sensor:
        sensor.command("reset", tokens=[0, 0])
        sensor.sync()
        yield sensor, str(tmp_path / "sensor")


# ------------------------------------------------------------------ exclusive port
CHILD = textwrap.dedent('''
    import json, sys, time
    from firmware_py.hw.sensor_link import SensorLink, SensorOccupancy, SensorStatus
    seen, began = [], time.monotonic()
    def post(event):
        if isinstance(event, SensorStatus):
            seen.append(["status", round(time.monotonic() - began, 3), event.reason])
        elif isinstance(event, SensorOccupancy):
            seen.append(["frame", round(time.monotonic() - began, 3), sorted(event.occupied)])
    link = SensorLink([sys.argv[1]], post=post)
    link.start()
    time.sleep(1.5)
    link.stop()
    print(json.dumps(seen))
''')


def test_a_second_process_gets_sensor_port_in_use_at_once(sim, tmp_path):
    sensor, device = sim
    first = Host(device)
    first.link.start()
    try:
        first.reason("sensor online")
        child = subprocess.run([sys.executable, "-c", CHILD, device], capture_output=True,
                               text=True, timeout=30)
        seen = json.loads(child.stdout)
        assert seen and seen[0][0] == "status", seen
        assert seen[0][2].startswith("sensor port in use: ") and device in seen[0][2], seen
        assert seen[0][1] < 1.0                                  # at once, not after a timeout
        assert not [s for s in seen if s[0] == "frame"]           # never half of the frames
        before = len(first.occupancy())
        sensor.command("move", token=0, to=3, style="lift")
        sensor.sync()
        wait_until(lambda: any(e.occupied == {0, 3} for e in first.occupancy()[before:]),
                   "the first host still reading every frame")
    finally:
        first.link.stop()


# ------------------------------------------------------------------ unexpected greetings
@pytest.mark.parametrize("fields, need, words", [
    ("1,1.0.0-sim,54,scan=200,x", None, "unexpected hello: 6 fields, protocol 1 has 4 "
                                        "(extra: 'scan=200', 'x')"),
    ("1," + "v" * 40 + ",54", None, "unexpected hello: firmware version of 40 characters"),
    ("1," + "v" * 150 + ",54", None, "unexpected hello: firmware version of 150 characters"),
    ("1,1.0 beta,54", None, "firmware version '1.0 beta' has characters other than"),
    ("2,2.0.0,54", None, "sensor speaks protocol 2, host speaks 1"),
    ("1,1.0.0,30", (54, "Patchwork"), "sensor has 30 spaces, Patchwork needs 54"),
    ("1,1.0.0", None, "unexpected hello: 3 fields, protocol 1 has 4"),
], ids=["extra-fields", "long-version", "overlong-line", "odd-version", "protocol-2",
        "too-few-spaces", "too-few-fields"])
def test_an_unexpected_hello_gets_a_one_line_diagnosis(sim, caplog, fields, need, words):
    sensor, device = sim
    sensor.command("hello", fields=fields)
    host = Host(device)
    if need:
        host.link.need_spaces(*need)
    caplog.set_level(logging.INFO, logger="firmware_py.hw.sensor_link")
    host.link.start()
    try:
        reason = host.reason(words)
        time.sleep(2.0)                                         # it keeps being refused
        stats = host.link.stats()
    finally:
        host.link.stop()
    assert reason.startswith("sensor offline: ") and "\n" not in reason and len(reason) < 160
    assert not host.occupancy()                                 # nothing from it is trusted
    assert not any(s.online for s in host.statuses())
    logged = [r.getMessage() for r in caplog.records if words in r.getMessage()]
    assert logged == [reason]                                   # said once, not per retry
    assert 2 <= stats.reconnects + 1 <= 6, stats                # retried, at most twice a second


def test_a_good_hello_after_a_refused_one_brings_the_link_online(sim):
    sensor, device = sim
    sensor.command("hello", fields="2,2.0.0,54")
    host = Host(device)
    host.link.start()
    try:
        host.reason("sensor speaks protocol 2")
        sensor.command("hello", fields=None)
        host.reason("sensor online", timeout=3.0)
        wait_until(lambda: host.occupancy(), "occupancy trusted again")
    finally:
        host.link.stop()


def test_a_game_needing_more_spaces_drops_a_sensor_already_online(sim):
    sensor, device = sim
    host = Host(device)
    host.link.need_spaces(30, "Patchwork Express")
    host.link.start()
    try:
        host.reason("sensor online: ")
        host.link.need_spaces(61, "Patchwork")                  # e.g. a sensor.map up to 60
        host.reason("sensor has 54 spaces, Patchwork needs 61")
        host.link.need_spaces(54, "Patchwork")
        wait_until(lambda: host.statuses()[-1].online, "back online")
    finally:
        host.link.stop()


# ------------------------------------------------------------------ the protocol module
def test_hello_decoding_names_what_is_unexpected():
    line = sp.encode(sp.Hello(0, 1, "1.0.0", 54)).replace(b",54*", b",54,x*")
    body = line[1:line.index(b"*")]
    line = b"$" + body + b"*%04X\r\n" % sp.crc16_ccitt_false(body)
    with pytest.raises(sp.HandshakeError, match=r"5 fields, protocol 1 has 4 \(extra: 'x'\)"):
        sp.decode_line(line)
    parser = sp.FrameParser()
    assert parser.feed(line) == [] and parser.stats.malformed == 1
    assert parser.take_handshake_errors() == ["unexpected hello: 5 fields, protocol 1 has 4 "
                                              "(extra: 'x')"]
    assert parser.take_handshake_errors() == []


def test_a_hello_line_too_long_for_the_buffer_is_diagnosed():
    body = b"PW,HELLO,0,1," + b"v" * 150 + b",54"
    line = b"$" + body + b"*%04X\r\n" % sp.crc16_ccitt_false(body)
    parser = sp.FrameParser()
    for i in range(0, len(line), 16):                          # as a serial port delivers it
        assert parser.feed(line[i:i + 16]) == []
    assert parser.take_handshake_errors() == [
        "unexpected hello: a line longer than 120 bytes (a long firmware version?)"]


def test_documented_optional_hello_fields_are_accepted(monkeypatch):
    monkeypatch.setattr(sp, "HELLO_OPTIONS", ("scan",))
    hello = sp.Hello(3, 1, "1.1.0", 54, (("scan", "200"),))
    line = sp.encode(hello)
    assert line.startswith(b"$PW,HELLO,3,1,1.1.0,54,scan=200*")
    assert sp.decode_line(line) == hello
    assert sp.FrameParser().feed(line) == [hello]


# ------------------------------------------------------------------ the whole companion
def test_the_companion_says_why_on_the_oled_and_in_the_log(tmp_path, caplog):
    """A Patchwork game whose sensor.map reads channels up to 60 cannot use the
    simulated 54-space sensor: the OLED's badge says where to look in a few words, the
    log says why in one line."""
    caplog.set_level(logging.INFO, logger="firmware_py.hw.sensor_link")
    cfg = validate({"backend": "sim", "sensor": {"map": list(range(7, 61)), "stable_ms": 60},
                    "sim": {"sensor_link": str(tmp_path / "sensor"), "speed": 4.0}}, "test")
    setup_journal(tmp_path / "journal", GOLDEN_RECORDS[0])
    companion = start_companion(cfg, folder=tmp_path / "journal")
    try:
        words = "sensor has 54 spaces, Patchwork needs 61"
        wait_until(lambda: companion.service.status.screen.warning == "sensor firmware?",
                   "the OLED warning")
    finally:
        companion.close()
    assert any(words in r.getMessage() for r in caplog.records)
