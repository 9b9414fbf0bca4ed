"""The sensor frame format and the incremental parser (firmware_py.hw.sensor_protocol)."""
from __future__ import annotations

import binascii
import random
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from firmware_py.hw import sensor_protocol as sp

FRAMES = [
    sp.Hello(0, 1, "1.0.0", 54),
    sp.Snapshot(1, 54, {3, 12}),
    sp.Change(2, 54, 13, True, {3, 12, 13}),
    sp.Change(3, 54, 12, False, {3, 13}),
    sp.Heartbeat(4, 54, {3, 13}),
    sp.Snapshot(65535, 30, set()),
    sp.Heartbeat(0, 30, {0, 29}),
    sp.Request(7, "HELLO"),
    sp.Request(8, "SNAP"),
    sp.ScanStats(9, 5000, 1000, 1800, 5400),
    sp.ScanStats(65535, 65535, 999999, 999999, 999999),
    sp.Request(10, "STAT"),
]
STREAM = b"".join(sp.encode(f) for f in FRAMES)


def line_with_crc(body: str) -> bytes:
    """A line with a correct CRC around any body (to reach the field checks)."""
    return f"${body}*{sp.crc16_ccitt_false(body.encode()):04X}\r\n".encode()


# ------------------------------------------------------------------- CRC
def test_crc_known_answers():
    assert sp.crc16_ccitt_false(b"123456789") == 0x29B1      # the catalogue check value
    assert sp.crc16_ccitt_false(b"") == 0xFFFF
    assert sp.crc16_ccitt_false(b"PW,REQ,0,HELLO") == 0x09C4


def _crc_bitwise(data: bytes) -> int:
    """The bitwise rule of hardware/protocol.md, an independent implementation."""
    crc = 0xFFFF
    for b in data:
        crc ^= b << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else (crc << 1)
            crc &= 0xFFFF
    return crc


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=200))
def test_crc_matches_an_independent_implementation(data):
    assert sp.crc16_ccitt_false(data) == _crc_bitwise(data) == binascii.crc_hqx(data, 0xFFFF)


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=60))
def test_a_line_with_a_byte_outside_printable_ascii_is_refused(data):
    line = b"$PW,BEAT,1,54,00000000000000*0000" + data
    printable = all(0x20 <= b <= 0x7E for b in data.rstrip(b"\r\n"))
    try:
        sp.decode_line(line)
    except sp.FrameSyntaxError as exc:
        refused = "printable" in str(exc)
    except sp.ProtocolError:
        refused = False
    else:
        refused = False
    assert refused == (not printable)


def test_crc_is_incremental():
    assert sp.crc16_ccitt_false(b"6789", sp.crc16_ccitt_false(b"12345")) == 0x29B1


# ------------------------------------------------------------- encoding
def test_encoded_lines_are_exact():
    assert sp.encode(sp.Request(0, "HELLO")) == b"$PW,REQ,0,HELLO*09C4\r\n"
    assert sp.encode(sp.Snapshot(1, 54, {3, 12})) == b"$PW,SNAP,1,54,00000000001008*DAB4\r\n"
    assert sp.encode(sp.Change(3, 54, 12, True, {3, 12})) == b"$PW,CHG,3,54,12,ON,00000000001008*E380\r\n"
    assert sp.encode(sp.Hello(0, 1, "1.0.0", 54)) == b"$PW,HELLO,0,1,1.0.0,54*4BE5\r\n"


def test_bitmap_width_and_bit_order():
    assert sp.bitmap_hex(frozenset({0}), 54) == "00000000000001"
    assert sp.bitmap_hex(frozenset({53}), 54) == "20000000000000"
    assert sp.bitmap_hex(frozenset({4, 29}), 30) == "20000010"
    assert sp.parse_bitmap("20000010", 30) == {4, 29}


@pytest.mark.parametrize("frame", FRAMES, ids=lambda f: f"{f.KIND}-{f.seq}")
def test_round_trip_each_kind(frame):
    line = sp.encode(frame)
    assert sp.decode_line(line) == frame
    assert sp.encode(sp.decode_line(line)) == line
    assert line.endswith(b"\r\n") and len(line) <= sp.MAX_LINE


