"""Reading a ``.tar.gz`` from outside with every header checked before anything is read.

Python's :mod:`tarfile` trusts the headers it reads: on versions without the
fix for CVE-2025-8194 (3.11.7, among others) a member with a negative size
makes it loop forever, and it reads a pax extended header of any size into
memory before a caller can look at it. A backup is input from outside, so it
is read here instead, with the standard library's :mod:`gzip` only:

* each 512-byte header is checked first: its checksum, a size written as
  octal digits (or base-256, never negative), its type: a regular file, or a
  pax extended header (its ``path`` and ``size`` records are used, nothing
  else of it); an empty folder entry is passed over; anything else (links,
  devices, GNU extensions) is refused;
* caps bound everything before a byte of it is read: the number of members,
  each member's size, the total unpacked size (extended headers included) and
  each extended header; the
  error names the cap;
* members are yielded one at a time (memory: one member at most), and the
  stream is decompressed only as far as it is read.

Tar format: POSIX.1-2001 (ustar with pax headers), as :mod:`tarfile` writes it.
"""
from __future__ import annotations

import gzip
import zlib
from dataclasses import dataclass
from typing import BinaryIO, Iterator

BLOCK = 512
REGULAR, FOLDER, PAX, PAX_GLOBAL = (b"0", b"\0"), b"5", b"x", b"g"


class TarError(ValueError):
    """A tar stream that is refused: the message says which member (or header) and why."""


@dataclass(frozen=True)
class Caps:
    """Limits of one tar stream: ``members`` (count), ``member`` (bytes of one member),
    ``total`` (unpacked bytes of all members), ``header`` (bytes of one pax header)."""

    members: int
    member: int
    total: int
    header: int


def members(stream: BinaryIO, caps: Caps, where: str) -> Iterator[tuple[str, bytes]]:
    """``(name, data)`` of each regular file of the gzip-compressed tar ``stream`` in order.

    Raises :class:`TarError` (naming ``where`` and the member) for a damaged or
    hostile stream or a cap passed, before that member's data is read; OSError
    from the file.
    """
    reader = _Reader(gzip.GzipFile(fileobj=stream, mode="rb"), where)
    count = total = 0
    pending: dict[str, str] = {}
    while True:
        header = reader.block()
        if header is None or header == b"\0" * BLOCK:
            return                                   # end of archive (or of a short file)
        name, size, kind = _header(header, where, count + 1)
        if kind in (PAX, PAX_GLOBAL):
            if size > caps.header:
                raise TarError(f"{where}: member {count + 1}: an extended (pax) header of {size} "
                               f"bytes passes the cap of {caps.header} bytes")
            total = _counted(total + size, caps, where)
            records = _pax(reader.data(size), where, count + 1)
            if kind == PAX:
                pending = records
            continue
        name = pending.get("path", name)
        if "size" in pending:
            size = _pax_size(pending["size"], where, name)
        pending = {}
        count += 1
        if count > caps.members:
            raise TarError(f"{where}: more than {caps.members} members (the cap on members)")
        if kind == FOLDER and size == 0:
            continue                                 # a folder entry (``tar czf`` makes them)
        if kind not in REGULAR:
            raise TarError(f"{where}: {name!r} is not a plain file (tar type {kind!r})")
        if size > caps.member:
            raise TarError(f"{where}: {name!r} is {size} bytes, over the cap of {caps.member} "
                           f"bytes for one member")
        total = _counted(total + size, caps, where)
        yield name, reader.data(size)


def _counted(total: int, caps: Caps, where: str) -> int:
    """``total`` (bytes unpacked so far: members and extended headers, which a gzip stream
    of nothing else would otherwise unpack without bound); TarError past the cap."""
    if total > caps.total:
        raise TarError(f"{where}: the members unpack to more than {caps.total} bytes "
                       f"(the cap on the total)")
    return total


