"""Talking to the simulated sensor process from tests and demos:
:class:`SimSensorProcess` starts ``python -m firmware_py.sim.sensor`` and sends it
commands (see :mod:`firmware_py.sim.sensor` for the commands and their answers)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path


class SimSensorError(RuntimeError):
    """The simulated sensor answered ``ok: false``, died, or did not answer in time."""


class SimSensorProcess:
    """Runs ``python -m firmware_py.sim.sensor`` and talks to it over its stdin/stdout.

    link: path of the symlink (its folder must exist); spaces: 1..128;
    speed: gesture speed factor (> 0); heartbeat: seconds between BEATs.
    Use as a context manager, or call :meth:`start` and :meth:`close`.
    """

    def __init__(self, link: str | os.PathLike, spaces: int = 54, speed: float = 1.0,
                 heartbeat: float = 1.0, python: str = sys.executable):
        self.link = os.fspath(link)
        self.args = [python, "-m", "firmware_py.sim.sensor", "--spaces", str(spaces),
                     "--link", self.link, "--speed", str(speed), "--heartbeat", str(heartbeat)]
        self.proc: subprocess.Popen | None = None
        self.tty: str | None = None
        self._replies: dict = {}
        self._cond = threading.Condition()
        self._next_id = 0

    def start(self, timeout: float = 10.0) -> "SimSensorProcess":
        """Start the process; return once the link symlink exists. Raises SimSensorError."""
        root = str(Path(__file__).resolve().parents[2])
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(
            [root] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
        # its own process group: a Ctrl-C in the terminal stops the companion, which then
        # ends this process in order (quit, end of stdin); it never dies half-way on its own
        self.proc = subprocess.Popen(self.args, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     env=env, text=True, bufsize=1, process_group=0)
        threading.Thread(target=self._read_replies, name="sim-sensor-replies", daemon=True).start()
        ready = self._wait_reply("ready", timeout)
        self.tty = ready.get("tty")
        return self

    def command(self, op: str, timeout: float = 10.0, **fields) -> dict:
        """Send ``{"op": op, **fields}`` and return its answer; raises SimSensorError if not ok."""
        with self._cond:
            self._next_id += 1
            cid = self._next_id
        self._write({"id": cid, "op": op, **fields})
        reply = self._wait_reply(cid, timeout)
        if not reply.get("ok"):
            raise SimSensorError(f"{op}: {reply.get('error')}")
        return reply

    def sync(self, timeout: float = 10.0) -> dict:
        """Wait until every command sent before has run and its bytes are written."""
        return self.command("sync", timeout=timeout)

    def status(self, timeout: float = 10.0) -> dict:
        """Token positions, occupancy, seq, link and counters, once queued commands ran."""
        return self.command("status", timeout=timeout)

    def close(self, timeout: float = 5.0) -> None:
        """Ask the process to quit; kill it if it does not within ``timeout`` seconds."""
        if self.proc is None:
            return
        try:
            self._write({"op": "quit"})
            self.proc.stdin.close()
        except (OSError, ValueError, SimSensorError):
            pass
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.proc = None

    def __enter__(self) -> "SimSensorProcess":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.close()

    def _write(self, body: dict) -> None:
        if self.proc is None or self.proc.poll() is not None:
            raise SimSensorError("the simulated sensor is not running")
        self.proc.stdin.write(json.dumps(body) + "\n")
        self.proc.stdin.flush()

    def _read_replies(self) -> None:
        for line in self.proc.stdout:
            try:
                body = json.loads(line)
            except ValueError:
                continue
            key = "ready" if body.get("ready") else body.get("id")
            with self._cond:
                self._replies[key] = body
                self._cond.notify_all()
        with self._cond:
            self._replies["eof"] = True
            self._cond.notify_all()

    def _wait_reply(self, key, timeout: float) -> dict:
        deadline = time.monotonic() + timeout
        with self._cond:
            while key not in self._replies:
                left = deadline - time.monotonic()
                if "eof" in self._replies or left <= 0:
                    raise SimSensorError(f"no answer for {key!r} (process ended or timed out)")
                self._cond.wait(left)
            return self._replies.pop(key)