@settings(max_examples=200, deadline=None)
@given(spaces=st.integers(1, sp.MAX_SPACES), seq=st.integers(0, 65535), data=st.data())
def test_round_trip_any_occupancy(spaces, seq, data):
    occupied = data.draw(st.frozensets(st.integers(0, spaces - 1)))
    for cls in (sp.Snapshot, sp.Heartbeat):
        frame = cls(seq, spaces, occupied)
        assert sp.decode_line(sp.encode(frame)) == frame
    space = data.draw(st.integers(0, spaces - 1))
    change = sp.Change(seq, spaces, space, space in occupied, occupied)
    assert sp.decode_line(sp.encode(change)) == change


def test_longest_frames_fit_the_line_limit():
    longest = [sp.Hello(65535, 65535, "x" * 16, 128),
               sp.Change(65535, 128, 127, True, set(range(128)))]
    assert all(len(sp.encode(f)) <= sp.MAX_LINE for f in longest)


# ----------------------------------------------------------- rejections
@pytest.mark.parametrize("line, error", [
    (b"Adafruit CircuitPython 9.1.4 on 2024-09-17\r\n", sp.NotAFrame),
    (b"$PW,SNAP,1,54,00000000001008\r\n", sp.FrameSyntaxError),
    (b"$PW,SNAP,1,54,00000000001008*dab4\r\n", sp.FrameSyntaxError),
    (b"$PW,SNAP,1,54,00000000001008*DAB4 \r\n", sp.FrameSyntaxError),
    (b"$PW,SNAP,1,54,0000000\xe90001008*DAB4\r\n", sp.FrameSyntaxError),
    (b"$PW,SNAP,1,54,00000000001009*DAB4\r\n", sp.CrcMismatch),
    (line_with_crc("PW,NOPE,1"), sp.UnknownKind),
    (line_with_crc("PW,SNAP,1,54,0000000001008"), sp.FieldError),      # 13 digits for 54 spaces
    (line_with_crc("PW,SNAP,1,54,40000000001008"), sp.FieldError),     # bit 54 set
    (line_with_crc("PW,SNAP,1,54,0000000000100a"), sp.FieldError),     # lowercase hex
    (line_with_crc("PW,SNAP,01,54,00000000001008"), sp.FieldError),    # not canonical
    (line_with_crc("PW,SNAP,65536,54,00000000001008"), sp.FieldError),
    (line_with_crc("PW,SNAP,1,0,"), sp.FieldError),
    (line_with_crc("PW,SNAP,1,54"), sp.FieldError),
    (line_with_crc("PW,CHG,1,54,12,OFF,00000000001008"), sp.FieldError),  # OFF but bit set
    (line_with_crc("PW,CHG,1,54,54,ON,00000000001008"), sp.FieldError),
    (line_with_crc("PW,CHG,1,54,12,UP,00000000001008"), sp.FieldError),
    (line_with_crc("PW,HELLO,0,1,1.0 beta,54"), sp.FieldError),
    (line_with_crc("PW,REQ,0,BEAT"), sp.FieldError),
])
def test_decode_rejects_with_a_precise_error(line, error):
    with pytest.raises(error):
        sp.decode_line(line)
    assert issubclass(error, sp.ProtocolError) and issubclass(error, ValueError)


def test_crc_mismatch_names_both_values():
    with pytest.raises(sp.CrcMismatch) as caught:
        sp.decode_line(b"$PW,SNAP,1,54,00000000001009*DAB4")
    assert caught.value.received == 0xDAB4
    assert caught.value.expected == sp.crc16_ccitt_false(b"PW,SNAP,1,54,00000000001009")
    assert "DAB4" in str(caught.value)


@pytest.mark.parametrize("make", [
    lambda: sp.Snapshot(-1, 54, set()),
    lambda: sp.Snapshot(0, 129, set()),
    lambda: sp.Snapshot(0, 54, {54}),
    lambda: sp.Change(0, 54, 3, True, set()),
    lambda: sp.Hello(0, 1, "", 54),
    lambda: sp.Hello(0, 1, "1,0", 54),
    lambda: sp.Request(0, "snap"),
    lambda: sp.ScanStats(0, 0, 10, 1, 1),
    lambda: sp.ScanStats(0, 65536, 10, 1, 1),
    lambda: sp.ScanStats(0, 5000, 1000000, 1, 1),
    lambda: sp.ScanStats(0, 5000, 10, -1, 1),
    lambda: sp.ScanStats(0, 5000, 10, 1, 1.5),
])
def test_frames_refuse_invalid_values(make):
    with pytest.raises(sp.FieldError):
        make()


# --------------------------------------------------------------- parser
def test_parser_at_every_split_point():
    for cut in range(len(STREAM) + 1):
        parser = sp.FrameParser()
        assert parser.feed(STREAM[:cut]) + parser.feed(STREAM[cut:]) == FRAMES, cut
        assert parser.stats == sp.ParserStats(frames=len(FRAMES))


