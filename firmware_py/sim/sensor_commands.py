"""The simulated sensor's commands (one JSON object per line on its stdin): each is
checked against the state it will find, then queued as steps (generators that
yield the seconds to wait before the next step). See :mod:`firmware_py.sim.sensor`
for the ops and their answers."""
from __future__ import annotations

import json
import time

from ..hw import sensor_protocol as sp
from .sensor_pty import SPLIT_GAP

SLIDE_STEP = 0.04        # seconds per space slid, at speed 1
AIR_TIME = 0.3           # seconds a lifted token is in the air, at speed 1
BANNER = (b"\x1b]0;\xf0\x9f\x90\x8dcode.py | 9.1.4\x1b\\soft reboot\r\n\r\n"
          b"Auto-reload is off.\r\ncode.py output:\r\n"
          b"Adafruit CircuitPython 9.1.4 on 2024-09-17; Raspberry Pi Pico with rp2040\r\n"
          b"Press any key to enter the REPL. Use CTRL-D to reload.")


class CommandError(ValueError):
    """A command that is malformed or impossible in the state it will find."""


class Commands:
    """The command half of :class:`~firmware_py.sim.sensor.SimSensor`: parsing, checking
    and answering commands, and the steps they queue. It reads and changes the sensor's
    ``plan``, ``board``, ``queue``, ``out`` and ``link`` and answers through ``reply``.
    """

    def command(self, line: bytes) -> None:
        """Check one JSON command, queue its steps and answer (now or when reached)."""
        cid = None
        try:
            cmd = json.loads(line)
            if not isinstance(cmd, dict):
                raise CommandError("a command must be a JSON object")
            cid = cmd.get("id")
            handler = getattr(self, f"_op_{cmd.get('op')}", None)
            if handler is None:
                raise CommandError(f"unknown op {cmd.get('op')!r}")
            steps, deferred = handler(cmd)
        except (ValueError, TypeError) as exc:
            self._answer(cid, {"ok": False, "error": str(exc)})
            return
        self.queue.append(steps)
        if not deferred:
            self._answer(cid, {"ok": True})

    def _answer(self, cid, body: dict) -> None:
        if cid is not None:
            body = {"id": cid, **body}
        self.reply(body)

    # op handlers: check the command, update the plan, return (steps, deferred)
    def _op_reset(self, cmd):
        tokens = cmd.get("tokens")
        if not isinstance(tokens, list) or len(tokens) != 2:
            raise CommandError("reset needs tokens: [space or null, space or null]")
        spaces = [None if t is None else self._space(t, "tokens[]") for t in tokens]
        self.plan = list(spaces)
        return self._steps_set(spaces), False

    def _op_move(self, cmd):
        token, to = self._token(cmd), self._space(cmd.get("to"), "to")
        style = cmd.get("style", "slide")
        if style not in ("slide", "lift"):
            raise CommandError(f"style must be 'slide' or 'lift', got {style!r}")
        start = self.plan[token]
        if start is None:
            raise CommandError(f"token {token} is not on the board; use place")
        self.plan[token] = to
        if style == "slide":
            return self._steps_slide(token, start, to), False
        return self._steps_lift(token, to), False

    def _op_lift(self, cmd):
        token = self._token(cmd)
        if self.plan[token] is None:
            raise CommandError(f"token {token} is already in the air")
        self.plan[token] = None
        return self._steps_put(token, None), False

    def _op_place(self, cmd):
        token, space = self._token(cmd), self._space(cmd.get("space"), "space")
        self.plan[token] = space
        return self._steps_put(token, space), False

    def _op_stuck(self, cmd):
        space, on = self._space(cmd.get("space"), "space"), bool(cmd.get("on", True))
        return self._steps_call(lambda: self._set_stuck(space, on)), False

    def _op_sync(self, cmd):
        return self._steps_sync(cmd.get("id")), True

    def _op_status(self, cmd):
        return self._steps_status(cmd.get("id")), True

    def _op_unplug(self, cmd):
        return self._steps_call(self.unplug), False

    def _op_replug(self, cmd):
        path = cmd.get("link", self.link_path)
        if not isinstance(path, str) or not path:
            raise CommandError("replug link must be a path")
        return self._steps_call(lambda: self.replug(path)), False

    def _op_silence(self, cmd):
        seconds = cmd.get("seconds")
        if not isinstance(seconds, (int, float)) or not 0 < seconds <= 60:
            raise CommandError(f"silence seconds must be in (0, 60], got {seconds!r}")
        return self._steps_call(lambda: self._silence(seconds)), False

    def _op_garbage(self, cmd):
        text = cmd.get("bytes")
        if not isinstance(text, str) or len(text) > 4096:
            raise CommandError("garbage bytes must be a string of at most 4096 characters")
        return self._steps_call(lambda: self._raw(text.encode("latin-1"))), False

    def _op_corrupt_next(self, cmd):
        count, index, bit = cmd.get("count", 1), cmd.get("byte", -8), cmd.get("bit", 0)
        if not all(isinstance(v, int) for v in (count, index, bit)) or count < 1 or not 0 <= bit < 8:
            raise CommandError("corrupt_next takes count >= 1, byte (index), bit 0..7")
        return self._steps_call(lambda: self._corrupt(count, index, bit)), False

    def _op_split_writes(self, cmd):
        on = bool(cmd.get("on", True))
        return self._steps_call(lambda: setattr(self.out, "split", on)), False

    def _op_banner(self, cmd):
        return self._steps_call(lambda: self._raw(BANNER)), False

    def _op_hello(self, cmd):
        fields = cmd.get("fields")
        if fields is not None and not (isinstance(fields, str) and fields.isascii()
                                       and "*" not in fields and "$" not in fields
                                       and len(fields) <= 400):
            raise CommandError("hello fields must be ASCII text without '*' or '$', or null")
        return self._steps_call(lambda: setattr(self, "hello_fields", fields)), False

    def _op_scan_stats(self, cmd):
        if cmd.get("off"):
            return self._steps_call(lambda: setattr(self, "scan_figures", None)), False
        names = ("window_ms", "scans", "worst_scan_us", "worst_gap_us")
        values = tuple(cmd.get(name) for name in names)
        try:
            sp.ScanStats(0, *values)
        except sp.FieldError as exc:
            raise CommandError(f"scan_stats: {exc}") from None
        return self._steps_call(lambda: setattr(self, "scan_figures", values)), False

    def _op_quit(self, cmd):
        return self._steps_call(lambda: setattr(self, "running", False)), False

    def _token(self, cmd) -> int:
        token = cmd.get("token")
        if token not in (0, 1) or isinstance(token, bool):
            raise CommandError(f"token must be 0 or 1, got {token!r}")
        return token

    def _space(self, value, name: str) -> int:
        if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value < self.spaces:
            raise CommandError(f"{name} must be a space 0..{self.spaces - 1}, got {value!r}")
        return value

    # ------------------------------------------------------------- steps
    def _steps_call(self, action):
        action()
        yield 0.0

    def _steps_set(self, spaces):
        for token, space in enumerate(spaces):
            self.board.covers[token] = set() if space is None else {space}
        self.emit_changes()
        yield 0.0

    def _steps_put(self, token, space):
        self.board.covers[token] = set() if space is None else {space}
        self.emit_changes()
        yield 0.0

    def _steps_slide(self, token, start, to):
        half = SLIDE_STEP / self.speed / 2
        step = 1 if to >= start else -1
        for space in range(start + step, to + step, step):
            self.board.covers[token] = {space - step, space}
            self.emit_changes()
            yield half
            self.board.covers[token] = {space}
            self.emit_changes()
            yield half

    def _steps_lift(self, token, to):
        self.board.covers[token] = set()
        self.emit_changes()
        yield AIR_TIME / self.speed
        self.board.covers[token] = {to}
        self.emit_changes()
        yield 0.0

    def _steps_sync(self, cid):
        give_up = time.monotonic() + 5.0
        while self.out.pending and self.link is not None and time.monotonic() < give_up:
            yield SPLIT_GAP
        self._answer(cid, {"ok": True})

    def _steps_status(self, cid):
        self._answer(cid, {"ok": True, "tokens": [self._where(0), self._where(1)],
                           "occupied": sorted(self.board.occupancy()), "seq": self.seq,
                           "link": self.link.path if self.link else None,
                           "tty": self.link.tty if self.link else None,
                           "sent": self.sent, "dropped": self.dropped,
                           "requests_bad": self.parser.stats.crc_errors + self.parser.stats.malformed})
        yield 0.0

    def _where(self, token: int) -> int | None:
        cover = self.board.covers[token]
        return max(cover) if cover else None
