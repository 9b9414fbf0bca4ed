"""The token-sensor link's decisions: :class:`LinkSession` turns bytes read and a time
(seconds) into events and requests to write (handshake, sequence gaps, snapshot
requests, silence, error rate, status changes). It does no I/O and reads no clock,
so tests step time by hand; :class:`~firmware_py.hw.sensor_link.SensorLink` runs it."""
from __future__ import annotations

import collections
from typing import Sequence

from . import sensor_protocol as sp
from .link_events import LinkStats, LinkTiming, SensorOccupancy, SensorStatus


BEATS_AHEAD = 256
"""Heartbeat lines of an unchanged board worked out when the link turns calm (about four
minutes of them: a calm link hands its heartbeats to the session once per this many)."""


class LinkSession:
    """The link's decisions from bytes, errors and time; no I/O, no clock.

    spaces: the number of sensor channels the game needs (None: accept the
    sensor's): a sensor reporting fewer in its HELLO is refused (see
    :meth:`need_spaces`). After each call, :meth:`drain` returns (events to
    post, bytes to write, reason to drop the connection or None).

    A HELLO this host cannot accept (another protocol version, extra fields,
    a firmware version too long or odd, too few spaces) drops the connection
    with a one-line diagnosis as the offline reason.
    """

    _PARSER_KEYS = {"frames": "frames_ok", "crc_errors": "crc_errors",
                    "garbage": "garbage_lines", "malformed": "malformed", "overlong": "overlong"}

    def __init__(self, spaces: int | None = None, timing: LinkTiming | None = None):
        self.spaces = spaces
        self.needed_by = "the game"             # who needs ``spaces``: "Patchwork" ...
        self.timing = timing or LinkTiming()
        self.parser = sp.FrameParser()
        self.counts = dict.fromkeys(("frames_ok", "crc_errors", "garbage_lines", "malformed",
                                     "overlong", "gaps", "reconnects", "requests_sent",
                                     "echoes"), 0)
        self.state: str | None = None
        self.reason = ""
        self._incompatible = False
        self.device: str | None = None
        self.hello: sp.Hello | None = None
        self.scan_stats: sp.ScanStats | None = None
        self._seen = sp.ParserStats()
        self._expect: int | None = None
        self._last_rx: float | None = None      # last good frame
        self._last_heard = 0.0                  # last good frame or frame-like line
        self._hello_asked = self._snap_asked = None
        self._snap_due = self._probed = False
        self._errors: collections.deque[float] = collections.deque()
        self._goods: collections.deque[float] = collections.deque()
        self._req_seq = 0
        self._opens = 0
        self._events: list = []
        self._out = bytearray()
        self._drop: str | None = None
        self._waiting: _Waiting | None = None   # since when no HELLO came, what was heard
        self.next_beat = b""                    # the next heartbeat's bytes if nothing changes
        self._board: tuple | None = None        # (occupied, spaces) of the heartbeats ahead
        self._ahead: collections.deque = collections.deque()   # (seq, line) of the next ones

    # ---------------------------------------------------------------- out
    def drain(self) -> tuple[list, bytes, str | None]:
        """Take the pending (events, bytes to write, drop reason)."""
        out = (self._events, bytes(self._out), self._drop)
        self._events, self._out, self._drop = [], bytearray(), None
        return out

    def stats(self, now: float) -> LinkStats:
        """The counters as a :class:`LinkStats` at time ``now``."""
        age = None if self._last_rx is None else max(0.0, now - self._last_rx)
        return LinkStats(**self.counts, last_frame_age=age, state=self.state or "offline",
                         device=self.device, scan=self.scan_stats)

    # ------------------------------------------------------------- inputs
    def connected(self, now: float, device: str) -> None:
        """A port was opened: forget the old stream, ask for HELLO and SNAP."""
        self._opens += 1
        if self._opens > 1:
            self.counts["reconnects"] += 1
        self.device, self.hello, self._expect = device, None, None
        self._forget_beats()
        if self._waiting is None:
            self._waiting = _Waiting(now)       # kept over reconnects until a HELLO is accepted
        self.scan_stats = None                  # another sensor may answer on this port
        self._last_heard, self._probed = now, False
        self._snap_asked, self._snap_due = None, False
        self._errors.clear()
        self._goods.clear()
        self.parser.reset()
        self._seen = sp.ParserStats()
        self._ask("HELLO", now)
        self.ask_snapshot(now)

    def disconnected(self, now: float, reason: str) -> None:
        """The port was closed (lost, dropped or stopped): say offline."""
        self.device, self.hello = None, None
        self._forget_beats()
        force, self._incompatible = self._incompatible, False
        self._set_state(now, "offline", f"sensor offline: {reason}", force)

    def no_device(self, now: float, tried: list[str], busy: list[str] = ()) -> None:
        """No device of the list could be opened; ``busy`` are those another
        process holds (their exclusive lock is taken)."""
        if busy:
            self._set_state(now, "offline", f"sensor port in use: {', '.join(busy)} is open in "
                            "another program (another companion?)")
            return
        shown = ", ".join(tried) if tried else "none present"
        self._set_state(now, "offline", f"sensor offline: no device ({shown})")

    def need_spaces(self, now: float, spaces: int | None, who: str = "the game") -> None:
        """The game now needs ``spaces`` sensor channels (None: any), ``who`` says
        which game for the message; a sensor already online with fewer is dropped."""
        self.spaces, self.needed_by = spaces, who
        if self.hello is not None:
            problem = self._spaces_problem(self.hello)
            if problem:
                self._refuse(problem)

    def received(self, now: float, data: bytes) -> None:
        """Bytes read from the port: parse, count errors, post occupancy.

        The heartbeat of an unchanged board is known before it comes (:attr:`next_beat`:
        the same bitmap, the next sequence number, canonical fields, so one exact byte
        string): when ``data`` is just that line, it is taken as the parser would take
        it without parsing it again (a calm link's heartbeats come through
        :meth:`calm_beats` and :meth:`beats` instead)."""
        if data == self.next_beat and self.hello is not None and self.parser.idle:
            self._beat_again(now)
            return
        frames = self.parser.feed(data)
        for diagnosis in self.parser.take_handshake_errors():
            self._refuse(diagnosis)
        if self._waiting is not None:
            self._waiting.heard(data, frames, self.parser.take_unreadable_hellos())
        errors = self._count_parser()
        for _ in range(errors):
            self._errors.append(now)
        if errors:
            self._last_heard = now              # talking, if badly: the error rate decides
            self.ask_snapshot(now)
        for frame in frames:
            self._frame(now, frame)

    def tick(self, now: float) -> None:
        """Time passed: handshake retries, probes, silence and error-rate checks."""
        if self.device is None:
            return
        quiet = now - self._last_heard
        if self.hello is None and now - self._hello_asked >= self.timing.retry_interval:
            self._ask("HELLO", now)             # frames before a HELLO are not trusted,
            self.ask_snapshot(now, force=True)  # so the snapshot is asked again after it
        if self._snap_due and now - self._snap_asked >= self.timing.request_holdoff:
            self.ask_snapshot(now)
        if quiet >= self.timing.probe_after and not self._probed:
            self._probed = True
            self.ask_snapshot(now, force=True)
        waiting = self._waiting
        if self.hello is None and waiting is not None and not waiting.said \
                and now - waiting.since >= self.timing.hello_timeout:
            waiting.said = True
            self._set_state(now, "offline", "sensor offline: " + waiting.diagnosis(
                self.timing.hello_timeout), force=True)
        if quiet >= self.timing.silence_timeout:
            self._drop = f"silent for {self.timing.silence_timeout:g} s"
            return
        self._health(now)

    def next_deadline(self) -> float | None:
        """When :meth:`tick` may next have something to do (clock seconds), or None
        when only bytes can change anything (no device): the probe or silence
        deadline, a handshake retry, a held-off snapshot request, an error or
        good frame leaving the error window."""
        if self.device is None:
            return None
        t = self.timing
        due = [self._last_heard + (t.silence_timeout if self._probed else t.probe_after)]
        if self.hello is None and self._hello_asked is not None:
            due.append(self._hello_asked + t.retry_interval)
        if self._snap_due and self._snap_asked is not None:
            due.append(self._snap_asked + t.request_holdoff)
        if self.hello is None and self._waiting is not None and not self._waiting.said:
            due.append(self._waiting.since + t.hello_timeout)
        if self._errors:
            due.append(self._errors[0] + t.error_window)
            if self._goods:
                due.append(self._goods[0] + t.error_window)
        return min(due)

    def ask_scan_stats(self, now: float) -> None:
        """Ask for a STAT frame (the sensor's measured scan rate); a sensor whose
        firmware predates it ignores the request, and nothing else changes."""
        if self.device is not None:
            self._ask("STAT", now)

    def ask_snapshot(self, now: float, force: bool = False) -> None:
        """Ask for a SNAP now, or once ``request_holdoff`` seconds have passed since
        the last ask (a full SNAP/BEAT frame arriving first cancels the wait)."""
        if self.device is None:
            return
        if force or self._snap_asked is None or now - self._snap_asked >= self.timing.request_holdoff:
            self._snap_asked, self._snap_due = now, False
            self._ask("SNAP", now)
        else:
            self._snap_due = True

    # ------------------------------------------------------------ frames
    def _count_parser(self) -> int:
        stats = self.parser.stats
        errors = 0
        for key, name in self._PARSER_KEYS.items():
            delta = getattr(stats, key) - getattr(self._seen, key)
            self.counts[name] += delta
            if key in ("crc_errors", "malformed", "overlong"):
                errors += delta
        self._seen = stats
        return errors

    def _frame(self, now: float, frame: sp.Frame) -> None:
        if isinstance(frame, sp.Request):
            self.counts["echoes"] += 1
            return
        self._last_rx = self._last_heard = now
        self._probed = False
        self._goods.append(now)
        self._check_seq(now, frame)
        if isinstance(frame, sp.Hello):
            self._on_hello(now, frame)
        elif isinstance(frame, sp.ScanStats):   # answers ask_scan_stats (selftest)
            self.scan_stats = frame
        elif self.hello is not None:
            self._on_occupancy(now, frame)

    def _check_seq(self, now: float, frame: sp.Frame) -> None:
        expected, self._expect = self._expect, (frame.seq + 1) % sp.SEQ_MODULO
        if isinstance(frame, sp.Hello) or expected is None or frame.seq == expected:
            return
        self.counts["gaps"] += 1
        self._errors.append(now)
        self.ask_snapshot(now)

    def _spaces_problem(self, hello: sp.Hello) -> str:
        if self.spaces is not None and hello.spaces < self.spaces:
            return (f"sensor has {hello.spaces} spaces, {self.needed_by} needs {self.spaces} "
                    "(check the sensor firmware and sensor.map)")
        return ""

    def _refuse(self, diagnosis: str) -> None:
        """Drop the connection: the sensor's handshake cannot be accepted (said as the reason)."""
        if self._drop is None:
            self._drop = diagnosis
        self._incompatible = True
        self.hello = None
        self._forget_beats()
        if self._waiting is not None:
            self._waiting.said = True           # this diagnosis is the precise one

    def _on_hello(self, now: float, hello: sp.Hello) -> None:
        if hello.protocol != sp.PROTOCOL_VERSION:
            self._refuse(f"sensor speaks protocol {hello.protocol}, host speaks "
                         f"{sp.PROTOCOL_VERSION} (update the host or the sensor firmware)")
        elif self._spaces_problem(hello):
            self._refuse(self._spaces_problem(hello))
        else:
            first = self.hello is None
            self.hello, self._waiting = hello, None
            if first:
                self._set_state(now, "online", f"sensor online: {self.device}, firmware "
                                f"{hello.firmware}, {hello.spaces} spaces")

    def _on_occupancy(self, now: float, frame) -> None:
        if frame.spaces != self.hello.spaces:
            self.counts["malformed"] += 1
            self._errors.append(now)
            self.ask_snapshot(now)
            return
        full = not isinstance(frame, sp.Change)
        if full:
            self._snap_asked, self._snap_due = None, False
        self._events.append(SensorOccupancy(frame.occupied, frame.seq, full, now))
        self._expect_beat(frame.occupied, frame.seq, frame.spaces)

    def _expect_beat(self, occupied: frozenset[int], seq: int, spaces: int) -> None:
        """Work out :attr:`next_beat`: the heartbeat after frame ``seq`` on this board
        (kept from the lines ahead when they are of this board and sequence, else made
        alone: a change's reading does not wait for the lines :meth:`calm_beats` makes)."""
        board = (occupied, spaces)
        first = (seq + 1) % sp.SEQ_MODULO
        ahead = self._ahead
        if self._board != board or not ahead or ahead[0][0] != first:
            ahead.clear()
            ahead.append((first, sp.heartbeat_line(first, spaces, _bitmap(occupied, spaces))))
            self._board = board
        self.next_beat = ahead[0][1]

    def _forget_beats(self) -> None:
        """No heartbeat is expected (a new connection, or none trusted)."""
        self.next_beat, self._board = b"", None
        self._ahead.clear()

    def calm_beats(self) -> list[bytes]:
        """The lines of the next :data:`BEATS_AHEAD` heartbeats expected (in order, made
        here as needed) while the link is calm: online, the handshake done, the parser
        between lines, no error in the window, nothing asked, pending or to drop. ``[]``
        when it is not calm. The reader may wait for these in a tight loop and hand the
        times they came to :meth:`beats`."""
        if not (self.next_beat and self.state == "online" and self.hello is not None
                and self.parser.idle and not self._errors and not self._events
                and not self._out and self._drop is None and not self._snap_due):
            return []
        ahead = self._ahead
        if len(ahead) < BEATS_AHEAD:
            occupied, spaces = self._board
            bitmap, last = _bitmap(occupied, spaces), ahead[-1][0]
            for i in range(1, BEATS_AHEAD - len(ahead) + 1):
                seq = (last + i) % sp.SEQ_MODULO
                ahead.append((seq, sp.heartbeat_line(seq, spaces, bitmap)))
        return [line for _, line in ahead]

    def beats(self, times: Sequence[float]) -> SensorOccupancy | None:
        """The first ``len(times)`` lines of :meth:`calm_beats` came at ``times`` (clock
        seconds, ascending), each alone: taken in one go as :meth:`received` and
        :meth:`tick` would take them one by one (the same counters, sequence, error
        window and deadlines). Returns the reading of the last one, None for no times;
        the readings before it are of the same board and not made. Raises ValueError
        for more times than lines ahead."""
        if not times:
            return None
        ahead = self._ahead
        if len(times) > len(ahead):
            raise ValueError(f"{len(times)} heartbeats taken, {len(ahead)} expected ahead")
        for _ in range(len(times) - 1):
            ahead.popleft()
        seq = ahead.popleft()[0]
        now = times[-1]
        horizon = now - self.timing.error_window
        goods = self._goods
        goods.extend(t for t in times if t >= horizon)
        while goods[0] < horizon:
            goods.popleft()
        self.counts["frames_ok"] += len(times)
        self._last_rx = self._last_heard = now
        self._probed = False
        self._expect = (seq + 1) % sp.SEQ_MODULO
        self._snap_asked, self._snap_due = None, False
        occupied, spaces = self._board
        self._expect_beat(occupied, seq, spaces)
        return SensorOccupancy(occupied, seq, True, now)

    def _beat_again(self, now: float) -> None:
        """The expected heartbeat came: what :meth:`received` does with a good BEAT frame
        (counted, heard, in sequence, the board posted as a full reading)."""
        occupied, spaces = self._board
        seq = self._ahead.popleft()[0]
        self.counts["frames_ok"] += 1           # the parser's own count is of lines it parsed
        self._last_rx = self._last_heard = now
        self._probed = False
        self._goods.append(now)
        self._expect = (seq + 1) % sp.SEQ_MODULO
        self._snap_asked, self._snap_due = None, False
        self._events.append(SensorOccupancy(occupied, seq, True, now))
        self._expect_beat(occupied, seq, spaces)

    # ------------------------------------------------------------- health
    def _health(self, now: float) -> None:
        horizon = now - self.timing.error_window
        for times in (self._errors, self._goods):
            while times and times[0] < horizon:
                times.popleft()
        errors = len(self._errors)
        if errors >= self.timing.dead_errors and errors > len(self._goods):
            self._drop = f"link error rate too high ({errors} errors in {self.timing.error_window:g} s)"
        elif self.state == "online" and errors >= self.timing.degrade_errors:
            self._set_state(now, "degraded", f"sensor degraded: {errors} link errors in "
                            f"{self.timing.error_window:g} s")
        elif self.state == "degraded" and errors == 0:
            self._set_state(now, "online", "sensor online: link errors cleared")

    def _set_state(self, now: float, state: str, reason: str, force: bool = False) -> None:
        """Post a status when the state changes (or, with ``force``, the reason)."""
        if state == self.state and not (force and reason != self.reason):
            return
        self.state, self.reason = state, reason
        self._events.append(SensorStatus(state != "offline", reason, self.stats(now),
                                         state == "degraded"))

    def _ask(self, what: str, now: float) -> None:
        if what == "HELLO":
            self._hello_asked = now
        self._out += sp.encode(sp.Request(self._req_seq, what))
        self._req_seq = (self._req_seq + 1) % sp.SEQ_MODULO
        self.counts["requests_sent"] += 1


