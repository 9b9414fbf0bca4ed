"""The journal of the game in progress: every accepted turn on disk before it is shown.

Files in the journal folder:

``journal.jsonl``
    Append-only, one entry per line, each line fsync'd before the turn is shown.
    A line is ``{"seq": n, "crc": c, "body": {...}, "prev": {...}, "pcrc": p}``:
    ``crc`` is the CRC-32 of ``{"seq": n, "body": body}`` (canonical JSON), and
    ``prev``/``pcrc`` repeat the previous line's body and CRC, so one damaged
    line is recovered from the line after it. ``seq`` numbers never go back
    (a new game continues them), so any two copies can be merged by ``seq``.
    The file holds one game: a new game's ``setup`` replaces it atomically.
``snapshot.json``
    ``{"seq": S, "crc": c, "entries": [...]}``: the effective entries up to
    ``seq`` S, replaced durably (``firmware_py.disk.write_durably``: a temporary
    file of its own, fsync, rename, fsync the folder) after every accepted entry, once the turn is shown. It is
    a second, independent copy of the whole game.
``quarantine/``
    Damaged files are linked (copied where the file system has no hard links)
    here as ``q-<n>-<name>``, created without ever replacing a file, before a
    repair rewrites them, so damaged bytes are moved aside, never overwritten.
    It keeps the newest :data:`QUARANTINE_FILES` files and at most
    :data:`QUARANTINE_BYTES` bytes (the newest file always), pruned oldest first.
    When this folder cannot be made or written, the copy goes next to the
    damaged file instead, under the same kind of name.

Entry bodies: ``{"kind": "setup", "setup": {...}, ...}``, ``{"kind": "turn",
"moves": [...]}`` (a turn of the box adds ``"box": {...}``), ``{"kind": "plan",
"plan": {...}}`` (the box's turn shown), ``{"kind": "undo"}``, ``{"kind": "end", ...}``; other keys
are kept as they are.

Loading never raises for bad content: every intact entry of both files is
used (a damaged line in the middle costs only that line, and not even that
when the next line repeats it); what was skipped, where, and any turns that
could not be recovered ("turns 16-20 lost; resumed at turn 15") are reported.
"""
from __future__ import annotations

import errno
import json
import os
import re
import zlib
from dataclasses import dataclass, field
from pathlib import Path

from ..disk import fsync_dir, make_folder, remove_temporaries, write_durably
from ..rules import jsonsafe

JOURNAL, SNAPSHOT, QUARANTINE = "journal.jsonl", "snapshot.json", "quarantine"
TEMPORARY = ("journal.tmp", "snapshot.tmp")   # the temporary names of older versions
MAX_NESTING = 64            # deeper JSON than this in a journal line is damage, not data
QUARANTINE_FILES = 32       # quarantine/ keeps at most this many files (the newest) ...
QUARANTINE_BYTES = 64 << 20  # ... of at most this many bytes in all (the newest always stays)
REASONS = {errno.ENOSPC: "disk full", errno.EDQUOT: "disk full", errno.EROFS: "read-only",
           errno.EACCES: "not writable", errno.EPERM: "not writable", errno.EIO: "disk error"}


class JournalError(OSError):
    """The journal could not be written (disk full, read-only, failing, vanished folder).

    ``reason``: a short cause ("disk full", "read-only", "disk error", ...);
    ``notice``: the OLED text, e.g. "not saving: disk full (/var/lib/x)".
    """

    def __init__(self, message: str, reason: str, folder: Path):
        super().__init__(message)
        self.reason = reason
        self.notice = f"not saving: {reason} ({folder})"


def reason_of(exc: OSError) -> str:
    """A short name for an OS error: "disk full", "read-only", "disk error", or its text."""
    return REASONS.get(exc.errno, exc.strerror or type(exc).__name__)


