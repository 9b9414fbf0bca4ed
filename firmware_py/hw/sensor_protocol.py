"""The token-sensor link protocol: one ASCII text frame per line.

Pure and standard library only (no I/O, no clock). The normative description,
with example frames, is ``hardware/protocol.md``. In short::

    $PW,<KIND>,<seq>,<fields...>*<CRC>\\r\\n

* the *body* is everything between ``$`` and ``*`` (it starts with ``PW,``);
* ``CRC`` is the CRC-16/CCITT-FALSE of the body's ASCII bytes, as 4 uppercase
  hex digits (poly 0x1021, init 0xFFFF, not reflected, no final xor);
* ``seq`` is decimal 0..65535; the sensor counts every frame it sends and wraps
  to 0 after 65535; the host numbers its requests with its own counter;
* bitmaps are ``ceil(spaces / 4)`` uppercase hex digits, most significant
  first; bit ``i`` set means space ``i`` holds a token.

Frame kinds (sensor -> host): ``HELLO`` (handshake), ``SNAP`` (full occupancy,
on request), ``BEAT`` (heartbeat: full occupancy, at least once a second),
``CHG`` (one space changed, with the full bitmap after the change), ``STAT``
(measured scan rate and worst scan times, on request; sensors from firmware
1.1.0 on, older ones ignore the request).
Host -> sensor: ``REQ`` with ``HELLO``, ``SNAP`` or ``STAT``.

Every field is canonical (no leading zeros, no sign, uppercase hex), so
``encode(decode_line(line))`` gives back the line's exact bytes.
"""
from __future__ import annotations

import binascii
import re
from dataclasses import dataclass, field

PROTOCOL_VERSION = 1
SEQ_MODULO = 65536
MAX_SPACES = 128
MAX_LINE = 120
START = b"$PW,"
REQUEST_WHAT = ("HELLO", "SNAP", "STAT")
STAT_MAX = 999999           #: the largest count or microseconds a STAT field carries (6 digits)

_FRAME_RE = re.compile(r"\$(PW,[^$*]*)\*([0-9A-F]{4})\Z")
_FIRMWARE_RE = re.compile(r"[0-9A-Za-z._+-]{1,16}\Z")
_UINT_RE = re.compile(r"(0|[1-9][0-9]{0,5})\Z")
_HEX_RE = re.compile(r"[0-9A-F]+\Z")
_UNPRINTABLE_RE = re.compile(rb"[^\x20-\x7e]")   # a byte outside printable ASCII


# --------------------------------------------------------------------- errors
class ProtocolError(ValueError):
    """A line that is not a valid frame (base class of every rejection)."""


class NotAFrame(ProtocolError):
    """The line holds no frame start ``$PW,`` (boot banner, noise, REPL output)."""


class FrameSyntaxError(ProtocolError):
    """The line starts a frame but is not ``$PW,...*XXXX`` in printable ASCII."""


class CrcMismatch(ProtocolError):
    """The CRC in the frame differs from the CRC of its body.

    ``expected`` is the CRC computed over the body, ``received`` the one sent.
    """

    def __init__(self, expected: int, received: int):
        self.expected = expected
        self.received = received
        super().__init__(f"CRC mismatch: body gives {expected:04X}, frame says {received:04X}")


class UnknownKind(ProtocolError):
    """The CRC is right but the frame kind is not one this protocol defines."""


class FieldError(ProtocolError):
    """A frame kind is known but a field is missing, extra or out of range."""


class HandshakeError(FieldError):
    """A HELLO this host cannot accept as protocol 1's: ``diagnosis`` is one line
    saying what was unexpected (for the OLED and the log)."""

    def __init__(self, diagnosis: str):
        self.diagnosis = diagnosis
        super().__init__(diagnosis)


# ------------------------------------------------------------------------ crc
def crc16_ccitt_false(data: bytes, crc: int = 0xFFFF) -> int:
    """CRC-16/CCITT-FALSE of ``data`` (0..0xFFFF); ``b"123456789"`` gives 0x29B1.

    Polynomial 0x1021, not reflected, no final XOR, ``crc`` the start value (0xFFFF,
    or a CRC so far: the CRC is incremental). Computed by ``binascii.crc_hqx`` in C:
    the bitwise rule of hardware/protocol.md gives the same value (a test checks),
    at a fraction of the host's CPU per frame."""
    return binascii.crc_hqx(data, crc)


# --------------------------------------------------------------------- frames
def _check_seq(seq: int) -> None:
    if not isinstance(seq, int) or not 0 <= seq < SEQ_MODULO:
        raise FieldError(f"seq must be an int in 0..{SEQ_MODULO - 1}, got {seq!r}")


