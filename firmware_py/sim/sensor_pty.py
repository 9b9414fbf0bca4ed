"""The simulated sensor's USB plug: a raw pseudo-terminal pair behind a symlink, and
the bytes waiting to go out on it (see :mod:`firmware_py.sim.sensor`)."""
from __future__ import annotations

import os
import tty

from ..disk import replace_symlink

SPLIT_GAP = 0.001        # seconds between bytes when split_writes is on
MAX_PENDING = 16384      # bytes of output kept while the host does not read


class PtyLink:
    """One simulated USB plug: a raw pty pair and a symlink ``path`` to its slave."""

    def __init__(self, path: str):
        self.path = path
        self.master, self.slave = os.openpty()
        tty.setraw(self.slave)
        os.set_blocking(self.master, False)
        self.tty = os.ttyname(self.slave)
        if os.path.lexists(path) and not os.path.islink(path):
            self.close()
            raise FileExistsError(f"{path} exists and is not a symlink; not replacing it")
        replace_symlink(path, self.tty, durable=False)     # the simulator's link: no fsync

    def write(self, data: bytes) -> int:
        """Write what the pty takes now; returns bytes written (0 when full)."""
        try:
            return os.write(self.master, data)
        except BlockingIOError:
            return 0

    def read(self) -> bytes:
        """Bytes the host wrote, or b"" when none are waiting."""
        try:
            return os.read(self.master, 4096)
        except (BlockingIOError, OSError):
            return b""

    def close(self) -> None:
        """Pull the plug: remove the symlink (if still ours) and close both ends."""
        try:
            if os.readlink(self.path) == self.tty:
                os.unlink(self.path)
        except OSError:
            pass
        for fd in (self.master, self.slave):
            try:
                os.close(fd)
            except OSError:
                pass


class Output:
    """Bytes waiting for the pty; byte by byte with small gaps when ``split``."""

    def __init__(self):
        self.pending = bytearray()
        self.split = False
        self.next_at = 0.0

    def add(self, data: bytes) -> None:
        """Queue ``data``; the oldest bytes are dropped beyond MAX_PENDING."""
        self.pending += data
        if len(self.pending) > MAX_PENDING:
            del self.pending[:len(self.pending) - MAX_PENDING]

    def flush(self, link: PtyLink | None, now: float) -> None:
        """Write what is due at ``now`` to ``link`` (drop everything when unplugged)."""
        if link is None:
            self.pending.clear()
            return
        while self.pending and now >= self.next_at:
            size = 1 if self.split else len(self.pending)
            written = link.write(bytes(self.pending[:size]))
            if written <= 0:
                return
            del self.pending[:written]
            if self.split:
                self.next_at = now + SPLIT_GAP
                return

    def wake_at(self) -> float | None:
        """When :meth:`flush` next has work, or None."""
        return self.next_at if self.pending else None
