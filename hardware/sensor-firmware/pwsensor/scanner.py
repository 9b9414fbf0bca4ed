"""Scan, debounce and report: the sensor's logic, independent of the board.

``Scanner.step(now_ns)`` is called at >= 100 Hz (the reference loop runs at
200 Hz). A space changes state only after ``need`` consecutive scans agree
(3 by default: 15 ms at 200 Hz), then a CHG frame is written. A BEAT frame
(full occupancy) goes out every ``heartbeat_ms``. Every frame written takes
the next sequence number (0..65535, wrapping).
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

    def answer(self, what):
        """Answer a host request: "HELLO" -> HELLO frame, "SNAP" -> SNAP frame."""
        if what == "HELLO":
            self.write(protocol.hello(self._next_seq(), self.spaces, self.firmware))
        elif what == "SNAP":
            self.write(protocol.snapshot(self._next_seq(), self.reported, self.spaces))


class Scanner:
    """The whole sensor: ``read_raw(bytearray)`` fills raw levels; frames go to ``write``.

    spaces: 1..128; need: debounce scans; heartbeat_ms: heartbeat period.
    """

    def __init__(self, read_raw, spaces, write, need=3, heartbeat_ms=1000,
                 firmware=protocol.FIRMWARE_VERSION):
        self.read_raw = read_raw
        self.raw = bytearray(spaces)
        self.debouncer = Debouncer(spaces, need)
        self.reporter = Reporter(spaces, write, heartbeat_ms, firmware)
        self.requests = protocol.RequestReader()
        self.scans = 0

    def start(self):
        """Read once and take it as the state (tokens already on the board at boot)."""
        self.read_raw(self.raw)
        self.debouncer.prime(self.raw)
        for space in range(len(self.raw)):
            self.reporter.reported[space] = self.raw[space]

    def step(self, now_ns):
        """One scan: debounce, report changes, heartbeat when due."""
        self.read_raw(self.raw)
        self.scans += 1
        changed = self.debouncer.update(self.raw)
        if changed:
            self.reporter.changes(self.debouncer.stable, changed)
        self.reporter.tick(now_ns)

    def received(self, data):
        """Bytes from the host: answer every complete request in them."""
        for what in self.requests.feed(data):
            self.reporter.answer(what)

    def connected(self):
        """The host asserted DTR: greet it with a HELLO and a SNAP."""
        self.reporter.answer("HELLO")
        self.reporter.answer("SNAP")