def test_parser_byte_by_byte_and_random_chunks():
    parser = sp.FrameParser()
    assert [f for b in STREAM for f in parser.feed(bytes([b]))] == FRAMES
    rng = random.Random(7)
    for _ in range(50):
        parser, frames, pos = sp.FrameParser(), [], 0
        while pos < len(STREAM):
            step = rng.randint(1, 40)
            frames += parser.feed(STREAM[pos:pos + step])
            pos += step
        assert frames == FRAMES


def test_parser_accepts_lf_only_and_cr_only_line_ends():
    lines = [sp.encode(f)[:-2] for f in FRAMES[:3]]
    assert sp.FrameParser().feed(b"\n".join(lines) + b"\n") == FRAMES[:3]
    assert sp.FrameParser().feed(b"\r".join(lines) + b"\r") == FRAMES[:3]


def test_parser_ignores_banner_and_keeps_frames_glued_after_noise():
    banner = (b"\x1b]0;\xf0\x9f\x90\x8dcode.py | 9.1.4\x1b\\soft reboot\r\n\r\n"
              b"Auto-reload is off.\r\ncode.py output:\r\n"
              b"Press any key to enter the REPL. Use CTRL-D to reload.")
    parser = sp.FrameParser()
    frames = parser.feed(banner + sp.encode(FRAMES[1]) + b"\x00\xff junk\r\n" + sp.encode(FRAMES[2]))
    assert frames == [FRAMES[1], FRAMES[2]]
    stats = parser.stats
    assert stats.garbage == 4 and stats.noise_prefixes == 1 and stats.frames == 2
    assert isinstance(parser.last_error, sp.NotAFrame)


def test_parser_keeps_only_the_last_frame_of_two_glued_frames():
    glued = sp.encode(FRAMES[1])[:-2] + sp.encode(FRAMES[2])
    assert sp.FrameParser().feed(glued) == [FRAMES[2]]


def test_parser_bounds_overlong_lines():
    parser = sp.FrameParser()
    frames = []
    for _ in range(100):
        frames += parser.feed(b"x" * 37)
        assert len(parser._buf) <= parser.max_line
    frames += parser.feed(b"tail of the long line\r\n" + sp.encode(FRAMES[1]))
    assert frames == [FRAMES[1]]
    assert parser.stats.overlong > 0 and parser.stats.garbage == 0


def test_parser_finds_a_frame_after_long_noise_without_line_end():
    assert sp.FrameParser().feed(b"~" * 500 + sp.encode(FRAMES[3])) == [FRAMES[3]]
    parser = sp.FrameParser()
    for _ in range(50):
        assert parser.feed(b"~" * 10) == []
    assert parser.feed(b"~~" + sp.encode(FRAMES[3])) == [FRAMES[3]]
    assert parser.stats.overlong >= 1


def test_parser_counts_crc_errors_and_malformed_frames():
    parser = sp.FrameParser()
    bad_crc = b"$PW,SNAP,1,54,00000000001009*DAB4\r\n"
    frames = parser.feed(bad_crc + line_with_crc("PW,SNAP,1,54,0") + sp.encode(FRAMES[0]))
    assert frames == [FRAMES[0]]
    assert (parser.stats.crc_errors, parser.stats.malformed, parser.stats.frames) == (1, 1, 1)
    parser.reset()
    assert parser.stats == sp.ParserStats()


