"""Why the journal could not be written: :class:`JournalError` and the short causes
the log and the OLED name (see :mod:`firmware_py.companion.journal`)."""
from __future__ import annotations

import errno
from pathlib import Path

REASONS = {errno.ENOSPC: "disk full", errno.EDQUOT: "disk full", errno.EROFS: "read-only",
           errno.EACCES: "not writable", errno.EPERM: "not writable", errno.EIO: "disk error"}


class JournalError(OSError):
    """The journal could not be written (disk full, read-only, failing, vanished folder).

    ``reason``: a short cause ("disk full", "read-only", "disk error", ...);
    ``notice``: the OLED text, e.g. "not saving: disk full (/var/lib/x)".
    """

    def __init__(self, message: str, reason: str, folder: Path):
        """``message`` for the log, ``reason`` its short cause, ``folder`` the journal's."""
        super().__init__(message)
        self.reason = reason
        self.notice = f"not saving: {reason} ({folder})"


def reason_of(exc: OSError) -> str:
    """A short name for an OS error: "disk full", "read-only", "disk error", or its text."""
    return REASONS.get(exc.errno, exc.strerror or type(exc).__name__)
