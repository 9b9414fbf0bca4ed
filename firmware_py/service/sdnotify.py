"""A tiny sd_notify(3) client: tell systemd that the service is ready, alive or stopping.

Standard library only. The protocol is one datagram per message on the
AF_UNIX socket named by ``$NOTIFY_SOCKET``: newline-separated ``KEY=VALUE``
assignments, UTF-8. A name starting with ``@`` is an abstract socket (the ``@``
stands for a leading NUL byte). When ``$NOTIFY_SOCKET`` is unset (tests, a
terminal, ``patchwork-companion demo``) every call is a quiet no-op.

The unit runs with ``Type=notify``, ``NotifyAccess=main`` and ``WatchdogSec=``,
so the service must:

* send :meth:`Notifier.ready` once its event loop runs and its first screen is
  shown (or systemd kills it at ``TimeoutStartSec=``);
* send :meth:`Notifier.watchdog` from the event loop itself, at least every
  :meth:`Notifier.watchdog_interval` / 2 seconds, never from a side thread that
  would keep a hung loop looking alive;
* send :meth:`Notifier.stopping` when it starts to shut down.

Sending never raises and never blocks for long: a lost notification must not
take the game down. A datagram socket blocks when the receiver's queue is full
(``net.unix.max_dgram_qlen``, 10 by default), so each send waits at most
``send_timeout`` seconds and is then dropped. Each method returns ``True`` when
the datagram was handed to the kernel.

Example::

    notifier = Notifier.from_environment()
    notifier.ready("game resumed")
    period = notifier.watchdog_period()      # seconds, or None: no watchdog
    ...
    notifier.watchdog()                      # from the event loop
    ...
    notifier.stopping()
"""

from __future__ import annotations

import logging
import os
import socket
import threading
from collections.abc import Mapping

__all__ = ["Notifier", "parse_address", "watchdog_interval_from"]

log = logging.getLogger(__name__)


def parse_address(value: str | None) -> str | bytes | None:
    """Turn a ``$NOTIFY_SOCKET`` value into an address for ``socket.sendto``.

    Args:
        value: the variable's text, or ``None`` when it is unset.

    Returns:
        ``None`` when unset or empty; ``bytes`` (a leading NUL, then the name)
        for an abstract socket written ``@name``; the path ``str`` for an
        absolute file-system socket.

    Raises:
        ValueError: for any other form (a relative path, a bare ``@``, or an
            address family this client does not speak, such as ``vsock:``).
    """
    if not value:
        return None
    if value.startswith("@"):
        if len(value) == 1:
            raise ValueError("NOTIFY_SOCKET '@' names no abstract socket")
        return b"\0" + value[1:].encode("utf-8", "surrogateescape")
    if value.startswith("/"):
        return value
    raise ValueError(
        f"NOTIFY_SOCKET {value!r} is neither an absolute path nor an abstract '@name'"
    )


def watchdog_interval_from(env: Mapping[str, str], pid: int | None = None) -> float | None:
    """The watchdog timeout systemd set for this process, in seconds.

    Reads ``$WATCHDOG_USEC`` (microseconds, a positive integer). When
    ``$WATCHDOG_PID`` is set it must equal ``pid`` (default: this process),
    otherwise the watchdog belongs to another process and the answer is
    ``None``.

    Args:
        env: the environment to read (``os.environ`` in the service).
        pid: the process id to match against ``$WATCHDOG_PID``.

    Returns:
        The timeout in seconds (e.g. ``15.0`` for ``WatchdogSec=15s``), or
        ``None`` when no watchdog is armed or a value does not parse.
    """
    raw = env.get("WATCHDOG_USEC")
    if not raw:
        return None
    owner = env.get("WATCHDOG_PID")
    if owner:
        try:
            if int(owner) != (os.getpid() if pid is None else pid):
                return None
        except ValueError:
            return None
    try:
        usec = int(raw)
    except ValueError:
        return None
    if usec <= 0:
        return None
    return usec / 1_000_000


