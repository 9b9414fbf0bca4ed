"""Host side of the token-sensor link: a reader thread over a pyserial port.

Two layers:

* :class:`LinkSession` decides everything (handshake, sequence gaps, snapshot
  requests, silence, error rate, status changes) from bytes and a time in
  seconds. It does no I/O and reads no clock, so tests step time by hand.
* :class:`SensorLink` owns the thread: it opens the first device that works,
  reads with short timeouts into the session, writes the session's requests,
  and hands the session's events to ``post``. The thread never touches game
  state; it only posts :class:`SensorOccupancy` and :class:`SensorStatus`.

The port is opened exclusively (pyserial's ``exclusive=True``, an ``flock``):
a second process trying the same sensor gets "sensor port in use" at once
instead of half of the frames. Opens are at least ``reopen_interval`` apart.

pyserial pitfalls handled here: ``readline()`` timeouts restart on every byte,
so we read ``in_waiting or 1`` bytes with a short timeout into our own parser;
``open()`` flushes what the device sent, so we ask for HELLO and SNAP at once;
a vanished device raises OSError, SerialException or termios.error; a Pico
sends nothing until DTR is asserted, and a pty refuses DTR with ENOTTY.
"""
from __future__ import annotations

import collections
import errno
import glob
import logging
import os
import termios
import threading
import time
from dataclasses import dataclass, field
from typing import Callable, Iterable

import serial

from . import sensor_protocol as sp

LOG = logging.getLogger(__name__)
PORT_ERRORS = (OSError, serial.SerialException, termios.error, ValueError)


# ------------------------------------------------------------------- events
@dataclass(frozen=True)
class LinkStats:
    """Link counters since :class:`SensorLink` started (all ints >= 0).

    ``last_frame_age`` is seconds since the last good frame (None before the
    first); ``state`` is "offline", "online" or "degraded"; ``device`` is the
    path or URL open now (None when closed); ``echoes`` counts our own
    requests read back (a pty or port that is not in raw mode); ``scan`` is
    the sensor's last :class:`~firmware_py.hw.sensor_protocol.ScanStats`
    (its measured scan rate and worst scan times), None until one arrived
    (firmware before 1.1.0 never sends one).
    """

    frames_ok: int = 0
    crc_errors: int = 0
    garbage_lines: int = 0
    malformed: int = 0
    overlong: int = 0
    gaps: int = 0
    reconnects: int = 0
    requests_sent: int = 0
    echoes: int = 0
    last_frame_age: float | None = None
    state: str = "offline"
    device: str | None = None
    scan: sp.ScanStats | None = None


@dataclass(frozen=True)
class SensorOccupancy:
    """The spaces that hold a token, as the sensor reports them.

    occupied: frozenset of spaces 0..spaces-1; seq: the frame's sequence
    number (0..65535); snapshot: True for a full SNAP/BEAT frame, False for a
    CHG frame (which still carries the full occupancy after the change);
    at: the link clock (seconds) when the frame was read.
    """

    occupied: frozenset[int]
    seq: int
    snapshot: bool
    at: float = 0.0


@dataclass(frozen=True)
class SensorStatus:
    """Posted when the link state changes.

    online: frames are flowing and trusted; degraded: online but the recent
    error rate is high (a warning before the link is declared dead); reason:
    one human-readable line, starting "sensor online", "sensor degraded",
    "sensor offline" (with the diagnosis of a refused handshake) or "sensor
    port in use" (another program holds the port); stats: the
    :class:`LinkStats` at that moment.
    """

    online: bool
    reason: str
    stats: LinkStats = field(default_factory=LinkStats)
    degraded: bool = False


@dataclass(frozen=True)
class LinkTiming:
    """Deadlines and thresholds of the link, in seconds and counts.

    silence_timeout: no good frame for this long -> offline (< 2 s);
    probe_after: quiet this long -> ask for a snapshot once;
    retry_interval: between attempts to open the device list, and between
    hello requests while waiting for the handshake; error_window: seconds of
    history for the error rate; degrade_errors: errors in the window that
    make the link "degraded"; dead_errors: errors in the window (and more
    errors than good frames) that drop the link; request_holdoff: minimum
    seconds between snapshot requests; read_timeout: the longest a read waits
    for bytes (it waits less when :meth:`LinkSession.next_deadline` is nearer,
    so an idle link wakes only for the sensor's heartbeat and real deadlines);
    reopen_interval: the least time between two opens of the port (a sensor
    refused at its handshake is reopened at most twice a second); hello_timeout:
    no HELLO accepted for this long (over reconnects) -> offline, with what was
    heard meanwhile and what to check (:meth:`LinkSession.tick`).
    """

    silence_timeout: float = 1.6
    probe_after: float = 1.1
    retry_interval: float = 0.5
    error_window: float = 5.0
    degrade_errors: int = 3
    dead_errors: int = 10
    request_holdoff: float = 0.25
    read_timeout: float = 2.0       # data wakes the reader at once; deadlines come sooner
    reopen_interval: float = 0.5
    hello_timeout: float = 10.0     # no HELLO accepted this long: say what is wrong


