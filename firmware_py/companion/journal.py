"""The journal: every accepted turn on disk before its output is shown.

``journal.jsonl`` is append-only, one entry per line, fsync'd per entry; each
line is ``{"seq": n, "crc": crc32-of-body, "body": {...}}``. ``snapshot.json``
holds every effective entry up to some ``seq`` and is replaced atomically
(write, fsync, rename, fsync the folder), so a power cut never leaves it half
written. On load, the snapshot is read first, then the journal lines after it;
the first line that is torn or corrupt ends the good part (it is reported, and
the files are rewritten from the last good state before anything is appended).

Entry bodies: ``{"kind": "setup", "setup": {...}}``, ``{"kind": "turn",
"moves": [...]}``, ``{"kind": "undo"}``, ``{"kind": "end"}``.
"""
from __future__ import annotations

import json
import os
import zlib
from dataclasses import dataclass, field
from pathlib import Path

from ..rules import jsonsafe

SNAPSHOT_EVERY = 16


class JournalError(OSError):
    """The journal could not be written (disk full, read-only, vanished folder)."""


@dataclass
class Loaded:
    """What :meth:`Journal.load` found: the effective ``entries`` (bodies, in
    order), the last good ``seq``, and ``problems`` (human-readable, for the log/OLED)."""

    entries: list[dict] = field(default_factory=list)
    seq: int = 0
    problems: list[str] = field(default_factory=list)


def _crc(body: dict) -> int:
    return zlib.crc32(json.dumps(body, sort_keys=True, separators=(",", ":")).encode())


def _line(seq: int, body: dict) -> bytes:
    return (json.dumps({"seq": seq, "crc": _crc(body), "body": body},
                       separators=(",", ":")) + "\n").encode()