def _check_spaces(spaces: int) -> None:
    if not isinstance(spaces, int) or not 1 <= spaces <= MAX_SPACES:
        raise FieldError(f"spaces must be an int in 1..{MAX_SPACES}, got {spaces!r}")


def _freeze_occupied(frame, occupied) -> None:
    occ = frozenset(occupied)
    bad = sorted(s for s in occ if not isinstance(s, int) or not 0 <= s < frame.spaces)
    if bad:
        raise FieldError(f"occupied spaces {bad} outside 0..{frame.spaces - 1}")
    object.__setattr__(frame, "occupied", occ)


HELLO_FIELDS = 4
"""Fields of a HELLO after its kind: seq, protocol, firmware, spaces."""
HELLO_OPTIONS: tuple[str, ...] = ()
"""Names of the optional ``name=value`` fields ``hardware/protocol.md`` documents
after a HELLO's space count (none in protocol 1 yet). A documented one is kept
in :attr:`Hello.options`; any other extra field is an unexpected handshake."""


@dataclass(frozen=True)
class Hello:
    """Handshake from the sensor: protocol version, firmware version, space count.

    ``firmware`` is 1..16 characters of ``[0-9A-Za-z._+-]``; ``spaces`` 1..128;
    ``options``: documented optional ``(name, value)`` fields (see
    :data:`HELLO_OPTIONS`), in the order sent.
    """

    seq: int
    protocol: int
    firmware: str
    spaces: int
    options: tuple[tuple[str, str], ...] = ()
    KIND = "HELLO"

    def __post_init__(self):
        _check_seq(self.seq)
        _check_spaces(self.spaces)
        if not isinstance(self.protocol, int) or not 0 <= self.protocol < SEQ_MODULO:
            raise FieldError(f"protocol version must be an int in 0..65535, got {self.protocol!r}")
        if not isinstance(self.firmware, str) or not _FIRMWARE_RE.match(self.firmware):
            raise FieldError(f"firmware version must be 1..16 of [0-9A-Za-z._+-], got {self.firmware!r}")


@dataclass(frozen=True)
class Snapshot:
    """Full occupancy sent on request: ``occupied`` is a frozenset of spaces 0..spaces-1."""

    seq: int
    spaces: int
    occupied: frozenset[int] = field(default_factory=frozenset)
    KIND = "SNAP"

    def __post_init__(self):
        _check_seq(self.seq)
        _check_spaces(self.spaces)
        _freeze_occupied(self, self.occupied)


@dataclass(frozen=True)
class Heartbeat:
    """Full occupancy sent at least once a second; the host trusts it like a snapshot."""

    seq: int
    spaces: int
    occupied: frozenset[int] = field(default_factory=frozenset)
    KIND = "BEAT"

    def __post_init__(self):
        _check_seq(self.seq)
        _check_spaces(self.spaces)
        _freeze_occupied(self, self.occupied)


@dataclass(frozen=True)
class Change:
    """Space ``space`` became occupied (``now_occupied``) or free; ``occupied`` is the
    full occupancy after the change, so it must agree with ``now_occupied``."""

    seq: int
    spaces: int
    space: int
    now_occupied: bool
    occupied: frozenset[int] = field(default_factory=frozenset)
    KIND = "CHG"

    def __post_init__(self):
        _check_seq(self.seq)
        _check_spaces(self.spaces)
        _freeze_occupied(self, self.occupied)
        if not isinstance(self.space, int) or not 0 <= self.space < self.spaces:
            raise FieldError(f"changed space must be in 0..{self.spaces - 1}, got {self.space!r}")
        if (self.space in self.occupied) != bool(self.now_occupied):
            raise FieldError(f"space {self.space} is {'ON' if self.now_occupied else 'OFF'} "
                             "but the bitmap says otherwise")


