"""`patchwork-companion run` under systemd: while a large journal of the old design (every
game in one file) loads, the unit's start timeout is extended over the real notify socket."""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time

from firmware_py.service.loop import EXTEND_S

from test_companion_journal import old_design_journal


def _datagrams(sock, until: float, stop: bytes) -> list[bytes]:
    out: list[bytes] = []
    while time.monotonic() < until and not any(stop in m for m in out):
        sock.settimeout(max(0.01, until - time.monotonic()))
        try:
            out.append(sock.recv(4096))
        except TimeoutError:
            break
    return out


def test_loading_an_old_design_journal_extends_the_start_timeout(tmp_path):
    assert old_design_journal(tmp_path / "patchwork-companion", 2000) > 1_000_000
    name = f"\0patchwork-extend-test-{os.getpid()}"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(name)
    env = dict(os.environ, NOTIFY_SOCKET="@" + name[1:], XDG_STATE_HOME=str(tmp_path))
    proc = subprocess.Popen([sys.executable, "-m", "firmware_py.cli", "run"], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        got = _datagrams(sock, time.monotonic() + 60, b"READY=1")
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=20) == 0
        after = _datagrams(sock, time.monotonic() + 1, b"STOPPING=1")
    finally:
        if proc.poll() is None:
            proc.kill()
        sock.close()
    ready = next(i for i, m in enumerate(got) if b"READY=1" in m)
    extend = f"EXTEND_TIMEOUT_USEC={int(EXTEND_S * 1_000_000)}".encode()
    assert extend in got[:ready]                       # asked for more time while loading
    assert not any(b"EXTEND_TIMEOUT_USEC" in m for m in got[ready:] + after)   # not once running
