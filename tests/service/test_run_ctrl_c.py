"""`patchwork-companion run` on the sim backend as a user meets it: Ctrl-C in a terminal,
the start-up log, and the frames kept in ``sim.capture_dir``."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time

import pytest
from PIL import Image


@pytest.fixture
def started():
    """Every `run` process a test starts; any still running at the end is killed."""
    procs: list[subprocess.Popen] = []
    yield procs
    for proc in procs:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def _start(tmp_path, started, capture: str = "") -> tuple[subprocess.Popen, list[str]]:
    """`run` in its own process group (as a terminal runs a foreground command); returns the
    process and a list its stderr lines are collected into."""
    config = tmp_path / "config.toml"
    config.write_text(f'backend = "sim"\n[journal]\ndir = "{tmp_path / "journal"}"\n'
                      f'[sim]\ncapture_dir = "{capture}"\n')
    proc = subprocess.Popen([sys.executable, "-m", "firmware_py.cli", "run", "--config", str(config)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    started.append(proc)
    lines: list[str] = []
    threading.Thread(target=lambda: lines.extend(proc.stderr), daemon=True).start()
    return proc, lines


def _wait_for(lines: list[str], text: str, seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while not any(text in line for line in lines):
        assert time.monotonic() < deadline, f"no {text!r} in {lines}"
        time.sleep(0.05)


def _ctrl_c(proc: subprocess.Popen) -> int:
    """What a terminal does on Ctrl-C: SIGINT to every process of the foreground group."""
    os.killpg(proc.pid, signal.SIGINT)
    try:
        return proc.wait(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()


def test_ctrl_c_stops_cleanly_with_outputs_off_and_every_frame_kept(tmp_path, started):
    capture = tmp_path / "frames"
    proc, lines = _start(tmp_path, started, str(capture))
    _wait_for(lines, "companion running")
    time.sleep(1.0)                              # the sensor link is up and beating
    assert _ctrl_c(proc) == 0
    _wait_for(lines, "shutting down")
    text = "".join(lines)
    assert "Traceback" not in text and "KeyboardInterrupt" not in text, text
    assert text.count("shutting down") == 1, text
    pngs = sorted((capture / "oled").glob("frame-*.png"))
    assert len(pngs) >= 2                            # the first screen ... and the OLED off
    assert Image.open(pngs[0]).getbbox() is not None     # something was drawn
    assert Image.open(pngs[-1]).getbbox() is None        # cleared on shutdown
    frames = [json.loads(line) for line in (capture / "leds.jsonl").read_text().splitlines()]
    assert len(frames) >= 2 and len(frames[-1]["leds"]) == 54
    assert any(any(c != [0, 0, 0] for c in f["leds"]) for f in frames[:-1])   # lit while running
    assert all(c == [0, 0, 0] for c in frames[-1]["leds"])                    # off on shutdown
    assert (capture / "oled.gif").exists()


def test_ctrl_c_during_start_up_stops_without_a_traceback(tmp_path, started):
    proc, lines = _start(tmp_path, started, str(tmp_path / "frames"))
    _wait_for(lines, "keeping every OLED and LED frame")     # logged while starting
    assert _ctrl_c(proc) == 0
    _wait_for(lines, "shutting down")
    assert "Traceback" not in "".join(lines), lines


def test_each_start_up_problem_and_the_shutdown_are_logged_once(tmp_path, started):
    journal = tmp_path / "journal"
    journal.mkdir()
    (journal / "journal.jsonl").write_bytes(b'{"not": "an entry"\n')
    proc, lines = _start(tmp_path, started)
    _wait_for(lines, "companion running")
    os.kill(proc.pid, signal.SIGTERM)
    os.kill(proc.pid, signal.SIGINT)                 # an impatient second stop
    assert proc.wait(timeout=20) == 0
    _wait_for(lines, "shutting down")
    warnings = [line for line in lines if line.startswith("WARNING")]
    assert any("journal.jsonl" in line for line in warnings), lines
    assert len(warnings) == len(set(warnings)), warnings
    assert sum("shutting down" in line for line in lines) == 1, lines


def test_a_sigterm_taken_by_another_thread_still_stops_the_service(tmp_path, started):
    """The kernel hands a process's signal to any of its threads; when one other than the
    main thread takes SIGTERM, the service must still stop (and not wait for SIGKILL)."""
    import ctypes
    proc, lines = _start(tmp_path, started)
    _wait_for(lines, "companion running")
    others = [int(t) for t in os.listdir(f"/proc/{proc.pid}/task") if int(t) != proc.pid]
    assert others                                # the loop, the outputs, the sensor link...
    assert ctypes.CDLL(None, use_errno=True).tgkill(proc.pid, others[-1], signal.SIGTERM) == 0
    assert proc.wait(timeout=20) == 0
    _wait_for(lines, "shutting down")
    assert sum("shutting down" in line for line in lines) == 1
