"""The LAN page against a stranger on the same LAN: foreign Host names (DNS
rebinding), a NUL in a path, PIN guessing and burning, half-sent requests, a
page that stops reading, and one address opening many connections."""
from __future__ import annotations

import logging
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from firmware_py.web import auth, hosts
from firmware_py.web.auth import AuthError, PinGate
from firmware_py.web.library import Library
from firmware_py.web.server import GATE, HUB, make_app
from web_helpers import ServerThread, fill_store


def _get(url: str, headers: dict | None = None, data: bytes | None = None) -> tuple[int, str]:
    req = urllib.request.Request(url, data=data, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


@pytest.fixture
def site(tmp_path):
    (tmp_path / "feed").mkdir()
    fill_store(tmp_path / "store", 3)
    app = make_app(tmp_path / "feed", Library(tmp_path / "store"), tmp_path / "names.json",
                   hosts=hosts.allowed_names("127.0.0.1", hostname="pi-box", addresses=frozenset(),
                                             extra=("quilt.example",)))
    with ServerThread(app) as server:
        server.feed = tmp_path / "feed"
        yield server


def test_only_the_pages_own_names_are_served(site):
    port = site.port
    for host in (f"127.0.0.1:{port}", f"localhost:{port}", "pi-box", f"pi-box.local:{port}",
                 "quilt.example", "QUILT.example."):
        status, _ = _get(site.url + "/history", {"Host": host})
        assert status == 200, host
    for host in (f"evil.example:{port}", "pi-box.evil.example", f"10.9.8.7:{port}", "", "a b",
                 f"127.0.0.2:{port}"):
        status, body = _get(site.url + "/history", {"Host": host})
        assert status in (400, 421), host
        assert "Anna" not in body                                  # no history leaks
    status, body = _get(site.url + "/pin", {"Host": f"evil.example:{port}",
                                            "Origin": f"http://evil.example:{port}"}, b"")
    assert status == 421


def test_a_nul_in_a_path_is_no_page(site):
    for path in ("/static/a%00.js", "/game/a%00b", "/download/%00.json"):
        status, body = _get(site.url + path)
        assert status == 404 and "Traceback" not in body, path


def test_pin_guesses_back_off_per_address_and_page_wide_and_are_logged(caplog):
    clock = [0.0]
    shown = []
    gate = PinGate(lambda pin, s: shown.append(pin), clock=lambda: clock[0])
    gate.issue()
    wrong = "000000" if shown[-1] != "000000" else "111111"
    caplog.set_level(logging.WARNING, logger="firmware_py.web.auth")
    for _ in range(auth.FREE_ADDRESS + 1):
        with pytest.raises(AuthError):
            gate.login(wrong, "10.0.0.66")
    with pytest.raises(AuthError) as refused:
        gate.login(shown[-1], "10.0.0.66")                 # even the right PIN waits
    assert refused.value.status == 429 and gate.pin.tries == auth.FREE_ADDRESS + 1
    assert len([r for r in caplog.records if "wrong PIN from 10.0.0.66" in r.message]) == 4
    gate.pin.tries = 0
    for i in range(auth.FREE_PAGE + 1):                   # many addresses: the page backs off
        clock[0] += 1
        gate.pin.tries = 0
        with pytest.raises(AuthError):
            gate.login(wrong, f"10.0.1.{i}")
    with pytest.raises(AuthError) as refused:
        gate.login(shown[-1], "10.0.2.1")
    assert refused.value.status == 429


def test_the_odds_of_guessing_a_pin_within_30_days_are_under_a_thousandth():
    days30 = 30 * 86400
    assert auth.guess_odds(days30) < 0.001
    assert auth.most_guesses(days30) < 1000


def test_a_stranger_cannot_burn_the_pin_or_lock_out_the_person_at_the_box():
    clock = [0.0]
    shown = []
    gate = PinGate(lambda pin, s: shown.append(pin), clock=lambda: clock[0])
    gate.issue()
    first = shown[-1]
    clock[0] += 30
    gate.issue()                                         # asked again on the page
    assert shown[-1] == first                            # the same PIN: nothing burnt
    wrong = "000000" if first != "000000" else "111111"
    for i in range(40):                                  # a stranger with many addresses
        clock[0] += 1
        try:
            gate.login(wrong, f"10.0.3.{i}")
        except AuthError:
            pass
        if gate.pin is None:
            gate.issue() if clock[0] - gate._last_issue >= auth.ISSUE_SECONDS else None
    assert gate.page.wait(clock[0]) > 0                  # the page-wide back-off holds
    gate.issue(at_box=True)                              # the menu on the box
    token = gate.login(shown[-1], "192.168.1.20")        # the player's phone
    assert gate.allowed(token)


def test_a_page_that_stops_reading_events_is_dropped(site, monkeypatch):
    from firmware_py.web import server
    monkeypatch.setattr(server, "WRITE_S", 1.0)
    hub = site.app[HUB]
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect(("127.0.0.1", site.port))
    sock.sendall(f"GET /events HTTP/1.1\r\nHost: 127.0.0.1:{site.port}\r\n\r\n".encode())
    try:
        deadline = time.monotonic() + 10
        while not hub.clients and time.monotonic() < deadline:
            time.sleep(0.05)
        assert hub.clients
        seq = 0
        deadline = time.monotonic() + 60
        while hub.clients and time.monotonic() < deadline:
            seq += 1
            site.loop.call_soon_threadsafe(hub.update, {"run": "r", "seq": seq, "pad": "x" * 200_000})
            time.sleep(0.05)
        assert not hub.clients                            # dropped, never held forever
    finally:
        sock.close()


def _web(tmp_path, port: int):
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2]),
           "XDG_RUNTIME_DIR": str(tmp_path), "XDG_STATE_HOME": str(tmp_path)}
    proc = subprocess.Popen([sys.executable, "-m", "firmware_py.cli", "web", "--port", str(port)],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), 0.5).close()
            return proc
        except OSError:
            time.sleep(0.1)
    proc.kill()
    raise AssertionError("the web command did not listen")