def writable_error(folder: str | Path) -> OSError | None:
    """None when a file can be created and written in ``folder`` (created if missing),
    else the OSError that refused it. Leaves nothing behind."""
    folder = Path(folder)
    probe = folder / f".write-test-{os.getpid()}"
    try:
        make_folder(folder)
        fd = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            os.write(fd, b"x")
        finally:
            os.close(fd)
            os.unlink(probe)
    except OSError as exc:
        return exc
    return None


def writable_problem(folder: str | Path) -> str | None:
    """None when ``folder`` takes writes (see :func:`writable_error`), else e.g.
    "/var/lib/x is not writable (read-only: Read-only file system)"."""
    exc = writable_error(folder)
    if exc is None:
        return None
    return f"{folder} is not writable ({reason_of(exc)}: {exc.strerror or exc})"


@dataclass
class Loaded:
    """What :meth:`Journal.load` found.

    ``entries``: the effective bodies of the game (setup first), ``seq``: the
    last seq, ``problems``: one line per finding for the log (file, line, byte),
    ``skipped``: damaged journal lines, ``lost``: e.g. "turns 16-20 lost;
    resumed at turn 15" ("" when nothing is known lost), ``notice``: a short
    text for the OLED ("" when all was well).
    """

    entries: list[dict] = field(default_factory=list)
    seq: int = 0
    problems: list[str] = field(default_factory=list)
    skipped: int = 0
    lost: str = ""
    notice: str = ""


def lost_text(kept: int, lost: int) -> str:
    """What the OLED and the log say when ``lost`` (>= 1) turns after turn ``kept`` (>= 0)
    could not be recovered, e.g. "turns 16-20 lost; resumed at turn 15"."""
    span = f"turn {kept + 1}" if lost == 1 else f"turns {kept + 1}-{kept + lost}"
    return f"{span} lost; resumed at turn {kept}"


def _canon(obj) -> bytes:
    return json.dumps(obj, sort_keys=True, separators=(",", ":")).encode()


def _crc(seq: int, body: dict) -> int:
    return zlib.crc32(_canon({"seq": seq, "body": body}))


def _legacy_crc(body: dict) -> int:
    """The checksum of journals written before ``seq`` was covered (still read)."""
    return zlib.crc32(_canon(body))


def _line(seq: int, body: dict, prev: tuple[int, dict] | None) -> bytes:
    obj = {"seq": seq, "crc": _crc(seq, body), "body": body}
    if prev is not None and prev[0] == seq - 1:
        obj["prev"], obj["pcrc"] = prev[1], _crc(prev[0], prev[1])
    return json.dumps(obj, separators=(",", ":")).encode() + b"\n"


def _copy_new(source: Path, target: Path) -> None:
    """Copy ``source`` to a new file ``target`` (FileExistsError if it exists), fsync'd;
    on any other OSError nothing is left at ``target``."""
    data = source.read_bytes()
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)
        finally:
            os.close(fd)
    except OSError:
        os.unlink(target)
        raise


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
    if obj.get("crc") == _crc(seq, body) or ("pcrc" not in obj and obj.get("crc") == _legacy_crc(body)):
        return seq, body, _prev_copy(obj, seq) if seq - 1 != known else None
    prev = _prev_copy(obj, seq)
    if prev is not None:
        return 0, {}, prev        # its own body is damaged, the copy of the one before is not
    return "checksum mismatch"


_CLAIMED_SEQ = re.compile(rb'\A\s*\{\s*"seq"\s*:\s*([0-9]{1,15})\s*,')


def _claimed_seq(raw: bytes) -> int:
    """The ``seq`` a damaged snapshot or journal line still shows at its start (0 when none
    can be read): never trusted for its content, only as a sign of how far the game got."""
    found = _CLAIMED_SEQ.match(raw[:64])
    return int(found.group(1)) if found else 0