@dataclass(frozen=True)
class ScanStats:
    """The sensor's own measurement of its scan loop, sent on ``REQ STAT``.

    ``window_ms`` (1..65535): the length of the measurement window the figures
    cover (the last complete one, or the time since boot before the first is
    complete); ``scans`` (0..999999): scans started in that window;
    ``worst_scan_us`` (0..999999): the longest single scan (reading every
    space, debouncing, writing its frames), in microseconds;
    ``worst_gap_us`` (0..999999): the longest time between the starts of two
    consecutive scans, in microseconds (what a token waits at worst before it
    is read). Values above 999999 are sent as 999999.
    """

    seq: int
    window_ms: int
    scans: int
    worst_scan_us: int
    worst_gap_us: int
    KIND = "STAT"

    def __post_init__(self):
        _check_seq(self.seq)
        if not isinstance(self.window_ms, int) or not 1 <= self.window_ms < SEQ_MODULO:
            raise FieldError(f"window_ms must be an int in 1..65535, got {self.window_ms!r}")
        for name in ("scans", "worst_scan_us", "worst_gap_us"):
            value = getattr(self, name)
            if not isinstance(value, int) or not 0 <= value <= STAT_MAX:
                raise FieldError(f"{name} must be an int in 0..{STAT_MAX}, got {value!r}")

    @property
    def rate_hz(self) -> float:
        """Scans per second over the window (``scans * 1000 / window_ms``)."""
        return self.scans * 1000.0 / self.window_ms


@dataclass(frozen=True)
class Request:
    """Host -> sensor: ``what`` is ``"HELLO"`` (send a Hello) or ``"SNAP"`` (send a Snapshot)."""

    seq: int
    what: str
    KIND = "REQ"

    def __post_init__(self):
        _check_seq(self.seq)
        if self.what not in REQUEST_WHAT:
            raise FieldError(f"request must be one of {REQUEST_WHAT}, got {self.what!r}")


Frame = Hello | Snapshot | Heartbeat | Change | ScanStats | Request
OCCUPANCY_FRAMES = (Snapshot, Heartbeat, Change)


# ------------------------------------------------------------------- bitmaps
def bitmap_hex(occupied: frozenset[int], spaces: int) -> str:
    """The occupancy as ``ceil(spaces/4)`` uppercase hex digits (bit i = space i)."""
    mask = 0
    for space in occupied:
        mask |= 1 << space
    return f"{mask:0{(spaces + 3) // 4}X}"


def parse_bitmap(text: str, spaces: int) -> frozenset[int]:
    """Inverse of :func:`bitmap_hex`; raises :class:`FieldError` on a wrong width,
    a non-hex digit or a bit at or above ``spaces``."""
    width = (spaces + 3) // 4
    if len(text) != width or not _HEX_RE.match(text):
        raise FieldError(f"bitmap must be {width} uppercase hex digits for {spaces} spaces, got {text!r}")
    mask = int(text, 16)
    if mask >> spaces:
        raise FieldError(f"bitmap {text} sets a bit at or above space {spaces}")
    return frozenset(i for i in range(spaces) if mask >> i & 1)


# ------------------------------------------------------------------ encoding
def frame_body(frame: Frame) -> str:
    """The body of ``frame`` (between ``$`` and ``*``), e.g. ``"PW,REQ,3,SNAP"``."""
    head = f"PW,{frame.KIND},{frame.seq}"
    if isinstance(frame, Hello):
        extra = "".join(f",{name}={value}" for name, value in frame.options)
        return f"{head},{frame.protocol},{frame.firmware},{frame.spaces}{extra}"
    if isinstance(frame, Request):
        return f"{head},{frame.what}"
    if isinstance(frame, ScanStats):
        return f"{head},{frame.window_ms},{frame.scans},{frame.worst_scan_us},{frame.worst_gap_us}"
    bitmap = bitmap_hex(frame.occupied, frame.spaces)
    if isinstance(frame, Change):
        state = "ON" if frame.now_occupied else "OFF"
        return f"{head},{frame.spaces},{frame.space},{state},{bitmap}"
    return f"{head},{frame.spaces},{bitmap}"


def encode(frame: Frame) -> bytes:
    """The complete line for ``frame``: ``$`` body ``*`` CRC ``\\r\\n`` as ASCII bytes."""
    return line_of(frame_body(frame).encode("ascii"))


def line_of(body: bytes) -> bytes:
    """The complete line for a frame ``body`` (ASCII, between ``$`` and ``*``)."""
    return b"$%s*%04X\r\n" % (body, binascii.crc_hqx(body, 0xFFFF))


def heartbeat_line(seq: int, spaces: int, bitmap: bytes) -> bytes:
    """The BEAT line of sequence number ``seq`` (0..65535) for a board of ``spaces`` whose
    occupancy is ``bitmap`` (:func:`bitmap_hex` as ASCII bytes): what :func:`encode` gives
    for ``Heartbeat(seq, spaces, occupied)``, without building the frame."""
    return line_of(b"PW,BEAT,%d,%d,%s" % (seq, spaces, bitmap))


# ------------------------------------------------------------------ decoding
def _uint(text: str, name: str) -> int:
    if not _UINT_RE.match(text):
        raise FieldError(f"{name} must be a canonical decimal number, got {text!r}")
    return int(text)