def fsync_dir(path: Path) -> None:
    """fsync a folder, so a rename or a new file in it survives a power cut."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def effective(entries: list[dict]) -> list[dict]:
    """Fold undo entries away: the turns of the current game after its setup.

    A ``setup`` entry starts a new game (earlier entries are dropped); an
    ``undo`` removes the last ``turn`` or ``end`` entry.
    """
    out: list[dict] = []
    for body in entries:
        kind = body.get("kind")
        if kind == "setup":
            out = [body]
        elif kind == "undo":
            if out and out[-1].get("kind") in ("turn", "end"):
                out.pop()
        else:
            out.append(body)
    return out


class Journal:
    """The journal files in ``folder`` (created if missing).

    :meth:`append` raises :class:`JournalError` when the disk refuses; the
    caller keeps the game in memory and warns, and the next append tries to
    catch up by writing a fresh snapshot.
    """

    def __init__(self, folder: str | Path):
        self.folder = Path(folder)
        self.path = self.folder / "journal.jsonl"
        self.snapshot_path = self.folder / "snapshot.json"
        self.seq = 0
        self._entries: list[dict] = []
        self._dirty = False
        self._unfinished = 0
        self._since_snapshot = 0

    def load(self) -> Loaded:
        """Read the snapshot and the journal; return the effective entries.

        Never raises for bad content: a torn or corrupt line ends the good part
        and is reported in ``problems``; the files are then rewritten.
        """
        found = Loaded()
        self._unfinished = 0
        snap = self._read_snapshot(found)
        entries = list(snap.get("entries", []))
        seq = snap.get("seq", 0)
        for lineno, raw in enumerate(self._read_lines(found), start=1):
            body, line_seq, problem = self._parse_line(raw)
            if not problem and lineno == self._unfinished:
                found.problems.append(f"{self.path}: line {lineno} has no line end (its write "
                                      f"was cut short); kept it, rewriting the journal")
            if problem:
                found.problems.append(f"{self.path}: line {lineno}: {problem}; "
                                      f"resumed from the last good entry (seq {seq})")
                self._dirty = True
                break
            if line_seq <= seq:
                continue
            if line_seq != seq + 1:
                found.problems.append(f"{self.path}: line {lineno}: seq {line_seq} after {seq}; "
                                      f"resumed from the last good entry")
                self._dirty = True
                break
            entries.append(body)
            seq = line_seq
        self.seq = seq
        self._entries = effective(entries)
        found.entries, found.seq = list(self._entries), seq
        return found

    def _read_snapshot(self, found: Loaded) -> dict:
        try:
            data = jsonsafe.loads(self.snapshot_path.read_bytes(), "the snapshot")
            if not isinstance(data, dict) or data.get("crc") != _crc({"e": data.get("entries")}):
                raise ValueError("checksum mismatch")
            if not isinstance(data.get("seq"), int):
                raise ValueError("no seq")
            return data
        except FileNotFoundError:
            return {}
        except (OSError, ValueError, TypeError) as exc:
            found.problems.append(f"{self.snapshot_path}: unreadable snapshot ({exc}); "
                                  f"using the journal alone")
            self._dirty = True
            return {}

    def _read_lines(self, found: Loaded) -> list[bytes]:
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return []
        except OSError as exc:
            found.problems.append(f"{self.path}: cannot read ({exc})")
            return []
        lines = data.split(b"\n")
        if lines and lines[-1] == b"":
            lines.pop()
        elif lines and lines[-1]:
            # the last write was cut before its newline: even if that line reads well,
            # the next append must not be glued onto it, so the files are rewritten first
            self._dirty = True
            self._unfinished = len(lines)
        return lines

    @staticmethod
    def _parse_line(raw: bytes) -> tuple[dict, int, str]:
        try:
            obj = jsonsafe.loads(raw, "the line")    # ValueError also for hostile nesting
            body, seq = obj["body"], obj["seq"]
            if not isinstance(body, dict) or not isinstance(seq, int):
                return {}, 0, "malformed entry"
            if obj["crc"] != _crc(body):
                return {}, 0, "checksum mismatch"
            return body, seq, ""
        except (ValueError, KeyError, TypeError):
            return {}, 0, "torn or garbled line"

    def append(self, body: dict) -> int:
        """Write one entry durably (fsync) and return its seq. Raises :class:`JournalError`."""
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            if self._dirty:
                self._rewrite()
            seq = self.seq + 1
            with open(self.path, "ab") as fh:
                fh.write(_line(seq, body))
                fh.flush()
                os.fsync(fh.fileno())
        except OSError as exc:
            self._remember(body)
            self._dirty = True
            raise JournalError(f"cannot write the journal in {self.folder}: {exc}") from exc
        self.seq = seq
        self._entries = effective(self._entries + [body])
        self._since_snapshot += 1
        if self._since_snapshot >= SNAPSHOT_EVERY:
            self._try_snapshot()
        return seq

    def reset_to(self, entries: list[dict]) -> None:
        """Make ``entries`` (effective bodies, e.g. the part of a loaded game that
        replays) the journal's whole content; the files are rewritten before the
        next entry is appended."""
        self._entries = effective(list(entries))
        self._dirty = True

    def _remember(self, body: dict) -> None:
        """Keep an entry that could not be written, so a later rewrite saves it."""
        self.seq += 1
        self._entries = effective(self._entries + [body])

    def _try_snapshot(self) -> None:
        try:
            self.write_snapshot()
        except OSError:
            self._dirty = True

    def write_snapshot(self) -> None:
        """Replace ``snapshot.json`` atomically with every effective entry so far."""
        data = {"seq": self.seq, "crc": _crc({"e": self._entries}), "entries": self._entries}
        tmp = self.snapshot_path.with_suffix(".tmp")
        with open(tmp, "wb") as fh:
            fh.write(json.dumps(data, separators=(",", ":")).encode())
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, self.snapshot_path)
        fsync_dir(self.folder)
        self._since_snapshot = 0

    def _rewrite(self) -> None:
        """After a bad tail or a failed write: snapshot the good state, empty the journal."""
        self.write_snapshot()
        with open(self.path, "wb") as fh:
            fh.flush()
            os.fsync(fh.fileno())
        fsync_dir(self.folder)
        self._dirty = False

    def archive(self, name: str) -> None:
        """Move the finished game's files aside as ``<name>.journal.jsonl`` (best effort)."""
        for path in (self.path, self.snapshot_path):
            if path.exists():
                try:
                    os.replace(path, path.with_name(f"{name}.{path.name}"))
                except OSError:
                    pass
        self.seq, self._entries, self._dirty = 0, [], False