def _prev_copy(obj: dict, seq: int) -> tuple[int, dict] | None:
    """The line's intact copy of the entry before it, ``(seq - 1, body)``, or None."""
    pbody = obj.get("prev")
    if isinstance(pbody, dict) and obj.get("pcrc") == _crc(seq - 1, pbody):
        return seq - 1, pbody
    return None


LINE_LIMIT = 1 << 20         # a longer journal line is damage (an entry is under 10 KB)
_CHUNK = 1 << 16


def _lines(fh):
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


def _drop_before(reading: "_Reading", seq: int) -> None:
    """An intact ``setup`` at ``seq``: no entry before it can be part of the game to resume
    (any base before it that reaches it ends where this setup's does, and effective()
    starts over at this setup; any other ends before it), so forget them."""
    reading.floor = seq
    for held in (reading.bodies, reading.copies):
        for old in [s for s in held if s < seq]:
            del held[old]


class _Reading:
    """The raw findings of one load: bodies by seq, snapshot base, damage."""

    def __init__(self) -> None:
        self.bodies: dict[int, dict] = {}
        self.copies: dict[int, dict] = {}
        self.snapshot: tuple[int, list[dict]] | None = None
        self.damaged: list[tuple[int, int, str]] = []     # (line, byte offset, why)
        self.floor = 0          # the seq of the last intact setup read: nothing before it is kept
        self.setups = 0         # intact setup entries read (games in the file)
        self.problems: list[str] = []
        self.max_seq = 0
        self.trailing = 0        # damaged lines after the last intact entry that held entries
        self.last_seq = 0        # the seq of that entry


