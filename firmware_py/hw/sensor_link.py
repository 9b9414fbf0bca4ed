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

The session is :mod:`.link_session`, the events and timing values
:mod:`.link_events`; both are importable from here too.
"""
from __future__ import annotations

import errno
import glob
import logging
import os
import select
import termios
import threading
import time
import weakref
from dataclasses import replace
from typing import Callable, Iterable

import serial

from .link_events import LinkStats, LinkTiming, SensorOccupancy, SensorStatus  # noqa: F401  (read from here)
from .link_session import LinkSession

LOG = logging.getLogger(__name__)
PORT_ERRORS = (OSError, serial.SerialException, termios.error, ValueError)


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
        self._fd: int | None = None              # the open port's file descriptor, if it has one
        self._heard: list[float] | tuple = ()    # a calm stretch's heartbeats, not yet handed on
        t = self.timing                          # a calm link's wait after each heartbeat
        self._calm_wait = min(t.read_timeout, max(0.01, t.probe_after))
        self._open_pipe()

    def _open_pipe(self) -> None:
        """The wake-up pipe: a request or a stop ends the reader's wait (closed by
        :meth:`stop`, or when the link is collected)."""
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_r, False)
        os.set_blocking(self._wake_w, False)
        self._close_pipe = weakref.finalize(self, _close_fds, self._wake_r, self._wake_w)

    def start(self) -> None:
        """Start the reader thread (once). Raises RuntimeError if already running."""
        if self._thread is not None:
            raise RuntimeError("SensorLink already started")
        if not self._close_pipe.alive:
            self._open_pipe()            # started again after a stop
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
                return                   # it may still wait on the pipe: closed when collected
            self._thread = None
        self._close_pipe()

    def stats(self) -> LinkStats:
        """The counters now (thread-safe), the heartbeats of a calm stretch not yet
        handed to the session (see :meth:`_calm`) included."""
        with self._lock:
            now = self.clock()
            stats, heard = self.session.stats(now), self._heard
            if not heard:
                return stats
            return replace(stats, frames_ok=stats.frames_ok + len(heard),
                           last_frame_age=max(0.0, now - heard[-1]))

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
        (our own wake-up pipe for a port read with ``select``; pyserial's
        ``cancel_read`` otherwise; a port with neither waits for its timeout)."""
        if self._close_pipe.alive:
            try:
                os.write(self._wake_w, b"!")
            except OSError:              # full: a wake-up is already pending
                pass
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
                self._fd = _fileno(port)
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
            data = self._calm()
            if data is None:
                data = self._read()
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

    def _calm(self) -> bytes | None:
        """An idle table's link: while it is calm (:meth:`LinkSession.calm_beats`) and
        nothing is asked of the reader, wait for the expected heartbeats in a loop that
        does nothing else (one ``select``, one read and a compare a second). The first
        heartbeat is handed to the session and its reading posted at once (as a reading
        comes within a second of anything that ends a stretch: a request, a new space
        count, a change); the others at the end, together, with the last reading (the
        ones between are of the same board). Returns the bytes read that were not the
        next heartbeat (b"" when a request, a deadline or the end of the lines ahead
        ended the loop), or None when the link is not calm (then the usual read runs).
        Raises one of :data:`PORT_ERRORS` when the device is gone."""
        fd = self._fd
        if fd is None or self._want_snapshot or self._want_stats or self._want_spaces:
            return None
        with self._lock:
            lines = self.session.calm_beats()
        if not lines:
            return None
        heard = self._heard = []         # beats not handed on yet, counted in :meth:`stats`
        wake, watch, only = self._wake_r, [fd, self._wake_r], [fd]
        wait, calm_wait = self._wait(), self._calm_wait
        clock, select_, got, first = self.clock, select.select, b"", True
        try:
            for line in lines:
                ready = select_(watch, [], [], wait)[0]
                if ready != only:
                    if wake in ready:
                        _drain(wake)
                    got = _read_fd(fd) if fd in ready else b""
                    break
                got = _read_fd(fd)
                if got != line:
                    break
                heard.append(clock())
                got, wait = b"", calm_wait
                if first:
                    first = False
                    self._hand_on(heard)
        finally:
            self._hand_on(heard)
            self._heard = ()
        return got

    def _hand_on(self, heard: list[float]) -> None:
        """Hand the heartbeats ``heard`` (times) to the session, empty the list and post
        the last one's reading."""
        with self._lock:
            reading = self.session.beats(heard)
            heard.clear()
        if reading is not None:
            try:
                self.post(reading)
            except Exception:  # the consumer's bug must not kill the reader
                LOG.exception("sensor link: post(%r) failed", reading)

    def _apply_spaces(self) -> None:
        """Hand a new space count the game needs to the session (on the reader thread)."""
        want, self._want_spaces = self._want_spaces, None
        if want is not None:
            self._step(lambda s, t: s.need_spaces(t, *want))

    def _read(self) -> bytes:
        """The bytes that came by the session's next deadline (b"" when none did, or a
        request woke the reader). A port with a file descriptor (a tty or pty) is waited
        on with one ``select`` beside the wake-up pipe and read with ``os.read``, all that
        is there in one go (pyserial's ``read`` runs through many times more code; a
        calm link waits in :meth:`_calm` instead). Other ports are read
        through pyserial. Raises one of :data:`PORT_ERRORS` when the device is gone."""
        fd = self._fd
        if fd is None:
            self._port.timeout = self._wait()
            data = self._port.read(self._port.in_waiting or 1)
            rest = self._port.in_waiting if data else 0
            if rest:        # woken by a frame's first byte: the rest of it in the same turn
                data += self._port.read(rest)
            return data
        ready, _, _ = select.select([fd, self._wake_r], [], [], self._wait())
        if self._wake_r in ready:
            _drain(self._wake_r)
        return _read_fd(fd) if fd in ready else b""

    def _wait(self) -> float:
        """Seconds the next read may wait: until the session's next deadline (at most
        ``read_timeout``, at least 10 ms), so that an idle link does not wake for nothing."""
        with self._lock:
            due = self.session.next_deadline()
            now = self.clock()
        wait = self.timing.read_timeout if due is None else due - now
        return min(self.timing.read_timeout, max(0.01, wait))

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
        port, self._port, self._fd = self._port, None, None
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


def _fileno(port) -> int | None:
    """The port's file descriptor, or None when it has none (a URL handler's port)."""
    try:
        return port.fileno()
    except (AttributeError, *PORT_ERRORS):
        return None


def _read_fd(fd: int) -> bytes:
    """All that waits on ``fd`` (a tty or pty said readable), in one ``os.read``; b"" when
    another reader took it first. Raises ``serial.SerialException`` when the device
    went away (readable, yet nothing to read: as pyserial says it)."""
    try:
        data = os.read(fd, 4096)
    except (BlockingIOError, InterruptedError):
        return b""
    if not data:
        raise serial.SerialException("device reports readiness to read but returned no "
                                     "data (device disconnected or multiple access on "
                                     "port?)")
    return data


def _close_fds(*fds: int) -> None:
    """Close the wake-up pipe's ends."""
    for fd in fds:
        try:
            os.close(fd)
        except OSError:
            pass


def _drain(fd: int) -> None:
    """Empty the wake-up pipe (non-blocking)."""
    try:
        while os.read(fd, 64):
            pass
    except OSError:
        pass


def _locked(exc: BaseException) -> bool:
    """True when opening failed because another process holds the port's lock."""
    return (getattr(exc, "errno", None) in (errno.EAGAIN, errno.EWOULDBLOCK, errno.EACCES)
            and "lock" in str(exc).lower())
