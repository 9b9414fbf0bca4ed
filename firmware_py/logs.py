"""Logging for every command: a level from ``-v``/``--log-level``, and journald priorities.

Under systemd (``JOURNAL_STREAM`` names the very stream standard error is
connected to) each line starts with a syslog priority prefix such as ``<4>``
(warning), which journald takes as the record's priority, so
``journalctl -p warning -u patchwork-companion`` shows warnings and worse.
The unit's ``SyslogLevelPrefix=`` is on by default. Elsewhere lines read
``LEVEL name: message``.
"""
from __future__ import annotations

import logging
import os
import sys

#: Python level -> syslog priority (RFC 5424: 2 crit, 3 err, 4 warning, 6 info, 7 debug)
PRIORITIES = ((logging.CRITICAL, 2), (logging.ERROR, 3), (logging.WARNING, 4),
              (logging.INFO, 6), (logging.DEBUG, 7))
LEVELS = ("debug", "info", "warning", "error", "critical")


def priority(levelno: int) -> int:
    """The syslog priority of a Python log level (levels in between round down)."""
    for level, prio in PRIORITIES:
        if levelno >= level:
            return prio
    return 7


class JournalFormatter(logging.Formatter):
    """``<N>name: message`` where N is the record's syslog priority; continuation lines
    (tracebacks) carry the same prefix so journald keeps them at that priority."""

    def format(self, record: logging.LogRecord) -> str:
        """The record's text, each line prefixed with ``<priority>``."""
        text = super().format(record)
        prefix = f"<{priority(record.levelno)}>"
        return "\n".join(prefix + line for line in text.splitlines() or [""])


def under_journald(stream=None) -> bool:
    """True when ``stream`` (standard error) is the journal stream systemd gave us."""
    value = os.environ.get("JOURNAL_STREAM", "")
    if not value:
        return False
    stream = stream or sys.stderr
    try:
        dev, ino = (int(x) for x in value.split(":"))
        st = os.fstat(stream.fileno())
    except (ValueError, OSError, AttributeError):
        return False
    return (st.st_dev, st.st_ino) == (dev, ino)


def level_of(verbose: int, log_level: str | None, default: int = logging.WARNING) -> int:
    """The level from ``--log-level NAME`` (wins) or ``-v`` (once: info, twice: debug)."""
    if log_level:
        return getattr(logging, log_level.upper())
    if verbose >= 2:
        return logging.DEBUG
    if verbose == 1:
        return min(default, logging.INFO)
    return default


def setup(level: int, stream=None) -> logging.Handler:
    """Send log records at ``level`` and above to ``stream`` (standard error), journald
    style when under systemd; replaces handlers set before. Returns the handler."""
    stream = stream or sys.stderr
    handler = logging.StreamHandler(stream)
    if under_journald(stream):
        handler.setFormatter(JournalFormatter("%(name)s: %(message)s"))
    else:
        handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level)
    return handler
