"""`patchwork-companion run`: systemd notify protocol, watchdog fed by the loop, SIGTERM shutdown."""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time


def _messages(sock, until: float) -> list[bytes]:
    out = []
    while time.monotonic() < until:
        sock.settimeout(max(0.01, until - time.monotonic()))
        try:
            out.append(sock.recv(4096))
        except TimeoutError:
            break
    return out


def test_run_reports_ready_feeds_the_watchdog_and_stops_on_sigterm(tmp_path):
    name = f"\0patchwork-test-{os.getpid()}"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(name)
    env = dict(os.environ, NOTIFY_SOCKET="@" + name[1:], WATCHDOG_USEC="1000000",
               XDG_STATE_HOME=str(tmp_path))
    proc = subprocess.Popen([sys.executable, "-m", "firmware_py.cli", "run"], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        got = _messages(sock, time.monotonic() + 8)
        joined = b"\n".join(got)
        assert b"READY=1" in joined
        assert joined.count(b"WATCHDOG=1") >= 3          # every 0.5 s, from the loop
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=10) == 0
        assert b"STOPPING=1" in b"\n".join(_messages(sock, time.monotonic() + 1))
    finally:
        if proc.poll() is None:
            proc.kill()
        sock.close()


def test_run_refuses_a_bad_config(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text('backend = "pi"\n[leds]\nbrightness = 3\ncolour = "red"\n')
    proc = subprocess.run([sys.executable, "-m", "firmware_py.cli", "run", "--config", str(bad)],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 78                     # RestartPreventExitStatus of the unit
    assert proc.stderr.splitlines()[0].endswith(f"config {bad} (given with --config): not valid")
    assert "leds.brightness: 3 is outside 0.0..1.0" in proc.stderr
    assert "leds.colour: unknown key" in proc.stderr