# ------------------------------------------------------------------ session
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
        """Bytes read from the port: parse, count errors, post occupancy."""
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


# ------------------------------------------------------------------- thread
def expand_devices(devices: Iterable[str]) -> list[str]:
    """The candidates to try, in order: URLs (``scheme://``) as given, glob
    patterns expanded (sorted), plain paths only when they exist now."""
    found: list[str] = []
    for entry in devices:
        if "://" in entry:
            found.append(entry)
        elif glob.has_magic(entry):
            found.extend(sorted(glob.glob(entry)))
        elif os.path.exists(entry):
            found.append(entry)
    return list(dict.fromkeys(found))


class SensorLink:
    """Reads the token sensor on a thread and posts events; never touches game state.

    devices: paths, glob patterns or pyserial URLs, tried in order (e.g.
    ``["/dev/patchwork-sensor", "/dev/serial/by-id/usb-*Pico*-if02"]``);
    baud: the serial speed (ignored by USB CDC and ptys); post: called on the
    reader thread with :class:`SensorOccupancy` and :class:`SensorStatus`;
    clock: monotonic seconds, for every deadline; spaces: expected board
    spaces or None; timing: :class:`LinkTiming`; serial_factory: replaces
    ``serial.serial_for_url`` in tests.
    """

    def __init__(self, devices: Iterable[str] | str, baud: int = 115200,
                 post: Callable[[object], None] = lambda event: None,
                 clock: Callable[[], float] = time.monotonic, *, spaces: int | None = None,
                 timing: LinkTiming | None = None, serial_factory=serial.serial_for_url):
        self.devices = [devices] if isinstance(devices, str) else list(devices)
        if not self.devices:
            raise ValueError("SensorLink needs at least one device path, pattern or URL")
        self.baud, self.post, self.clock = baud, post, clock
        self.timing = timing or LinkTiming()
        self.session = LinkSession(spaces, self.timing)
        self._factory = serial_factory
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._port = None
        self._next_try = 0.0
        self._last_open: float | None = None
        self._want_snapshot = False
        self._want_spaces: tuple | None = None
        self._logged = ""
        self._want_stats = False

    def start(self) -> None:
        """Start the reader thread (once). Raises RuntimeError if already running."""
        if self._thread is not None:
            raise RuntimeError("SensorLink already started")
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name="sensor-link", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 2.0) -> None:
        """Stop the thread, close the port and wait up to ``timeout`` seconds for it."""
        self._stop.set()
        self._wake_reader()
        if self._thread is not None:
            self._thread.join(timeout)
            if self._thread.is_alive():
                LOG.warning("sensor link thread did not stop within %.1f s", timeout)
            self._thread = None

    def stats(self) -> LinkStats:
        """The counters now (thread-safe)."""
        with self._lock:
            return self.session.stats(self.clock())

    def request_snapshot(self) -> None:
        """Ask the sensor for a full snapshot soon (thread-safe)."""
        self._want_snapshot = True
        self._wake_reader()

    def need_spaces(self, spaces: int | None, who: str = "the game") -> None:
        """The game now needs ``spaces`` sensor channels (thread-safe; see
        :meth:`LinkSession.need_spaces`); applied by the reader thread."""
        self._want_spaces = (spaces, who)
        self._wake_reader()

    def request_scan_stats(self) -> None:
        """Ask the sensor for fresh scan statistics soon (thread-safe); they
        appear in :meth:`stats` as ``scan`` when (and if) the sensor answers."""
        self._want_stats = True
        self._wake_reader()

    def _wake_reader(self) -> None:
        """End a read waiting for its deadline now, so a request goes out at once
        (pyserial's ``cancel_read``; a port without it waits for its timeout)."""
        cancel = getattr(self._port, "cancel_read", None)
        if cancel is not None:
            try:
                cancel()
            except PORT_ERRORS:
                pass

    # ---------------------------------------------------------- the thread
    def _run(self) -> None:
        try:
            while not self._stop.is_set():
                try:
                    if self._port is None:
                        self._try_open()
                    else:
                        self._service()
                except Exception as exc:  # a bug or an odd driver error: never die
                    LOG.exception("sensor link: unexpected error")
                    self._close(f"reader error ({exc.__class__.__name__}: {exc})")
                    self._stop.wait(self.timing.retry_interval)
        finally:
            self._close("link stopped")

    def _try_open(self) -> None:
        now = self.clock()
        if now < self._next_try:
            self._stop.wait(min(0.05, self._next_try - now))
            return
        self._next_try = now + self.timing.retry_interval
        self._apply_spaces()
        tried = expand_devices(self.devices)
        busy: list[str] = []
        for device in tried:
            port = self._open(device, busy)
            if port is not None:
                self._port, self._last_open = port, self.clock()
                self._step(lambda s, t: s.connected(t, device))
                return
        self._step(lambda s, t: s.no_device(t, tried, busy))

    def _open(self, device: str, busy: list[str]):
        """Open ``device`` exclusively (DTR asserted); None when it cannot be opened
        (appended to ``busy`` when another process holds it)."""
        try:
            port = self._factory(device, baudrate=self.baud, timeout=self.timing.read_timeout,
                                 write_timeout=0.5, dsrdtr=False, rtscts=False,
                                 exclusive=True, do_not_open=True)
            port.dtr = True          # applied by open(); pyserial ignores ENOTTY there
            port.open()
        except PORT_ERRORS as exc:
            if _locked(exc):
                busy.append(device)
            LOG.debug("cannot open %s: %s", device, exc)
            return None
        try:
            port.dtr = True          # again, for ports that apply it only once open
        except PORT_ERRORS:
            pass                     # a pty: ENOTTY/EINVAL
        return port

    def _service(self) -> None:
        try:
            self._pace()
            data = self._port.read(self._port.in_waiting or 1)
            rest = self._port.in_waiting if data else 0
            if rest:        # woken by a frame's first byte: the rest of it in the same turn
                data += self._port.read(rest)
        except PORT_ERRORS as exc:
            self._close(f"device lost ({exc.__class__.__name__}: {exc})")
            return
        want, self._want_snapshot = self._want_snapshot, False
        self._apply_spaces()
        want_stats, self._want_stats = self._want_stats, False

        def step(session: LinkSession, now: float) -> None:
            """Feed one chunk of bytes (or None for a timer tick) to the session and act on its output."""
            if data:
                session.received(now, data)
            if want:
                session.ask_snapshot(now, force=True)
            if want_stats:
                session.ask_scan_stats(now)
            session.tick(now)
        self._step(step)

    def _apply_spaces(self) -> None:
        """Hand a new space count the game needs to the session (on the reader thread)."""
        want, self._want_spaces = self._want_spaces, None
        if want is not None:
            self._step(lambda s, t: s.need_spaces(t, *want))

    def _pace(self) -> None:
        """Let the next read wait until the session's next deadline (at most
        ``read_timeout``), so that an idle link does not wake for nothing."""
        with self._lock:
            due = self.session.next_deadline()
            now = self.clock()
        wait = self.timing.read_timeout if due is None else due - now
        wait = min(self.timing.read_timeout, max(0.01, wait))
        if abs(wait - (getattr(self._port, "timeout", None) or 0.0)) > 0.005:
            self._port.timeout = wait

    def _step(self, action) -> None:
        """Run ``action(session, now)`` under the lock, then post, write and drop."""
        with self._lock:
            action(self.session, self.clock())
            events, out, drop = self.session.drain()
        self._post(events)
        if out and self._port is not None:
            try:
                self._port.write(out)
            except PORT_ERRORS as exc:
                drop = drop or f"device lost ({exc.__class__.__name__}: {exc})"
        if drop:
            self._close(drop)

    def _close(self, reason: str) -> None:
        port, self._port = self._port, None
        if port is None:
            return
        try:
            port.close()
        except PORT_ERRORS:
            pass
        # try again at once, then every retry_interval; never two opens within
        # reopen_interval (a sensor refused at its handshake: twice a second at most)
        now = self.clock()
        last = self._last_open if self._last_open is not None else now
        self._next_try = max(now, last + self.timing.reopen_interval)
        with self._lock:
            self.session.disconnected(self.clock(), reason)
            events, _, _ = self.session.drain()
        self._post(events)

    def _post(self, events: list) -> None:
        for event in events:
            if isinstance(event, SensorStatus) and event.reason != self._logged:
                self._logged = event.reason        # the log says each new state once
                calm = event.online or self._stop.is_set()   # stopping on purpose is no fault
                (LOG.info if calm else LOG.warning)("%s", event.reason)
            try:
                self.post(event)
            except Exception:  # the consumer's bug must not kill the reader
                LOG.exception("sensor link: post(%r) failed", event)


def _locked(exc: BaseException) -> bool:
    """True when opening failed because another process holds the port's lock."""
    return (getattr(exc, "errno", None) in (errno.EAGAIN, errno.EWOULDBLOCK, errno.EACCES)
            and "lock" in str(exc).lower())
