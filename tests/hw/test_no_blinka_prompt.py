"""Blinka 10 never asks to pip-install into the service's venv, also when the LED strip
is started from a terminal (``calibrate``, ``selftest`` or a manual ``run``).

A child process runs on a real pty (stdin and stdout are a terminal, as when a maker
types the command), with Blinka's own detector told it is on a Raspberry Pi 4 (the
one thing /proc/cpuinfo would tell it on a Pi). Without the companion's setting,
Blinka prints its "[Y/n]" question; with it, the strip fails with Blinka's message
naming the missing library instead."""
from __future__ import annotations

import os
import pty
import select
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

CHILD = """
import os, sys
os.environ["BLINKA_FORCEBOARD"] = "RASPBERRY_PI_4B"
os.environ["BLINKA_FORCECHIP"] = "BCM2XXX"
os.environ.pop("BLINKA_SKIP_DEPENDENCY_CHECK", None)
from adafruit_blinka.agnostic import detector
type(detector.board).any_raspberry_pi = property(lambda self: True)
print("tty", sys.stdin.isatty(), sys.stdout.isatty(), flush=True)
try:
    if sys.argv[1] == "companion":
        from firmware_py.hw.backends import _pixels
        _pixels({"leds": {"driver": "neopixel_spi", "pin": "D10", "count": 54,
                          "brightness": 0.25, "order": "GRB"}}, sim=False)
    else:
        import board
except Exception as exc:
    print("FAILED:", exc, flush=True)
"""


def run_on_a_pty(mode: str) -> str:
    """Run CHILD on a pty; answer "n" if asked; return everything it printed."""
    pid, fd = pty.fork()
    if pid == 0:
        os.chdir(REPO)
        os.execv(sys.executable, [sys.executable, "-c", CHILD, mode])
    out, answered = b"", False
    deadline = time.monotonic() + 60
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([fd], [], [], 1.0)
            if not ready:
                continue
            try:
                data = os.read(fd, 4096)
            except OSError:
                break
            if not data:
                break
            out += data
            if b"[Y/n]" in out and not answered:
                os.write(fd, b"n\n")
                answered = True
    finally:
        os.close(fd)
        os.waitpid(pid, 0)
    return out.decode("utf-8", "replace")


def test_blinka_asks_on_a_terminal_without_the_setting():
    """The question is real: plain ``import board`` on a Pi 4 at a terminal asks it."""
    out = run_on_a_pty("plain")
    assert "tty True True" in out
    assert "[Y/n]" in out and "rpi_ws281x" in out


def test_the_companion_never_lets_blinka_ask():
    out = run_on_a_pty("companion")
    assert "tty True True" in out
    assert "[Y/n]" not in out
    assert "FAILED:" in out and "gpiod" in out