def _expect(fields: list[str], count: int, kind: str) -> None:
    if len(fields) != count:
        raise FieldError(f"{kind} frame needs {count} fields after the kind, got {len(fields)}")


def _decode_fields(kind: str, f: list[str]) -> Frame:
    if kind == "HELLO":
        return _decode_hello(f)
    if kind == "STAT":
        _expect(f, 5, kind)
        return ScanStats(*(_uint(text, name) for text, name in zip(
            f, ("seq", "window_ms", "scans", "worst_scan_us", "worst_gap_us"))))
    if kind == "REQ":
        _expect(f, 2, kind)
        return Request(_uint(f[0], "seq"), f[1])
    if kind in ("SNAP", "BEAT"):
        _expect(f, 3, kind)
        spaces = _uint(f[1], "spaces")
        _check_spaces(spaces)
        cls = Snapshot if kind == "SNAP" else Heartbeat
        return cls(_uint(f[0], "seq"), spaces, parse_bitmap(f[2], spaces))
    if kind == "CHG":
        _expect(f, 5, kind)
        spaces = _uint(f[1], "spaces")
        _check_spaces(spaces)
        if f[3] not in ("ON", "OFF"):
            raise FieldError(f"change state must be ON or OFF, got {f[3]!r}")
        return Change(_uint(f[0], "seq"), spaces, _uint(f[2], "space"), f[3] == "ON",
                      parse_bitmap(f[4], spaces))
    raise UnknownKind(f"unknown frame kind {kind!r}")


def _decode_hello(f: list[str]) -> Hello:
    """A HELLO's fields -> :class:`Hello`; anything unexpected raises
    :class:`HandshakeError` with a one-line diagnosis."""
    if len(f) < HELLO_FIELDS:
        raise HandshakeError(f"unexpected hello: {len(f)} fields, protocol {PROTOCOL_VERSION} "
                             f"has {HELLO_FIELDS} (seq, protocol, firmware, spaces)")
    extra = f[HELLO_FIELDS:]
    options = tuple(tuple(x.split("=", 1)) for x in extra if "=" in x)
    unknown = [x for x in extra if "=" not in x or x.split("=", 1)[0] not in HELLO_OPTIONS]
    if unknown:
        shown = ", ".join(repr(x[:12]) for x in unknown[:3])
        raise HandshakeError(f"unexpected hello: {len(f)} fields, protocol {PROTOCOL_VERSION} "
                             f"has {HELLO_FIELDS} (extra: {shown})")
    firmware = f[2]
    if not 1 <= len(firmware) <= 16:
        raise HandshakeError(f"unexpected hello: firmware version of {len(firmware)} "
                             "characters (at most 16)")
    if not _FIRMWARE_RE.match(firmware):
        raise HandshakeError(f"unexpected hello: firmware version {firmware!r} has characters "
                             "other than 0-9 A-Z a-z . _ + -")
    for name, text in (("seq", f[0]), ("protocol", f[1]), ("space count", f[3])):
        if not _UINT_RE.match(text):
            raise HandshakeError(f"unexpected hello: {name} {text[:12]!r} is not a number")
    try:
        return Hello(int(f[0]), int(f[1]), firmware, int(f[3]), options)
    except FieldError as exc:
        raise HandshakeError(f"unexpected hello: {exc}") from None


def decode_line(line: bytes | str) -> Frame:
    """Decode one complete line (trailing CR/LF allowed, nothing else around it).

    Raises :class:`NotAFrame`, :class:`FrameSyntaxError`, :class:`CrcMismatch`,
    :class:`UnknownKind` or :class:`FieldError` (all :class:`ProtocolError`).
    """
    if isinstance(line, (bytes, bytearray)):
        if _UNPRINTABLE_RE.search(line.rstrip(b"\r\n")):
            raise FrameSyntaxError("frame holds bytes outside printable ASCII")
        line = line.decode("ascii")
    line = line.rstrip("\r\n")
    if not line.startswith("$PW,"):
        raise NotAFrame(f"no frame start '$PW,' in {line[:40]!r}")
    match = _FRAME_RE.match(line)
    if match is None:
        raise FrameSyntaxError(f"not '$PW,...*XXXX': {line[:40]!r}")
    body, crc_text = match.groups()
    expected = crc16_ccitt_false(body.encode("ascii"))
    if expected != int(crc_text, 16):
        raise CrcMismatch(expected, int(crc_text, 16))
    fields = body.split(",")
    return _decode_fields(fields[1], fields[2:])


