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

This module writes the files and keeps damaged ones aside (quarantine); the line
and snapshot format with its checksums is :mod:`.journal_format`, reading the
folder back :mod:`.journal_reading`, the write errors :mod:`.journal_errors`.
"""
from __future__ import annotations

import os
from pathlib import Path

from ..disk import fsync_dir, make_folder, remove_temporaries, write_durably
from .journal_errors import REASONS, JournalError, reason_of
from .journal_format import effective, encode_line, encode_snapshot, parse_line
from .journal_format import legacy_crc as _legacy_crc  # noqa: F401  (journals of older versions)
from .journal_reading import Loaded, Reading, lost_text, merge, read_journal, read_snapshot, report

__all__ = ["JOURNAL", "QUARANTINE", "QUARANTINE_BYTES", "QUARANTINE_FILES", "REASONS", "SNAPSHOT",
           "TEMPORARY", "Journal", "JournalError", "Loaded", "effective", "lost_text", "parse_line",
           "reason_of", "writable_error", "writable_problem"]

JOURNAL, SNAPSHOT, QUARANTINE = "journal.jsonl", "snapshot.json", "quarantine"
TEMPORARY = ("journal.tmp", "snapshot.tmp")   # the temporary names of older versions
QUARANTINE_FILES = 32       # quarantine/ keeps at most this many files (the newest) ...
QUARANTINE_BYTES = 64 << 20  # ... of at most this many bytes in all (the newest always stays)
_line = encode_line         # the name tests and older callers use


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
        reading = Reading()
        read_snapshot(self.snapshot_path, reading)
        read_journal(self.path, reading)
        self._to_quarantine.extend(reading.damaged_files)
        seq, entries = merge(reading)
        found = Loaded(entries, seq, reading.problems, len(reading.damaged))
        report(reading, found, self.path, self.folder)
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
        write_durably(self.snapshot_path, encode_snapshot(self.seq, self._entries), 0o600)
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