class _Waiting:
    """What the link heard while no HELLO was accepted (since ``since``, link seconds):
    any bytes, good frames (the sensor talks but does not answer), HELLO lines with bytes
    outside printable ASCII; ``said``: the diagnosis was posted."""

    def __init__(self, since: float):
        self.since = since
        self.bytes = self.frames = 0
        self.bad_hello = b""
        self.said = False

    def heard(self, data: bytes, frames: list, unreadable_hellos: list[bytes]) -> None:
        """Count ``data`` read, the good ``frames`` in it and the HELLO lines refused for
        their bytes."""
        self.bytes += len(data)
        self.frames += sum(1 for f in frames if not isinstance(f, (sp.Request, sp.Hello)))
        if unreadable_hellos:
            self.bad_hello = unreadable_hellos[-1]

    def diagnosis(self, seconds: float) -> str:
        """What is wrong, from what was heard, and what to check (one line, short enough
        for the OLED's warning tag; the port is in the link's statistics)."""
        late = f"no HELLO in {seconds:g} s"
        if self.bad_hello:
            fields = self.bad_hello.split(b",")       # $PW,HELLO,seq,protocol,firmware,...
            shown = fields[4][:16] if len(fields) > 4 else self.bad_hello[:16]
            return (f"{late}: its HELLO has control/non-ASCII bytes (firmware {shown!r}): "
                    "flash the sensor firmware again")
        if self.frames:
            return (f"{late}: the sensor sends but never hears the host: check the Pi TX to "
                    "sensor RX wire, or flash the firmware again")
        if self.bytes:
            return f"{late}, only unreadable bytes: sensor.baud wrong? is this port the sensor?"
        return f"{late}, nothing heard: firmware flashed? cable? sensor.baud?"


def _bitmap(occupied: frozenset[int], spaces: int) -> bytes:
    """The heartbeat's bitmap field for ``occupied`` of ``spaces`` (ASCII hex)."""
    return sp.bitmap_hex(occupied, spaces).encode("ascii")
