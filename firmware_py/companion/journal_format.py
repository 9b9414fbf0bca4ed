"""The journal's file format: its lines, their checksums, the snapshot's text.

A journal line is ``{"seq": n, "crc": c, "body": {...}, "prev": {...}, "pcrc": p}``:
``crc`` is the CRC-32 of ``{"seq": n, "body": body}`` (canonical JSON: sorted
keys, no spaces), ``prev``/``pcrc`` repeat the previous line's body and CRC. A
snapshot is ``{"seq": S, "crc": c, "entries": [...]}`` with ``crc`` the CRC-32 of
``{"seq": S, "entries": entries}``. Journals written before ``seq`` was covered
(the CRC of the body alone; of ``{"e": entries}`` for a snapshot) are still read.
See :mod:`firmware_py.companion.journal` for the files and their rules.

Pure: no file is opened here (:func:`lines_of` reads a file object it is given).
"""
from __future__ import annotations

import json
import re
import zlib

from ..rules import jsonsafe

MAX_NESTING = 64            # deeper JSON than this in a journal line is damage, not data
LINE_LIMIT = 1 << 20         # a longer journal line is damage (an entry is under 10 KB)
_CHUNK = 1 << 16
_CLAIMED_SEQ = re.compile(rb'\A\s*\{\s*"seq"\s*:\s*([0-9]{1,15})\s*,')