# -------------------------------------------------------------------- parser
@dataclass(frozen=True)
class ParserStats:
    """Counters of a :class:`FrameParser` since it was made (or reset).

    ``frames``: good frames; ``crc_errors``: dropped for a wrong CRC;
    ``malformed``: started with ``$PW,`` but were not valid (syntax, kind,
    fields); ``garbage``: non-empty lines with no frame start (banners,
    noise); ``overlong``: times the line buffer overflowed and was cut;
    ``noise_prefixes``: good frames that had noise glued before them.
    """

    frames: int = 0
    crc_errors: int = 0
    malformed: int = 0
    garbage: int = 0
    overlong: int = 0
    noise_prefixes: int = 0


class FrameParser:
    """Incremental parser: bytes in any chunking -> decoded frames, never a bad one.

    ``max_line`` (bytes, >= 48) bounds the line buffer: a longer line is cut,
    keeping any frame start ``$`` in its tail. Rejected lines are counted in
    :attr:`stats` and the last one kept in :attr:`last_error`.
    """

    def __init__(self, max_line: int = MAX_LINE):
        if max_line < 48:
            raise ValueError(f"max_line must be >= 48 bytes, got {max_line}")
        self.max_line = max_line
        self.last_error: ProtocolError | None = None
        self.reset()

    def reset(self) -> None:
        """Forget buffered bytes and zero the counters (e.g. after a reconnect)."""
        self._buf = bytearray()
        self._cut = False
        self.handshake_errors: list[str] = []
        self.unreadable_hellos: list[bytes] = []
        self._counts = dict.fromkeys(ParserStats.__dataclass_fields__, 0)

    @property
    def idle(self) -> bool:
        """True when no part of a line waits in the buffer (the next bytes start a line)."""
        return not self._buf and not self._cut

    @property
    def stats(self) -> ParserStats:
        """A frozen copy of the counters."""
        return ParserStats(**self._counts)

    def feed(self, data: bytes) -> list[Frame]:
        """Add received bytes; return the frames completed by them, in order."""
        self._buf += data
        frames: list[Frame] = []
        while True:
            end = _line_end(self._buf)
            if end < 0:
                break
            line = bytes(self._buf[:end])
            del self._buf[:end + 1]
            frame = self._line(line)
            if frame is not None:
                frames.append(frame)
        if len(self._buf) > self.max_line:
            self._overflow()
        return frames

    def take_unreadable_hellos(self) -> list[bytes]:
        """HELLO lines dropped since the last call because they hold bytes outside printable
        ASCII (then forgotten): one on a noisy wire is noise, only HELLOs is a bad firmware."""
        out, self.unreadable_hellos = self.unreadable_hellos, []
        return out

    def take_handshake_errors(self) -> list[str]:
        """The diagnoses of HELLO lines rejected since the last call (then forgotten)."""
        out, self.handshake_errors = self.handshake_errors, []
        return out

    def _overflow(self) -> None:
        self._counts["overlong"] += 1
        if START + b"HELLO," in self._buf:
            self.handshake_errors.append(f"unexpected hello: a line longer than {self.max_line} "
                                         "bytes (a long firmware version?)")
        start = self._buf.rfind(b"$")
        if 0 < start and len(self._buf) - start <= self.max_line:
            del self._buf[:start]
        else:
            self._buf.clear()
            self._cut = True

    def _line(self, line: bytes) -> Frame | None:
        cut, self._cut = self._cut, False
        start = line.rfind(START)
        if start < 0:
            if line.strip() and not cut:
                self._reject("garbage", NotAFrame(f"no frame start in {line[:40]!r}"))
            return None
        try:
            frame = decode_line(line[start:])
        except CrcMismatch as exc:
            return self._reject("crc_errors", exc)
        except HandshakeError as exc:
            self.handshake_errors.append(exc.diagnosis)
            return self._reject("malformed", exc)
        except ProtocolError as exc:
            if line.startswith(START + b"HELLO,", start) and isinstance(exc, FrameSyntaxError):
                self.unreadable_hellos.append(line[start:])
            return self._reject("malformed", exc)
        self._counts["frames"] += 1
        if start > 0:
            self._counts["noise_prefixes"] += 1
        return frame

    def _reject(self, counter: str, exc: ProtocolError) -> None:
        self._counts[counter] += 1
        self.last_error = exc
        return None


def _line_end(buf: bytearray) -> int:
    """Index of the first CR or LF in ``buf``, or -1."""
    cr, lf = buf.find(b"\r"), buf.find(b"\n")
    if cr < 0:
        return lf
    return cr if lf < 0 else min(cr, lf)
