"""The live feed's reading half: what the LAN page, the club bridge and the simulator use.

The game service publishes (:mod:`firmware_py.service.feed`, which also defines the
folder, the snapshot's format and the control socket); the processes that read it
use this module: :class:`FeedSubscriber` binds ``<feed folder>/feed/<name>.sock``
and receives snapshots, :func:`read_live` reads ``live.json`` (to start from, or to
catch up), :func:`service_running` tells whether the service still runs and
:func:`feed_age` how long ago it last published (or stopped), and
:func:`send_control` asks it to show a web PIN on the OLED.
"""
from __future__ import annotations

import fcntl
import json
import logging
import os
import socket
import time
from pathlib import Path

from ..service.feed import (CONTROL, FORMAT, LIVE_FILE, LOCK_FILE, SOCKETS, bind_datagram,
                            ensure_folder)

LOG = logging.getLogger(__name__)

__all__ = ["FeedSubscriber", "feed_age", "read_live", "send_control", "service_running"]


def service_running(folder: str | Path) -> bool | None:
    """Whether a game service publishes into ``folder`` now: True while one holds
    ``live.lock`` (from its first snapshot to its end), False when nobody does (it
    stopped, cleanly or not: the kernel lets a dead process's lock go), None when
    there is no lock file to test (nothing published there yet) or it cannot be
    opened. The test takes a shared lock for microseconds; never raises."""
    try:
        fd = os.open(Path(folder) / LOCK_FILE, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    except OSError:
        return None
    finally:
        os.close(fd)                       # lets our own shared lock go at once
    return False


def feed_age(folder: str | Path, now: float | None = None) -> float | None:
    """Seconds (``now``: Unix time, default the clock's) since ``live.json`` in
    ``folder`` was written: the last snapshot, or the moment the service stopped
    cleanly (it touches the file then); None when nothing was ever published."""
    try:
        mtime = (Path(folder) / LIVE_FILE).stat().st_mtime
    except OSError:
        return None
    return max(0.0, (time.time() if now is None else now) - mtime)


def read_live(folder: str | Path) -> dict | None:
    """The snapshot in ``<folder>/live.json``, or None when there is none (or it is not JSON)."""
    try:
        data = json.loads((Path(folder) / LIVE_FILE).read_bytes())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and data.get("format") == FORMAT else None


class FeedSubscriber:
    """A consumer's socket: binds ``<folder>/feed/<name>.sock`` (replacing a stale one).

    :meth:`receive` returns the next snapshot (a dict) or None on timeout;
    ``fileno()`` lets an event loop wait for it (e.g. asyncio's ``add_reader``),
    then :meth:`drain` returns the newest of what is queued. A datagram that only
    names ``live.json`` (a snapshot too big for one datagram) is read from there.
    Raises OSError when the folder cannot be created or the socket not bound.
    """

    def __init__(self, folder: str | Path, name: str):
        if not name.replace("-", "").replace("_", "").isalnum():
            raise ValueError(f"feed consumer name {name!r}: letters, digits, - and _ only")
        self.folder = Path(folder)
        self.path = self.folder / SOCKETS / f"{name}.sock"
        self.sock: socket.socket | None = None
        self.bind()

    def bind(self) -> None:
        """(Re)bind the socket; call again if ``path`` disappeared (the folder was recreated)."""
        if self.sock is not None:
            self.sock.close()
        ensure_folder(self.folder)
        self.sock = bind_datagram(self.path, receive_buffer=1 << 20)

    def fileno(self) -> int:
        """The socket's file descriptor (readable when a snapshot waits)."""
        return self.sock.fileno()

    def bound(self) -> bool:
        """True while our socket file is still in the folder."""
        return self.path.exists()

    def _decode(self, data: bytes) -> dict | None:
        try:
            snap = json.loads(data)
        except ValueError:
            LOG.warning("live feed: a datagram that is not JSON was ignored")
            return None
        if not isinstance(snap, dict) or snap.get("format") != FORMAT:
            return None
        if "file" in snap:
            return read_live(self.folder)
        return snap

    def receive(self, timeout: float | None = None) -> dict | None:
        """Wait up to ``timeout`` s (None: forever) for a snapshot; None on timeout."""
        self.sock.settimeout(timeout)
        try:
            data = self.sock.recv(1 << 20)
        except (socket.timeout, BlockingIOError):
            return None
        return self._decode(data)

    def drain(self) -> dict | None:
        """The newest snapshot queued (older ones are skipped), or None when none waits."""
        newest = None
        self.sock.settimeout(0.0)          # a timeout left by receive() would make recv wait
        while True:
            try:
                data = self.sock.recv(1 << 20)
            except (BlockingIOError, InterruptedError):
                return newest
            snap = self._decode(data)
            if snap is not None and (newest is None or _newer(snap, newest)):
                newest = snap

    def close(self) -> None:
        """Close the socket and remove its file."""
        if self.sock is not None:
            self.sock.close()
            self.sock = None
        try:
            self.path.unlink()
        except FileNotFoundError:
            pass


def _newer(a: dict, b: dict) -> bool:
    return a.get("run") != b.get("run") or a.get("seq", 0) >= b.get("seq", 0)


def send_control(folder: str | Path, pin: str, seconds: int) -> None:
    """Ask the running service (through ``<folder>/control.sock``) to show ``pin``.
    Raises OSError when no service listens there."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
        sock.sendto(json.dumps({"show_pin": pin, "seconds": seconds}).encode(),
                    socket.MSG_DONTWAIT, str(Path(folder) / CONTROL))