class Journal:
    """The journal files in ``folder`` (created when first written).

    Not thread-safe: the service's loop thread owns it. :meth:`append` keeps
    the entry in memory first and then writes it; when the disk refuses it
    raises :class:`JournalError` and the game goes on in memory: the next
    append, or :meth:`catch_up`, rewrites the files from memory.
    """

    def __init__(self, folder: str | Path):
        self.folder = Path(folder)
        self.path = self.folder / JOURNAL
        self.snapshot_path = self.folder / SNAPSHOT
        self.quarantine = self.folder / QUARANTINE
        self.seq = 0
        self._entries: list[dict] = []
        self._last: tuple[int, dict] | None = None   # the last line on disk, repeated by the next
        self._rewrite = False          # the files must be rewritten from memory first
        self._to_quarantine: list[Path] = []
        self._moved: list[str] = []    # where damaged files went, not yet told
        self.snapshot_due = False

    # ----- what is held -------------------------------------------------------------------
    @property
    def entries(self) -> list[dict]:
        """The effective entries of the game held (a copy)."""
        return list(self._entries)

    @property
    def pending(self) -> bool:
        """True while something held in memory is not yet on disk."""
        return self._rewrite

    # ----- loading ------------------------------------------------------------------------
    def load(self) -> Loaded:
        """Read the snapshot and the journal and merge every intact entry by seq.

        Never raises for bad content; damage is reported in the result, and the
        files are repaired (damaged ones quarantined first) by :meth:`catch_up`.
        """
        self._remove_temporaries()
        reading = _Reading()
        self._read_snapshot(reading)
        self._read_journal(reading)
        seq, entries = self._merge(reading)
        found = Loaded(entries, seq, reading.problems, len(reading.damaged))
        self._report(reading, found)
        self.seq = max(seq, reading.max_seq)
        self._entries = entries
        self._last = (seq, reading.bodies[seq]) if seq in reading.bodies else None
        if found.problems:
            self._rewrite = True
        games = reading.setups
        if games > 1 and entries:
            # a journal of the old design, which kept every game: read whole at every start
            # until it holds only the game in progress (the old file is kept in quarantine)
            self._rewrite = True
            if self.path not in self._to_quarantine:
                self._to_quarantine.append(self.path)
            self._moved.append(f"{self.path}: holds {games - 1} earlier games (a journal of an "
                               f"older version); it is rewritten with the game in progress only")
        return found

    def _remove_temporaries(self) -> None:
        for name in TEMPORARY:
            try:
                os.unlink(self.folder / name)
            except OSError:
                pass
        remove_temporaries(self.folder)

    def _read_snapshot(self, reading: _Reading) -> None:
        try:
            raw = self.snapshot_path.read_bytes()
        except FileNotFoundError:
            return
        except OSError as exc:
            reading.problems.append(f"{self.snapshot_path}: cannot read ({reason_of(exc)})")
            return
        why = self._snapshot_from(raw, reading)
        if why:
            reading.problems.append(f"{self.snapshot_path}: unusable ({why}, {len(raw)} bytes)")
            if raw:
                self._to_quarantine.append(self.snapshot_path)
            claimed = _claimed_seq(raw)
            if claimed:
                # a damaged snapshot still tells how far the game got: it is only ever written
                # after its last entry was on disk, so any entry up to it that no file holds
                # now is lost, never "repaired"
                reading.max_seq = max(reading.max_seq, claimed)

    @staticmethod
    def _snapshot_from(raw: bytes, reading: _Reading) -> str:
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
        if data.get("crc") not in (zlib.crc32(_canon({"seq": seq, "entries": entries})),
                                   _legacy_crc({"e": entries})):
            return "checksum mismatch"
        reading.snapshot = (seq, effective(entries))
        reading.max_seq = max(reading.max_seq, seq)
        return ""

    def _read_journal(self, reading: _Reading) -> None:
        """Read the journal line by line (streamed: a journal of an older version holds
        thousands of games). Entries before an intact ``setup`` line can no longer be part
        of the game to resume (that setup starts a newer one reaching at least as far), so
        they are dropped as soon as it is read: memory holds one game, whatever the file."""
        try:
            fh = open(self.path, "rb")
        except FileNotFoundError:
            if reading.snapshot and reading.snapshot[1]:
                # the journal is made before the first snapshot and only ever replaced
                # atomically: a missing one is damage, and is rewritten as a full copy
                reading.problems.append(f"{self.path}: missing, though the snapshot holds a game")
            return
        except OSError as exc:
            reading.problems.append(f"{self.path}: cannot read ({reason_of(exc)})")
            return
        try:
            with fh:
                size, nul_only = self._read_lines(fh, reading)
        except OSError as exc:
            reading.problems.append(f"{self.path}: cannot read ({reason_of(exc)})")
            return
        if not size and reading.snapshot and reading.snapshot[1]:
            reading.problems.append(f"{self.path}: empty, though the snapshot holds a game")
        if size and nul_only:                       # the whole file zeroed: one finding
            reading.damaged.clear()
            reading.problems.append(f"{self.path}: unusable (NUL-filled, {size} bytes)")
        if reading.damaged or (size and nul_only):
            self._to_quarantine.append(self.path)

    def _read_lines(self, fh, reading: _Reading) -> tuple[int, bool]:
        """Parse every line of ``fh`` into ``reading``; returns (bytes read, True when the
        file holds nothing but NUL bytes)."""
        known, size, nul_only, whole = 0, 0, True, 0
        for lineno, (start, raw, ended) in enumerate(_lines(fh), start=1):
            size = start + (len(raw) if isinstance(raw, bytes) else 0) + ended
            nul_only = nul_only and not ended and (raw == "NUL bytes" or (
                isinstance(raw, bytes) and not raw.strip(b"\0")))
            parsed = parse_line(raw, known) if isinstance(raw, bytes) else raw
            if not ended and not isinstance(parsed, str):
                reading.problems.append(f"{self.path}: line {lineno} has no line end (its write "
                                        f"was cut short); kept it")
            if isinstance(parsed, str):
                reading.damaged.append((lineno, start, parsed))
                whole += 1
                if ended and isinstance(raw, bytes) and _claimed_seq(raw):
                    # a whole line that still starts as an entry was one (a last fragment
                    # without a line end is an append cut short, never shown): it and every
                    # damaged line before it held entries after the last intact one
                    reading.trailing = whole
                continue
            self._take(reading, parsed)
            known = parsed[0]
            if parsed[0]:
                reading.last_seq, reading.trailing, whole = parsed[0], 0, 0
            else:
                reading.damaged.append((lineno, start, "checksum mismatch"))
                if parsed[2] is not None:
                    reading.last_seq, reading.trailing, whole = parsed[2][0], 1, 1
        if reading.trailing and reading.last_seq:
            # whole lines damaged after the last intact entry held entries after it: lost,
            # unless the snapshot holds them
            reading.max_seq = max(reading.max_seq, reading.last_seq + reading.trailing)
        size = max(size, fh.tell())
        return size, nul_only

    @staticmethod
    def _take(reading: _Reading, parsed: tuple[int, dict, tuple[int, dict] | None]) -> None:
        """Keep one intact line's entry (and its copy of the entry before it)."""
        seq, body, prev = parsed
        if seq:
            if body.get("kind") == "setup" and seq not in reading.bodies and seq > reading.floor:
                reading.setups += 1
                _drop_before(reading, seq)
            reading.bodies.setdefault(seq, body)
            reading.max_seq = max(reading.max_seq, seq)
        if prev is not None and prev[0] >= reading.floor:
            reading.copies.setdefault(prev[0], prev[1])

    @staticmethod
    def _merge(reading: _Reading) -> tuple[int, list[dict]]:
        """The newest game state reachable without a gap: from the snapshot or from any
        setup entry, extended by consecutive entries. Returns (its seq, effective entries)."""
        bodies = dict(reading.copies)
        bodies.update(reading.bodies)
        reading.max_seq = max([reading.max_seq] + list(bodies))
        reading.bodies = bodies
        bases = [(s - 1, []) for s, b in bodies.items() if b.get("kind") == "setup"]
        if reading.snapshot is not None:
            bases.append(reading.snapshot)
        # where the run of consecutive seqs after each seq ends, in one pass (a journal of
        # the old design holds thousands of games: walking from every setup was quadratic)
        reach: dict[int, int] = {}
        for seq in sorted(bodies, reverse=True):
            reach[seq] = reach.get(seq + 1, seq)
        best_base, best_end = None, 0
        for seq, entries in bases:
            end = reach.get(seq + 1, seq)
            if end > best_end:
                best_base, best_end = (seq, entries), end
        if best_base is None:
            return 0, []
        seq, entries = best_base
        return best_end, effective(list(entries) + [bodies[s] for s in range(seq + 1, best_end + 1)])

    def _report(self, reading: _Reading, found: Loaded) -> None:
        for lineno, offset, why in reading.damaged:
            found.problems.append(f"{self.path}: line {lineno} (byte {offset}): {why}; skipped")
        turns = sum(1 for e in found.entries if e.get("kind") == "turn")
        if reading.max_seq > found.seq:
            # every seq after the resumed one is a lost turn, unless its body is known to be
            # something else (counted over the bodies held, never over the whole span: a
            # damaged seq can be huge)
            others = sum(1 for s, b in reading.bodies.items()
                         if found.seq < s <= reading.max_seq and b.get("kind") != "turn")
            found.lost = lost_text(turns, (reading.max_seq - found.seq - others) or 1)
            found.problems.append(f"{self.folder}: entries {found.seq + 1}-{reading.max_seq} could "
                                  f"not be recovered: {found.lost}")
        if reading.damaged:
            lines = ", ".join(str(d[0]) for d in reading.damaged[:3])
            more = "..." if len(reading.damaged) > 3 else ""
            found.notice = (f"journal: {len(reading.damaged)} bad "
                            f"entr{'y' if len(reading.damaged) == 1 else 'ies'} skipped "
                            f"(line {lines}{more})")
            if not found.lost:
                found.notice += f"; resumed at turn {turns}"
        if found.lost:
            found.notice = found.lost if not found.notice else f"{found.lost}; {found.notice}"
        elif found.problems and not found.entries:
            found.notice = "journal damaged: no game to resume"
        elif found.problems and not found.notice:
            found.notice = f"journal repaired; resumed at turn {turns}"

    # ----- writing ------------------------------------------------------------------------
    def append(self, body: dict) -> int:
        """Keep one entry and write it durably (fsync); returns its seq.

        A ``setup`` entry starts the files afresh with the new game (the caller
        files the finished game first). Raises :class:`JournalError` when the
        disk refuses; the entry is kept in memory and written later.
        """
        fresh = body.get("kind") == "setup" and bool(self._entries)
        self.seq += 1
        self._entries = effective(self._entries + [body])
        self.snapshot_due = True
        try:
            make_folder(self.folder)
            if not (self._rewrite or fresh) and self._vanished():
                self._moved.append(f"{self.path}: gone or emptied while in use (folder "
                                   f"removed?); written again whole from memory")
                self._rewrite = True
            if self._rewrite or fresh:
                self._quarantine_files()
                self._rewrite_files()
            else:
                with open(self.path, "ab") as fh:
                    fh.write(_line(self.seq, body, self._last))
                    fh.flush()
                    os.fsync(fh.fileno())
                self._last = (self.seq, body)
        except OSError as exc:
            self._rewrite = True
            raise self._error(exc) from exc
        return self.seq

    def _vanished(self) -> bool:
        """True when lines were written but the file is now missing or empty: appending
        would leave a journal without the start of the game."""
        if self._last is None:
            return False
        try:
            return self.path.stat().st_size == 0
        except FileNotFoundError:
            return True

    def hold(self, body: dict) -> int:
        """Keep ``body`` in memory only (written by the next :meth:`catch_up`); returns its seq."""
        self.seq += 1
        self._entries = effective(self._entries + [body])
        self._rewrite = self.snapshot_due = True
        return self.seq

    def reset_to(self, entries: list[dict]) -> None:
        """Make ``entries`` (effective bodies, e.g. the part of a loaded game that replays)
        the journal's whole content; the old file is quarantined and the files rewritten
        by the next :meth:`catch_up` or :meth:`append`."""
        self._entries = effective(list(entries))
        self._rewrite = True
        if self.path.exists() and self.path not in self._to_quarantine:
            self._to_quarantine.append(self.path)

    def catch_up(self) -> list[str]:
        """Write whatever memory holds that the disk does not: quarantine damaged files,
        rewrite the journal and the snapshot. Returns messages for the log (where
        damaged bytes were moved). Raises :class:`JournalError`; a no-op when nothing is
        pending."""
        if not self._rewrite:
            return []
        try:
            make_folder(self.folder)
            self._quarantine_files()
            self._rewrite_files()
        except OSError as exc:
            raise self._error(exc) from exc
        return self.take_moved()

    def take_moved(self) -> list[str]:
        """Messages saying where damaged files were moved since the last call (for the log)."""
        moved, self._moved = self._moved, []
        return moved

    def _quarantine_files(self) -> None:
        """Keep each damaged file's bytes under a new name (never replacing one): in
        ``quarantine/``, or next to the file when that folder cannot take it."""
        for path in list(self._to_quarantine):
            if path.exists() and path.stat().st_size:
                kept = self._keep(path)
                self._moved.append(f"{path}: its bytes are kept in {kept}")
            self._to_quarantine.remove(path)

    def _keep(self, path: Path) -> Path:
        """``quarantine/q-<n>-<name>``; when the quarantine folder cannot be made or written
        (a file of that name, another owner), ``q-<n>-<name>`` in the journal folder. Raises
        the OSError of the journal folder when neither takes it."""
        try:
            self.quarantine.mkdir(exist_ok=True)
            kept = self._keep_in(self.quarantine, path)
        except OSError:
            return self._keep_in(self.folder, path)
        self._prune_quarantine()
        return kept

    def _prune_quarantine(self) -> None:
        """Keep ``quarantine/`` within :data:`QUARANTINE_FILES` files and
        :data:`QUARANTINE_BYTES` bytes: the oldest ``q-<n>-*`` files go first, the newest is
        always kept. Said in the log; a file that cannot be removed is left."""
        kept = sorted(((int(p.name.split("-")[1]), p) for p in self.quarantine.glob("q-*-*")
                       if p.name.split("-")[1].isdigit()), reverse=True)
        total, removed = 0, []
        for i, (_, path) in enumerate(kept):
            try:
                total += path.stat().st_size
                if i and (i >= QUARANTINE_FILES or total > QUARANTINE_BYTES):
                    path.unlink()
                    removed.append(path.name)
            except OSError:
                continue
        if removed:
            self._moved.append(f"{self.quarantine}: removed the {len(removed)} oldest kept "
                               f"file{'s' if len(removed) != 1 else ''} ({', '.join(removed[:3])}"
                               f"{', ...' if len(removed) > 3 else ''}): it keeps the newest "
                               f"{QUARANTINE_FILES} files, {QUARANTINE_BYTES >> 20} MB at most")

    def _keep_in(self, where: Path, path: Path) -> Path:
        """A new ``q-<n>-<name>`` in ``where`` holding ``path``'s bytes: a hard link, or a
        copy (fsync'd) where the file system has no hard links (FAT)."""
        taken = [int(p.name.split("-")[1]) for p in where.glob("q-*-*")
                 if p.name.split("-")[1].isdigit()]
        n = max(taken, default=0) + 1
        while True:
            target = where / f"q-{n:04d}-{path.name}"
            try:
                try:
                    os.link(path, target)
                except FileExistsError:
                    raise
                except OSError:
                    _copy_new(path, target)
            except FileExistsError:
                n += 1
                continue
            fsync_dir(where)
            fsync_dir(self.folder)
            return target

    def _rewrite_files(self) -> None:
        """Snapshot first, then the journal replaced by the effective entries under new
        seqs: at every moment one complete copy of the game is on disk."""
        self.write_snapshot()
        first = self.seq + 1
        lines, prev = [], None
        for i, body in enumerate(self._entries):
            lines.append(_line(first + i, body, prev))
            prev = (first + i, body)
        write_durably(self.path, b"".join(lines), 0o600)   # the service's alone
        if self._entries:
            self.seq = first + len(self._entries) - 1
        self._last = prev
        self._rewrite = False
        self.snapshot_due = True

    def write_snapshot(self) -> None:
        """Replace ``snapshot.json`` atomically with every effective entry so far. Raises
        OSError (no temporary file is left behind)."""
        data = {"seq": self.seq, "crc": zlib.crc32(_canon({"seq": self.seq, "entries": self._entries})),
                "entries": self._entries}
        write_durably(self.snapshot_path, json.dumps(data, separators=(",", ":")).encode(), 0o600)
        self.snapshot_due = False

    def flush_snapshot(self) -> None:
        """Write the snapshot if an entry came since the last one (called once the turn is
        shown). Raises :class:`JournalError`; it is tried again after the next entry."""
        if not self.snapshot_due or self._rewrite:
            return
        try:
            self.write_snapshot()
        except OSError as exc:
            raise self._error(exc) from exc

    def error(self, exc: OSError) -> JournalError:
        """The :class:`JournalError` for an OS error met while writing in this folder."""
        return self._error(exc)

    def _error(self, exc: OSError) -> JournalError:
        reason = reason_of(exc)
        return JournalError(f"cannot write the journal in {self.folder}: {reason} ({exc})",
                            reason, self.folder)
