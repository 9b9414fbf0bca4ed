"""Backup and restore of the whole store: one ``.tar.gz`` file.

A backup holds ``backup.json`` (``{"format": "patchwork-companion-backup/1",
"games": N, "created": RFC 3339}``), every ``records/<id>.json`` and, when
there is one, ``names.json`` (the player names the box offers). The SQLite
index is not in it: it is derived from the records and rebuilt on restore.

Restore checks the whole file first (format, member names, every record
replays) and writes nothing when anything is wrong. Then it adds the games
to the store (a game already there is replaced by the backup's copy, other
games are kept), replaces ``names.json`` if the backup has one, and rebuilds
the index.
"""
from __future__ import annotations

import io
import json
import re
import tarfile
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from ..disk import write_durably
from ..rules import RecordError, parse_record, replay
from .history import RECORDS, History

FORMAT = "patchwork-companion-backup/1"
NAMES = "names.json"
MAX_MEMBER = 4 * 1024 * 1024          #: no record is anywhere near this big
_RECORD = re.compile(r"records/[A-Za-z0-9._-]{1,80}\.json")


class BackupError(ValueError):
    """A backup file that cannot be restored; says which member and why."""


@dataclass
class Restored:
    """What :func:`restore` did: ``games`` written, ``names`` restored, ``indexed`` games."""

    games: int
    names: bool
    indexed: int


def backup(folder: str | Path, target: str | Path) -> int:
    """Write every record (and ``names.json``) of the store in ``folder`` to ``target``
    (.tar.gz, replaced atomically); returns the number of games. Raises OSError."""
    folder = Path(folder)
    records = sorted((folder / RECORDS).glob("*.json")) if (folder / RECORDS).is_dir() else []
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        manifest = {"format": FORMAT, "games": len(records),
                    "created": datetime.now(timezone.utc).astimezone().isoformat(timespec="seconds")}
        _add(tar, "backup.json", json.dumps(manifest).encode())
        for path in records:
            _add(tar, f"{RECORDS}/{path.name}", path.read_bytes())
        names = folder / NAMES
        if names.exists():
            _add(tar, NAMES, names.read_bytes())
    target = Path(target)
    write_durably(target, buf.getvalue())
    return len(records)


def _add(tar: tarfile.TarFile, name: str, data: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mode = 0o600
    tar.addfile(info, io.BytesIO(data))


def read_backup(source: str | Path) -> tuple[dict[str, bytes], bytes | None]:
    """The records (member name -> bytes) and names.json of a backup, all checked.
    Raises :class:`BackupError` naming the member and the problem, or OSError."""
    try:
        tar = tarfile.open(source, mode="r:gz")
    except (tarfile.TarError, EOFError) as exc:
        raise BackupError(f"{source}: not a backup file (.tar.gz): {exc}") from None
    records, names, manifest = {}, None, None
    with tar:
        for member in tar:
            data = _member(tar, member, source)
            if member.name == "backup.json":
                manifest = _manifest(data, source)
            elif member.name == NAMES:
                names = data
            elif _RECORD.fullmatch(member.name):
                _check_record(data, f"{source}: {member.name}")
                records[member.name] = data
            else:
                raise BackupError(f"{source}: {member.name!r} does not belong in a backup")
    if manifest is None:
        raise BackupError(f"{source}: no backup.json: not a patchwork-companion backup")
    if manifest.get("games") != len(records):
        raise BackupError(f"{source}: backup.json lists {manifest.get('games')} games but the "
                          f"file holds {len(records)} (truncated?)")
    return records, names


def _member(tar, member, source) -> bytes:
    if not member.isfile():
        raise BackupError(f"{source}: {member.name!r} is not a plain file")
    if member.size > MAX_MEMBER:
        raise BackupError(f"{source}: {member.name!r} is {member.size} bytes, too big for a record")
    try:
        return tar.extractfile(member).read()
    except (tarfile.TarError, EOFError, OSError) as exc:
        raise BackupError(f"{source}: {member.name!r} cannot be read: {exc}") from None


def _manifest(data: bytes, source) -> dict:
    try:
        manifest = json.loads(data)
    except ValueError:
        raise BackupError(f"{source}: backup.json is not JSON") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise BackupError(f"{source}: backup.json is not format {FORMAT}")
    return manifest


def _check_record(data: bytes, where: str) -> None:
    try:
        replay(parse_record(data))
    except (RecordError, ValueError) as exc:
        raise BackupError(f"{where}: not a valid game record: {exc}") from None


def restore(folder: str | Path, source: str | Path) -> Restored:
    """Restore the backup ``source`` into the store in ``folder`` (see the module text).
    Raises :class:`BackupError` (nothing written) or OSError."""
    records, names = read_backup(source)
    folder = Path(folder)
    (folder / RECORDS).mkdir(parents=True, exist_ok=True)
    for name, data in records.items():
        write_durably(folder / name, data)
    if names is not None:
        write_durably(folder / NAMES, names)
    report = History(folder).rebuild()
    return Restored(len(records), names is not None, report.games)
