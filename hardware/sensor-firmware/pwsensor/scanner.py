"""Scan, debounce and report: the sensor's logic, independent of the board.

``Scanner.step(now_ns)`` is called at >= 100 Hz (the reference loop runs at
200 Hz). A space changes state only after ``need`` consecutive scans agree
(3 by default: 15 ms at 200 Hz), then a CHG frame is written. A BEAT frame
(full occupancy) goes out every ``heartbeat_ms``. Every frame written takes
the next sequence number (0..65535, wrapping).

The scanner also measures itself (:class:`ScanTimer`): scans per window,
the longest scan and the longest gap between scan starts, sent as a STAT
frame when the host asks (``REQ STAT``).
"""

from pwsensor import protocol


class Debouncer:
    """Per-space counter debounce over 0/1 levels.

    ``stable`` is the accepted state (bytearray, 1 = token); a space flips
    after ``need`` (>= 1) consecutive raw scans that differ from it.
    """

    def __init__(self, spaces, need=3):
        if need < 1:
            raise ValueError("need must be >= 1, got {}".format(need))
        self.need = need
        self.stable = bytearray(spaces)
        self.count = bytearray(spaces)

    def prime(self, raw):
        """Accept ``raw`` as the stable state at once (at boot)."""
        for space in range(len(self.stable)):
            self.stable[space] = raw[space]
            self.count[space] = 0

    def update(self, raw):
        """Take one scan; return the spaces that changed, ascending."""
        changed = []
        stable, count = self.stable, self.count
        for space in range(len(stable)):
            if raw[space] == stable[space]:
                count[space] = 0
                continue
            count[space] += 1
            if count[space] >= self.need:
                stable[space] = raw[space]
                count[space] = 0
                changed.append(space)
        return changed


class ScanTimer:
    """Scan-loop figures over windows of ``window_ms`` (1..65535) milliseconds.

    ``scanned(start_ns, end_ns)`` is called once per scan with the monotonic
    times (ns) it started and ended. When a scan starts ``window_ms`` or more
    after the window began, the window's figures are latched as ``last``
    (window length in ms, scans started in it, worst scan in us, worst gap
    between scan starts in us) and a new window begins with that scan.
    """

    def __init__(self, window_ms=5000):
        if not 1 <= window_ms <= 65535:
            raise ValueError("window_ms must be in 1..65535, got {}".format(window_ms))
        self.window_ns = window_ms * 1000000
        self.start = None
        self.prev = None
        self.scans = 0
        self.worst_scan_us = 0
        self.worst_gap_us = 0
        self.last = None

    def scanned(self, start_ns, end_ns):
        """Count one scan that ran from ``start_ns`` to ``end_ns``."""
        if self.start is None:
            self.start = start_ns
        elif start_ns - self.start >= self.window_ns:
            self.last = ((start_ns - self.start) // 1000000, self.scans,
                         self.worst_scan_us, self.worst_gap_us)
            self.start = start_ns
            self.scans = self.worst_scan_us = self.worst_gap_us = 0
        if self.prev is not None:
            self.worst_gap_us = max(self.worst_gap_us, (start_ns - self.prev) // 1000)
        self.prev = start_ns
        self.scans += 1
        self.worst_scan_us = max(self.worst_scan_us, (end_ns - start_ns) // 1000)

    def figures(self, now_ns):
        """(window_ms, scans, worst_scan_us, worst_gap_us): the last complete
        window, or the one running now when none is complete yet."""
        if self.last is not None:
            return self.last
        if self.start is None:
            return (1, 0, 0, 0)
        return (max(1, (now_ns - self.start) // 1000000), self.scans,
                self.worst_scan_us, self.worst_gap_us)


class Reporter:
    """Builds frames with sequence numbers and hands them to ``write(bytes)``.

    ``reported`` is the occupancy the host has been told (bytearray).
    """

    def __init__(self, spaces, write, heartbeat_ms=1000, firmware=protocol.FIRMWARE_VERSION):
        self.spaces = spaces
        self.write = write
        self.heartbeat_ns = heartbeat_ms * 1000000
        self.firmware = firmware
        self.reported = bytearray(spaces)
        self.seq = 0
        self.last_beat = None

    def _next_seq(self):
        seq = self.seq
        self.seq = (seq + 1) % protocol.SEQ_MODULO
        return seq

    def changes(self, stable, spaces):
        """Report each space in ``spaces`` as now equal to ``stable[space]``."""
        for space in spaces:
            self.reported[space] = stable[space]
            self.write(protocol.change(self._next_seq(), self.reported, self.spaces, space))

    def tick(self, now_ns):
        """Send a heartbeat when ``heartbeat_ms`` have passed since the last one."""
        if self.last_beat is None or now_ns - self.last_beat >= self.heartbeat_ns:
            self.last_beat = now_ns
            self.write(protocol.heartbeat(self._next_seq(), self.reported, self.spaces))

    def answer(self, what, figures=None):
        """Answer a host request: "HELLO" -> HELLO frame, "SNAP" -> SNAP frame,
        "STAT" -> STAT frame from ``figures`` (see :meth:`ScanTimer.figures`)."""
        if what == "STAT" and figures is not None:
            window_ms, scans, worst_scan_us, worst_gap_us = figures
            self.write(protocol.scan_stats(self._next_seq(), window_ms, scans,
                                           worst_scan_us, worst_gap_us))
        elif what == "HELLO":
            self.write(protocol.hello(self._next_seq(), self.spaces, self.firmware))
        elif what == "SNAP":
            self.write(protocol.snapshot(self._next_seq(), self.reported, self.spaces))


class Scanner:
    """The whole sensor: ``read_raw(bytearray)`` fills raw levels; frames go to ``write``.

    spaces: 1..128; need: debounce scans; heartbeat_ms: heartbeat period;
    clock: monotonic nanoseconds (``time.monotonic_ns`` on the board), read
    when a scan ends to time it (None: scans are counted, not timed).
    """

    def __init__(self, read_raw, spaces, write, need=3, heartbeat_ms=1000,
                 firmware=protocol.FIRMWARE_VERSION, clock=None, window_ms=5000):
        self.read_raw = read_raw
        self.raw = bytearray(spaces)
        self.debouncer = Debouncer(spaces, need)
        self.reporter = Reporter(spaces, write, heartbeat_ms, firmware)
        self.requests = protocol.RequestReader()
        self.scans = 0
        self.clock = clock
        self.timer = ScanTimer(window_ms)
        self.now_ns = 0

    def start(self):
        """Read once and take it as the state (tokens already on the board at boot)."""
        self.read_raw(self.raw)
        self.debouncer.prime(self.raw)
        for space in range(len(self.raw)):
            self.reporter.reported[space] = self.raw[space]

    def step(self, now_ns):
        """One scan started at ``now_ns``: debounce, report changes, heartbeat
        when due; then time it."""
        self.now_ns = now_ns
        self.read_raw(self.raw)
        self.scans += 1
        changed = self.debouncer.update(self.raw)
        if changed:
            self.reporter.changes(self.debouncer.stable, changed)
        self.reporter.tick(now_ns)
        self.timer.scanned(now_ns, now_ns if self.clock is None else self.clock())

    def received(self, data):
        """Bytes from the host: answer every complete request in them."""
        for what in self.requests.feed(data):
            self.reporter.answer(what, self.timer.figures(self.now_ns))

    def connected(self):
        """The host asserted DTR: greet it with a HELLO and a SNAP."""
        self.reporter.answer("HELLO")
        self.reporter.answer("SNAP")