def canon(obj) -> bytes:
    """``obj`` as canonical JSON bytes (sorted keys, no spaces): what a checksum covers."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":")).encode()


def crc(seq: int, body: dict) -> int:
    """The CRC-32 of the entry ``body`` at ``seq`` (``{"seq": seq, "body": body}``)."""
    return zlib.crc32(canon({"seq": seq, "body": body}))


def legacy_crc(body: dict) -> int:
    """The checksum of journals written before ``seq`` was covered (still read)."""
    return zlib.crc32(canon(body))


def encode_line(seq: int, body: dict, prev: tuple[int, dict] | None) -> bytes:
    """The journal line of ``body`` at ``seq``, ending with a line end; it repeats
    ``prev`` (``(seq, body)`` of the line before) only when that is ``seq - 1``."""
    obj = {"seq": seq, "crc": crc(seq, body), "body": body}
    if prev is not None and prev[0] == seq - 1:
        obj["prev"], obj["pcrc"] = prev[1], crc(prev[0], prev[1])
    return json.dumps(obj, separators=(",", ":")).encode() + b"\n"


def effective(entries: list[dict]) -> list[dict]:
    """Fold undo entries away: the entries of the current game, its setup first.

    A ``setup`` entry starts a new game (earlier entries are dropped); an
    ``undo`` removes the last ``turn`` or ``end`` entry. A ``plan`` entry (the
    box's turn as shown, before the human carried it out) counts only while
    it is the last entry: any entry after it drops it.
    """
    out: list[dict] = []
    for body in entries:
        kind = body.get("kind")
        while out and out[-1].get("kind") == "plan":
            out.pop()
        if kind == "setup":
            out = [body]
        elif kind == "undo":
            if out and out[-1].get("kind") in ("turn", "end"):
                out.pop()
        else:
            out.append(body)
    return out


def parse_line(raw: bytes, known: int = 0) -> tuple[int, dict, tuple[int, dict] | None] | str:
    """One journal line -> ``(seq, body, (seq-1, prev body) or None)``, or why it is damaged
    (a string). ``known``: a seq already read intact; an intact line right after it does not
    check its copy of it (returned as None: one checksum less per line). Never raises."""
    if not raw.strip(b"\0 \t\r"):
        return "NUL bytes" if b"\0" in raw else "empty line"
    try:
        obj = jsonsafe.loads(raw, "a journal line", MAX_NESTING)
    except jsonsafe.NestingError:
        return "nested too deeply"
    except ValueError:
        return "NUL bytes" if b"\0" in raw else "torn or garbled line"
    if not isinstance(obj, dict):
        return "not an entry"
    seq, body = obj.get("seq"), obj.get("body")
    if not isinstance(seq, int) or isinstance(seq, bool) or seq < 1 or not isinstance(body, dict):
        return "malformed entry"
    if obj.get("crc") == crc(seq, body) or ("pcrc" not in obj and obj.get("crc") == legacy_crc(body)):
        return seq, body, prev_copy(obj, seq) if seq - 1 != known else None
    prev = prev_copy(obj, seq)
    if prev is not None:
        return 0, {}, prev        # its own body is damaged, the copy of the one before is not
    return "checksum mismatch"


def claimed_seq(raw: bytes) -> int:
    """The ``seq`` a damaged snapshot or journal line still shows at its start (0 when none
    can be read): never trusted for its content, only as a sign of how far the game got."""
    found = _CLAIMED_SEQ.match(raw[:64])
    return int(found.group(1)) if found else 0


def prev_copy(obj: dict, seq: int) -> tuple[int, dict] | None:
    """The line's intact copy of the entry before it, ``(seq - 1, body)``, or None."""
    pbody = obj.get("prev")
    if isinstance(pbody, dict) and obj.get("pcrc") == crc(seq - 1, pbody):
        return seq - 1, pbody
    return None


def lines_of(fh):
    """``(byte offset, line, True when it ended with a line end)`` for each line of the
    binary file ``fh``, read in chunks of 64 KiB. A line over :data:`LINE_LIMIT` bytes is
    skipped, not held: it comes as the text "NUL bytes" or "line too long" instead of its
    bytes, so memory stays bounded whatever the file holds."""
    offset, held, long_len, long_nul = 0, b"", -1, True    # long_len >= 0: skipping a line
    while chunk := fh.read(_CHUNK):
        start = 0
        while (end := chunk.find(b"\n", start)) >= 0:
            piece = chunk[start:end]
            if long_len >= 0:
                long_nul = long_nul and not piece.strip(b"\0")
                yield offset, "NUL bytes" if long_nul else "line too long", True
                offset += long_len + len(piece) + 1
            else:
                line = held + piece
                yield offset, line, True
                offset += len(line) + 1
            held, long_len, long_nul = b"", -1, True
            start = end + 1
        rest = chunk[start:]
        if long_len >= 0:
            long_len += len(rest)
            long_nul = long_nul and not rest.strip(b"\0")
        else:
            held += rest
            if len(held) > LINE_LIMIT:
                long_len, long_nul, held = len(held), not held.strip(b"\0"), b""
    if long_len >= 0:
        yield offset, "NUL bytes" if long_nul else "line too long", False
    elif held:
        yield offset, held, False


def encode_snapshot(seq: int, entries: list[dict]) -> bytes:
    """The text of ``snapshot.json`` holding ``entries`` (effective bodies) up to ``seq``."""
    data = {"seq": seq, "crc": zlib.crc32(canon({"seq": seq, "entries": entries})),
            "entries": entries}
    return json.dumps(data, separators=(",", ":")).encode()


def parse_snapshot(raw: bytes) -> tuple[int, list[dict]] | str:
    """A snapshot's bytes -> ``(seq, its entries)``, or why it is unusable (a string:
    "empty", "NUL-filled", "not a snapshot", "malformed", "checksum mismatch")."""
    if not raw.strip(b"\0"):
        return "NUL-filled" if raw else "empty"
    try:
        data = jsonsafe.loads(raw, "the snapshot", MAX_NESTING)
    except ValueError:                  # bad JSON, not UTF-8, or nested too deeply
        data = None
    if not isinstance(data, dict):
        return "not a snapshot"
    seq, entries = data.get("seq"), data.get("entries")
    if not isinstance(seq, int) or not isinstance(entries, list) \
            or not all(isinstance(e, dict) for e in entries):
        return "malformed"
    if data.get("crc") not in (zlib.crc32(canon({"seq": seq, "entries": entries})),
                               legacy_crc({"e": entries})):
        return "checksum mismatch"
    return seq, entries
