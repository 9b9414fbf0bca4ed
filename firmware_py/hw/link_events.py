"""What the token-sensor link tells the game service (:class:`SensorOccupancy`,
:class:`SensorStatus`, :class:`LinkStats`) and the deadlines it keeps
(:class:`LinkTiming`). See :mod:`firmware_py.hw.sensor_link`."""
from __future__ import annotations

from dataclasses import dataclass, field

from . import sensor_protocol as sp


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