def _closed(sock: socket.socket, seconds: float) -> bool:
    sock.settimeout(seconds)
    try:
        return sock.recv(1) == b""
    except (ConnectionResetError, BrokenPipeError):
        return True
    except socket.timeout:
        return False


def test_half_sent_requests_are_closed_and_one_address_holds_few_connections(tmp_path):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    proc = _web(tmp_path, port)
    socks = []
    try:
        for _ in range(hosts.PER_ADDRESS + 10):
            s = socket.create_connection(("127.0.0.1", port), 5)
            s.sendall(b"GET /history HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")   # never ends
            socks.append(s)
        over = [s for s in socks[hosts.PER_ADDRESS:] if _closed(s, 5)]
        assert len(over) == 10                            # refused at once, beyond the cap
        assert all(_closed(s, 60) for s in socks[:hosts.PER_ADDRESS])  # headers never came
        assert _get(f"http://127.0.0.1:{port}/")[0] == 200          # the page still answers
    finally:
        for s in socks:
            s.close()
        proc.terminate()
        out = proc.communicate(timeout=10)[0].decode()
    assert "Traceback" not in out
    assert "refused a connection from 127.0.0.1" in out


def test_the_menu_on_the_box_gets_a_pin_while_strangers_are_held_off(site):
    """'Web PIN' in the box's menu: the page shows a fresh PIN on the OLED (through the
    live feed's ``pin_asked``), and it logs in though the page-wide back-off holds."""
    from firmware_py.service.feed import ControlListener, FeedPublisher
    from test_faults_rig import GOLDEN_RECORDS, wait_until
    from test_feed import _capture, _ui_after
    from test_screens_fit import hold, press
    gate, hub = site.app[GATE], site.app[HUB]
    for _ in range(30):                                   # strangers guessed a lot
        gate.page.failed(gate.clock())
    assert gate.page.wait(gate.clock()) > 60
    shown = []
    listener = ControlListener(site.feed, shown.append)
    pub = FeedPublisher(site.feed)
    try:
        ui = _ui_after(GOLDEN_RECORDS[0], 5)
        snap = pub.publish(_capture(ui))
        wait_until(lambda: (hub.snapshot or {}).get("seq") == snap["seq"], "the first snapshot")
        hold(ui, "ok")
        press(ui, "next", ui.menu.index("Web PIN"))
        press(ui, "ok")
        assert ui.mode == "turn" and ui.pin_asked == 1
        pub.publish(_capture(ui))
        wait_until(lambda: shown and gate.pin is not None, "the PIN on the OLED")
        assert gate.pin.at_box and gate.pin.value == shown[-1].pin
        token = gate.login(shown[-1].pin, "192.168.1.20")
        assert gate.allowed(token)
    finally:
        pub.close()
        listener.close()