class _Reader:
    """Blocks of the decompressed stream; damage in the gzip layer becomes TarError."""

    def __init__(self, raw: gzip.GzipFile, where: str):
        self.raw, self.where = raw, where

    def _read(self, n: int) -> bytes:
        try:
            return self.raw.read(n)
        except (gzip.BadGzipFile, zlib.error, EOFError) as exc:
            raise TarError(f"{self.where}: not a backup file (.tar.gz), or damaged ({exc})") from None

    def block(self) -> bytes | None:
        """The next 512-byte header block; None at the end of the stream. Raises
        TarError for a stream cut short inside a block."""
        data = self._read(BLOCK)
        if not data:
            return None
        if len(data) < BLOCK:
            raise TarError(f"{self.where}: cut short in a header (truncated file?)")
        return data

    def data(self, size: int) -> bytes:
        """A member's ``size`` bytes (its padding to whole blocks read and dropped).
        Raises TarError for a stream cut short inside the member."""
        padded = -(-size // BLOCK) * BLOCK
        data = self._read(padded)
        if len(data) < padded:
            raise TarError(f"{self.where}: cut short in a member (truncated file?)")
        return data[:size]


def _header(block: bytes, where: str, n: int) -> tuple[str, int, bytes]:
    """(name, size, type) of a header block; TarError when it is damaged or hostile."""
    stored = _octal(block[148:156], where, n, "checksum")
    if stored != sum(block[:148]) + 8 * 32 + sum(block[156:]):
        raise TarError(f"{where}: member {n}: header checksum mismatch (not a tar file, or damaged)")
    size = _number(block[124:136], where, n)
    name = _text(block[0:100], where, n)
    if block[257:263] == b"ustar\0" and block[345:500].strip(b"\0"):   # POSIX, not GNU
        name = _text(block[345:500], where, n) + "/" + name
    return name, size, block[156:157]


def _number(field: bytes, where: str, n: int) -> int:
    """A size field: octal digits, or base-256 (first byte 0x80 positive, 0xff negative)."""
    if field[0] & 0x80:
        if field[0] & 0x40:
            raise TarError(f"{where}: member {n}: negative size in its header")
        return int.from_bytes(bytes([field[0] & 0x3F]) + field[1:], "big")
    return _octal(field, where, n, "size")


def _octal(field: bytes, where: str, n: int, what: str) -> int:
    digits = field.strip(b" \0")
    if not digits or any(c not in b"01234567" for c in digits):
        raise TarError(f"{where}: member {n}: its {what} field is not a number {bytes(field)!r}")
    return int(digits, 8)


def _text(field: bytes, where: str, n: int) -> str:
    try:
        return field.split(b"\0", 1)[0].decode("utf-8")
    except UnicodeDecodeError:
        raise TarError(f"{where}: member {n}: a name that is not UTF-8") from None


def _pax(data: bytes, where: str, n: int) -> dict[str, str]:
    """The ``key=value`` records of a pax header ("<length> <key>=<value>\\n" each)."""
    out, pos = {}, 0
    while pos < len(data):
        space = data.find(b" ", pos, pos + 20)
        try:
            length = int(data[pos:space]) if space > pos else 0
        except ValueError:
            length = 0
        end = pos + length
        if length <= space - pos + 1 or end > len(data) or data[end - 1:end] != b"\n":
            raise TarError(f"{where}: member {n}: a malformed extended (pax) header")
        key, eq, value = data[space + 1:end - 1].partition(b"=")
        if not eq:
            raise TarError(f"{where}: member {n}: a malformed extended (pax) header")
        try:
            out[key.decode("utf-8")] = value.decode("utf-8")
        except UnicodeDecodeError:
            raise TarError(f"{where}: member {n}: an extended (pax) header that is not UTF-8") \
                from None
        pos = end
    return out


def _pax_size(text: str, where: str, name: str) -> int:
    if not (text.isascii() and text.isdigit()):
        raise TarError(f"{where}: {name!r}: size {text[:20]!r} in its extended header is not "
                       f"a number of bytes")
    return int(text)
