"""Frame encoder and request reader of the sensor (see hardware/protocol.md).

Written for CircuitPython's subset of Python: str.format, bytearray, ints
below 2**30 in every computation, no regular expressions.

A frame is one line:  $<body>*<CRC>\\r\\n  where body starts with "PW," and
CRC is CRC-16/CCITT-FALSE of the body, 4 uppercase hex digits.
"""

PROTOCOL_VERSION = 1
FIRMWARE_VERSION = "1.1.0"
STAT_MAX = 999999
SEQ_MODULO = 65536
MAX_LINE = 120

_HEX = "0123456789ABCDEF"
# CRC-16/CCITT-FALSE, four bits at a time (poly 0x1021): _NIBBLE[n] = n * 0x1021 in GF(2)
_NIBBLE = (0x0000, 0x1021, 0x2042, 0x3063, 0x4084, 0x50A5, 0x60C6, 0x70E7,
           0x8108, 0x9129, 0xA14A, 0xB16B, 0xC18C, 0xD1AD, 0xE1CE, 0xF1EF)


def crc16(data, crc=0xFFFF):
    """CRC-16/CCITT-FALSE of the bytes ``data``; crc16(b"123456789") == 0x29B1."""
    for byte in data:
        crc = ((crc << 4) & 0xFFFF) ^ _NIBBLE[(crc >> 12) ^ (byte >> 4)]
        crc = ((crc << 4) & 0xFFFF) ^ _NIBBLE[(crc >> 12) ^ (byte & 0x0F)]
    return crc


def hex4(value):
    """``value`` (0..0xFFFF) as 4 uppercase hex digits."""
    return (_HEX[(value >> 12) & 15] + _HEX[(value >> 8) & 15]
            + _HEX[(value >> 4) & 15] + _HEX[value & 15])


def bitmap(levels, spaces):
    """Occupancy ``levels`` (a bytearray, 1 = token) as ceil(spaces/4) hex digits.

    The last digit holds spaces 0..3 (space 0 in its lowest bit).
    """
    digits = []
    for nibble in range((spaces + 3) // 4 - 1, -1, -1):
        value = 0
        for bit in range(4):
            space = nibble * 4 + bit
            if space < spaces and levels[space]:
                value |= 1 << bit
        digits.append(_HEX[value])
    return "".join(digits)


def frame(body):
    """The line for ``body`` (a str starting with "PW,") as bytes, with CRC and CRLF."""
    raw = body.encode()
    return b"$" + raw + b"*" + hex4(crc16(raw)).encode() + b"\r\n"


def hello(seq, spaces, firmware=FIRMWARE_VERSION):
    """A HELLO frame: protocol version, firmware version, number of spaces."""
    return frame("PW,HELLO,{},{},{},{}".format(seq, PROTOCOL_VERSION, firmware, spaces))


def snapshot(seq, levels, spaces):
    """A SNAP frame (full occupancy, sent on request)."""
    return frame("PW,SNAP,{},{},{}".format(seq, spaces, bitmap(levels, spaces)))


def heartbeat(seq, levels, spaces):
    """A BEAT frame (full occupancy, sent at least once a second)."""
    return frame("PW,BEAT,{},{},{}".format(seq, spaces, bitmap(levels, spaces)))


def change(seq, levels, spaces, space):
    """A CHG frame: ``space`` is now levels[space]; the bitmap is all of ``levels``."""
    state = "ON" if levels[space] else "OFF"
    return frame("PW,CHG,{},{},{},{},{}".format(seq, spaces, space, state, bitmap(levels, spaces)))


def scan_stats(seq, window_ms, scans, worst_scan_us, worst_gap_us):
    """A STAT frame: the measured scan loop over a window of ``window_ms`` ms.

    Counts and microseconds above STAT_MAX are sent as STAT_MAX.
    """
    return frame("PW,STAT,{},{},{},{},{}".format(
        seq, min(max(window_ms, 1), 65535), min(scans, STAT_MAX),
        min(worst_scan_us, STAT_MAX), min(worst_gap_us, STAT_MAX)))


def _is_digits(raw, alphabet):
    if not raw:
        return False
    for byte in raw:
        if alphabet.find(chr(byte)) < 0:
            return False
    return True


def parse_request(line):
    """"HELLO", "SNAP" or "STAT" for a valid request line (bytes, no CR/LF), else None.

    Noise before the frame start is ignored; a wrong CRC gives None.
    """
    start = line.rfind(b"$PW,REQ,")
    star = line.rfind(b"*")
    if start < 0 or star != len(line) - 5 or not _is_digits(line[star + 1:], _HEX):
        return None
    body = line[start + 1:star]
    if crc16(body) != int(line[star + 1:].decode(), 16):
        return None
    fields = body.split(b",")
    if len(fields) != 4 or not _is_digits(fields[2], "0123456789"):
        return None
    if fields[3] not in (b"HELLO", b"SNAP", b"STAT"):
        return None
    return fields[3].decode()


class RequestReader:
    """Bounded line buffer for bytes from the host -> list of "HELLO"/"SNAP"/"STAT".

    Counts ``bad`` lines (noise, wrong CRC, unknown frames); never raises.
    """

    def __init__(self, max_line=MAX_LINE):
        self.max_line = max_line
        self.buf = bytearray()
        self.bad = 0

    def feed(self, data):
        """Add received bytes; return the requests completed by them, in order."""
        out = []
        for byte in data:
            if byte in (10, 13):
                self._line(out)
            elif len(self.buf) < self.max_line:
                self.buf.append(byte)
            else:
                self.buf = bytearray()
                self.bad += 1
        return out

    def _line(self, out):
        if not self.buf:
            return
        what = parse_request(bytes(self.buf))
        self.buf = bytearray()
        if what is None:
            self.bad += 1
        else:
            out.append(what)
