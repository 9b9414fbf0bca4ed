"""sd_notify client: real datagram sockets (file-system and abstract), exact bytes."""

from __future__ import annotations

import logging
import os
import socket
import time
import uuid

import pytest

from firmware_py.service.sdnotify import Notifier, parse_address, watchdog_interval_from


@pytest.fixture
def path_socket(tmp_path):
    """A bound AF_UNIX datagram socket in a temp dir; yields (socket, NOTIFY_SOCKET value)."""
    path = str(tmp_path / "notify.sock")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(path)
    sock.settimeout(2.0)
    yield sock, path
    sock.close()


@pytest.fixture
def abstract_socket():
    """A bound abstract datagram socket; yields (socket, '@name' as systemd writes it)."""
    name = f"patchwork-test-{os.getpid()}-{uuid.uuid4().hex}"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(b"\0" + name.encode())
    sock.settimeout(2.0)
    yield sock, "@" + name
    sock.close()


def recv(sock: socket.socket) -> bytes:
    return sock.recv(4096)


def test_path_socket_exact_bytes(path_socket):
    sock, value = path_socket
    n = Notifier.from_environment({"NOTIFY_SOCKET": value})
    assert n.enabled
    assert n.ready() is True
    assert recv(sock) == b"READY=1"
    assert n.watchdog() is True
    assert recv(sock) == b"WATCHDOG=1"
    assert n.status("waiting for sensor") is True
    assert recv(sock) == b"STATUS=waiting for sensor"
    assert n.stopping() is True
    assert recv(sock) == b"STOPPING=1"
    n.close()


def test_abstract_socket_exact_bytes(abstract_socket):
    sock, value = abstract_socket
    assert value.startswith("@")
    with Notifier.from_environment({"NOTIFY_SOCKET": value}) as n:
        assert n.ready("game resumed") is True
        assert recv(sock) == b"READY=1\nSTATUS=game resumed"
        assert n.watchdog() is True
        assert recv(sock) == b"WATCHDOG=1"
        assert n.stopping("turning LEDs off") is True
        assert recv(sock) == b"STOPPING=1\nSTATUS=turning LEDs off"


def test_status_is_one_line_and_utf8(path_socket):
    sock, value = path_socket
    n = Notifier.from_environment({"NOTIFY_SOCKET": value})
    n.status("sensor offline\nretrying – 2 s")
    assert recv(sock) == "STATUS=sensor offline retrying – 2 s".encode("utf-8")
    n.extend_timeout(2.5)
    assert recv(sock) == b"EXTEND_TIMEOUT_USEC=2500000"
    n.close()


def test_many_messages_reuse_one_socket(path_socket):
    sock, value = path_socket
    n = Notifier.from_environment({"NOTIFY_SOCKET": value})
    for _ in range(50):
        assert n.watchdog()
        assert recv(sock) == b"WATCHDOG=1"
    n.close()


def test_full_receiver_queue_drops_instead_of_blocking(path_socket):
    """A receiver that stops reading must not hang the event loop in watchdog()."""
    sock, value = path_socket
    n = Notifier(parse_address(value), send_timeout=0.05)
    start = time.monotonic()
    results = []
    while results.count(False) < 3 and len(results) < 10_000:  # past net.unix.max_dgram_qlen
        results.append(n.watchdog())
    elapsed = time.monotonic() - start
    assert results[0] is True
    assert results.count(False) == 3
    assert elapsed < 10  # each drop waits ~send_timeout, never forever
    assert recv(sock) == b"WATCHDOG=1"
    n.close()
    with pytest.raises(ValueError):
        Notifier(None, send_timeout=0)


def test_unset_is_a_quiet_no_op():
    n = Notifier.from_environment({})
    assert not n.enabled
    assert n.ready() is False
    assert n.watchdog() is False
    assert n.status("x") is False
    assert n.stopping() is False
    assert n.watchdog_interval() is None
    assert n.watchdog_period() is None


def test_malformed_socket_disables_with_a_warning(caplog):
    with caplog.at_level(logging.WARNING):
        n = Notifier.from_environment({"NOTIFY_SOCKET": "relative/notify"})
    assert not n.enabled
    assert n.ready() is False
    assert "sd_notify disabled" in caplog.text


def test_send_failure_returns_false_and_does_not_raise(tmp_path, caplog):
    n = Notifier(str(tmp_path / "nobody-listens"))
    with caplog.at_level(logging.DEBUG):
        assert n.ready() is False
        assert n.watchdog() is False
    assert caplog.text.count("WARNING") <= 1


def test_bad_assignment_is_a_programming_error(path_socket):
    _, value = path_socket
    n = Notifier.from_environment({"NOTIFY_SOCKET": value})
    with pytest.raises(ValueError):
        n.notify("READY")
    with pytest.raises(ValueError):
        n.notify("STATUS=a\nREADY=1")
    with pytest.raises(ValueError):
        n.extend_timeout(0)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, None),
        ("", None),
        ("/run/systemd/notify", "/run/systemd/notify"),
        ("@abc", b"\0abc"),
    ],
)
def test_parse_address(value, expected):
    assert parse_address(value) == expected


@pytest.mark.parametrize("value", ["@", "notify", "vsock:2:1234"])
def test_parse_address_rejects(value):
    with pytest.raises(ValueError):
        parse_address(value)


def test_watchdog_interval():
    assert watchdog_interval_from({"WATCHDOG_USEC": "15000000"}) == 15.0
    assert watchdog_interval_from({"WATCHDOG_USEC": "15000000", "WATCHDOG_PID": str(os.getpid())}) == 15.0
    assert watchdog_interval_from({"WATCHDOG_USEC": "15000000", "WATCHDOG_PID": "1"}, pid=2) is None
    assert watchdog_interval_from({"WATCHDOG_USEC": "0"}) is None
    assert watchdog_interval_from({"WATCHDOG_USEC": "soon"}) is None
    assert watchdog_interval_from({"WATCHDOG_USEC": "1", "WATCHDOG_PID": "x"}) is None
    assert watchdog_interval_from({}) is None
    n = Notifier.from_environment({"WATCHDOG_USEC": "10000000"})
    assert n.watchdog_interval() == 10.0
    assert n.watchdog_period() == 5.0


def test_unset_environment_removes_variables(monkeypatch, path_socket):
    _, value = path_socket
    monkeypatch.setenv("NOTIFY_SOCKET", value)
    monkeypatch.setenv("WATCHDOG_USEC", "4000000")
    monkeypatch.setenv("WATCHDOG_PID", str(os.getpid()))
    n = Notifier.from_environment(unset_environment=True)
    assert n.enabled and n.watchdog_interval() == 4.0
    assert "NOTIFY_SOCKET" not in os.environ
    assert "WATCHDOG_USEC" not in os.environ
    assert "WATCHDOG_PID" not in os.environ
    n.close()