class Notifier:
    """A connection-less sender of sd_notify messages.

    Build it with :meth:`from_environment` in the service, or directly with an
    address in tests. One socket is opened lazily and reused; calls are safe
    from any thread (a lock serialises them), although the watchdog should only
    ever be fed from the event loop.
    """

    def __init__(
        self,
        address: str | bytes | None,
        watchdog_seconds: float | None = None,
        *,
        send_timeout: float = 0.5,
    ) -> None:
        """Create a notifier.

        Args:
            address: a file-system path, an abstract name as bytes starting
                with NUL, or ``None`` for a no-op notifier (see
                :func:`parse_address`).
            watchdog_seconds: the watchdog timeout in seconds, or ``None``.
            send_timeout: the longest a send may wait for room in the
                receiver's queue, in seconds (> 0); then it is dropped.

        Raises:
            ValueError: if ``send_timeout`` is not positive.
        """
        if not send_timeout > 0:
            raise ValueError(f"send_timeout must be positive, got {send_timeout!r}")
        self._address = address
        self._watchdog_seconds = watchdog_seconds
        self._send_timeout = send_timeout
        self._sock: socket.socket | None = None
        self._lock = threading.Lock()
        self._warned = False

    @classmethod
    def from_environment(
        cls, env: Mapping[str, str] | None = None, *, unset_environment: bool = False
    ) -> Notifier:
        """Build a notifier from ``$NOTIFY_SOCKET`` and ``$WATCHDOG_USEC``.

        Args:
            env: the environment to read; default ``os.environ``.
            unset_environment: remove ``NOTIFY_SOCKET``, ``WATCHDOG_USEC`` and
                ``WATCHDOG_PID`` from ``os.environ`` afterwards, so that child
                processes do not inherit them (only when ``env`` is ``None``).

        Returns:
            A notifier; a no-op one when the variable is unset or malformed
            (a malformed value is logged as a warning, never raised).
        """
        source = os.environ if env is None else env
        try:
            address = parse_address(source.get("NOTIFY_SOCKET"))
        except ValueError as exc:
            log.warning("sd_notify disabled: %s", exc)
            address = None
        notifier = cls(address, watchdog_interval_from(source))
        if unset_environment and env is None:
            for key in ("NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID"):
                os.environ.pop(key, None)
        return notifier

    @property
    def enabled(self) -> bool:
        """True when there is a socket to notify (the service runs under systemd)."""
        return self._address is not None

    def watchdog_interval(self) -> float | None:
        """The watchdog timeout in seconds (``WatchdogSec=``), or ``None`` if unarmed."""
        return self._watchdog_seconds

    def watchdog_period(self) -> float | None:
        """How often to call :meth:`watchdog`: half the timeout, in seconds, or ``None``."""
        if self._watchdog_seconds is None:
            return None
        return self._watchdog_seconds / 2

    def notify(self, *assignments: str) -> bool:
        """Send one datagram made of ``KEY=VALUE`` assignments joined by newlines.

        Args:
            assignments: e.g. ``"READY=1"``, ``"STATUS=waiting for sensor"``.

        Returns:
            ``True`` if the datagram was sent; ``False`` when disabled or when
            sending failed or timed out (logged as a warning the first time,
            then at debug level).

        Raises:
            ValueError: if an assignment has no ``=`` or contains a newline
                (it would be read as a separate assignment).
        """
        for item in assignments:
            if "=" not in item or "\n" in item:
                raise ValueError(f"not a single KEY=VALUE assignment: {item!r}")
        if self._address is None or not assignments:
            return False
        payload = "\n".join(assignments).encode("utf-8", "surrogateescape")
        with self._lock:
            try:
                if self._sock is None:
                    self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC)
                    self._sock.settimeout(self._send_timeout)
                self._sock.sendto(payload, self._address)
            except OSError as exc:
                level = logging.DEBUG if self._warned else logging.WARNING
                self._warned = True
                log.log(level, "sd_notify to %r failed: %s", self._address, exc)
                self._close_locked()
                return False
        return True

    def ready(self, status: str | None = None) -> bool:
        """Send ``READY=1`` (with ``STATUS=`` in the same datagram if given)."""
        if status is None:
            return self.notify("READY=1")
        return self.notify("READY=1", "STATUS=" + _one_line(status))

    def watchdog(self) -> bool:
        """Send ``WATCHDOG=1``: the event loop is alive. Call it from the loop."""
        return self.notify("WATCHDOG=1")

    def status(self, text: str) -> bool:
        """Send ``STATUS=text`` (shown by ``systemctl status``); newlines become spaces."""
        return self.notify("STATUS=" + _one_line(text))

    def stopping(self, status: str | None = None) -> bool:
        """Send ``STOPPING=1`` (with ``STATUS=`` if given) when shutdown begins."""
        if status is None:
            return self.notify("STOPPING=1")
        return self.notify("STOPPING=1", "STATUS=" + _one_line(status))

    def extend_timeout(self, seconds: float) -> bool:
        """Send ``EXTEND_TIMEOUT_USEC=``: ask for ``seconds`` more to start or stop.

        Raises:
            ValueError: if ``seconds`` is not positive.
        """
        if not seconds > 0:
            raise ValueError(f"extend_timeout needs a positive number of seconds, got {seconds!r}")
        return self.notify(f"EXTEND_TIMEOUT_USEC={int(seconds * 1_000_000)}")

    def close(self) -> None:
        """Close the socket (a later call opens a new one)."""
        with self._lock:
            self._close_locked()

    def _close_locked(self) -> None:
        if self._sock is not None:
            try:
                self._sock.close()
            finally:
                self._sock = None

    def __enter__(self) -> Notifier:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Notifier(address={self._address!r}, watchdog_seconds={self._watchdog_seconds!r})"


def _one_line(text: str) -> str:
    return " ".join(str(text).splitlines())