def _flip(line: bytes, bits: list[int]) -> bytes:
    data = bytearray(line)
    for bit in bits:
        data[bit // 8] ^= 1 << (bit % 8)
    return bytes(data)


@pytest.mark.parametrize("frame", FRAMES, ids=lambda f: f"{f.KIND}-{f.seq}")
def test_no_single_bit_flip_yields_a_frame(frame):
    line = sp.encode(frame)
    body_bits = (len(line) - 2) * 8          # everything but CR LF
    for bit in range(body_bits):
        parser = sp.FrameParser()
        assert parser.feed(_flip(line, [bit])) == [], (bit, _flip(line, [bit]))
        assert parser.feed(sp.encode(FRAMES[0])) == [FRAMES[0]]


@settings(max_examples=300, deadline=None)
@given(index=st.integers(0, len(FRAMES) - 1), data=st.data())
def test_two_or_three_bit_flips_never_yield_a_wrong_frame(index, data):
    line = sp.encode(FRAMES[index])
    bits = data.draw(st.lists(st.integers(0, (len(line) - 2) * 8 - 1), min_size=2, max_size=3,
                              unique=True))
    assert sp.FrameParser().feed(_flip(line, bits)) == []


@settings(max_examples=200, deadline=None)
@given(noise=st.lists(st.binary(max_size=300), max_size=len(FRAMES) + 1))
def test_random_noise_between_frames_never_yields_a_wrong_frame(noise):
    stream = b""
    for i, frame in enumerate(FRAMES):
        stream += (noise[i] if i < len(noise) else b"") + b"\n" + sp.encode(frame)
    parser = sp.FrameParser()
    got = parser.feed(stream)
    assert set(got) <= set(FRAMES)
    assert got == [f for f in FRAMES if f in got]     # in order, nothing invented


def test_parser_refuses_a_tiny_buffer():
    with pytest.raises(ValueError):
        sp.FrameParser(max_line=10)


# ----------------------------------------------------------- the document
PROTOCOL_MD = Path(__file__).resolve().parents[2] / "hardware" / "protocol.md"


def _fenced_blocks(kind: str) -> list[str]:
    text = PROTOCOL_MD.read_text()
    return re.findall(r"^```" + kind + r"\n(.*?)^```", text, flags=re.S | re.M)


def test_every_example_frame_in_protocol_md_decodes_and_round_trips():
    lines = [m for block in _fenced_blocks("") for m in re.findall(r"\$PW,\S*", block)]
    assert len(lines) >= 12
    for line in lines:
        assert sp.encode(sp.decode_line(line)) == line.encode() + b"\r\n", line


def test_the_rejected_examples_in_protocol_md_are_rejected_as_documented():
    expected = {"garbage line": sp.NotAFrame, "CRC error": sp.CrcMismatch,
                "malformed": sp.FrameSyntaxError}
    rows = [r for r in _fenced_blocks("bad")[0].splitlines() if r.strip()]
    assert len(rows) == 5
    for row in rows:
        line, note = re.split(r"\s{3,}", row.strip())
        kind = next(k for k in expected if note.startswith(k))
        with pytest.raises(expected[kind]):
            sp.decode_line(line)
        parser = sp.FrameParser()
        assert parser.feed(line.encode() + b"\r\n") == []
        counter = {"garbage line": "garbage", "CRC error": "crc_errors", "malformed": "malformed"}[kind]
        assert getattr(parser.stats, counter) == 1


def test_the_worked_crc_examples_in_protocol_md():
    text = PROTOCOL_MD.read_text()
    assert "after `PW,S` 0x03B8" in text and sp.crc16_ccitt_false(b"PW,S") == 0x03B8
    assert sp.crc16_ccitt_false(b"P") == 0xBB05 and sp.crc16_ccitt_false(b"PW,SN") == 0x2169
    assert sp.crc16_ccitt_false(b"PW,SNAP,17,54,00000000001008") == 0xCDF2


# ------------------------------------------------------------ scan stats
def test_scan_stats_frame_is_exact_and_gives_the_rate():
    frame = sp.ScanStats(4, 5000, 1000, 1800, 5400)
    assert sp.encode(frame) == line_with_crc("PW,STAT,4,5000,1000,1800,5400")
    assert sp.decode_line(sp.encode(frame)) == frame
    assert frame.rate_hz == pytest.approx(200.0)
    assert sp.ScanStats(0, 4000, 333, 0, 0).rate_hz == pytest.approx(83.25)


@pytest.mark.parametrize("body", [
    "PW,STAT,1,5000,1000,1800",              # a field missing
    "PW,STAT,1,5000,1000,1800,5400,7",       # one too many
    "PW,STAT,1,0,1000,1800,5400",            # empty window
    "PW,STAT,1,5000,01000,1800,5400",        # leading zero
    "PW,STAT,1,5000,1000,1800,1000000",      # 7 digits
])
def test_scan_stats_field_errors(body):
    with pytest.raises(sp.FieldError):
        sp.decode_line(line_with_crc(body))


@pytest.mark.parametrize("seq, occupied", [(0, frozenset()), (65535, frozenset({0, 53})),
                                           (17, frozenset(range(0, 54, 3)))])
def test_the_heartbeat_line_is_the_encoded_heartbeat(seq, occupied):
    bitmap = sp.bitmap_hex(occupied, 54).encode("ascii")
    assert sp.heartbeat_line(seq, 54, bitmap) == sp.encode(sp.Heartbeat(seq, 54, occupied))
