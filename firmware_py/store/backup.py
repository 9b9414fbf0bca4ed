"""Backup and restore of the whole store: one ``.tar.gz`` file.

A backup holds ``backup.json`` (``{"format": "patchwork-companion-backup/1",
"games": N, "created": RFC 3339}``), every ``records/<id>.json`` and, when
there is one, ``names.json`` (the player names the box offers). The SQLite
index is not in it: it is derived from the records and rebuilt on restore.

Restore is bounded and all-or-nothing:

1. The file is read with :mod:`.tar_reader` (every header checked before a
   byte of its member is read; caps on members, each member, the total and
   extended headers, see :data:`CAPS`), one member at a time.
2. Every member is checked like any other input: ``backup.json`` and
   ``names.json`` (nesting, keys, types, each name as the box takes it),
   each record (the record format, a legal replay, and the result it claims
   equal to the replay's). Each record goes into a staging folder
   ``.restore-<random>/`` of the store, written as the service writes records.
   Anything wrong: the staging folder is removed, the store is unchanged.
3. The staging folder is marked complete (``ready``), then swapped in: its
   records are renamed into ``records/``, the names merged into
   ``names.json``, the staging folder removed, the index rebuilt. A power
   cut during the swap is finished by :func:`finish_pending` (run by the next
   ``restore`` and at the service's start); one before the mark is undone. A
   restore holds an exclusive ``flock`` on its staging folder until its swap is
   done, so one still running is never taken for one cut short.

A game the store already holds keeps the store's copy (it may have been
renamed since the backup); a store record that is not a valid record is
replaced by the backup's. Names the store gained since the backup are kept;
the backup's other names are added after them (at most ``MAX_NAMES`` in all).
"""
from __future__ import annotations

import fcntl
import io
import json
import os
import re
import secrets
import shutil
import sqlite3
import tarfile
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from ..companion.names import MAX_NAMES, NamesError, clean, load_names, save_names
from ..disk import fsync_dir, write_durably
from ..rules import RecordError, dumps_record, jsonsafe, parse_record, replay
from .history import RECORDS, History
from .tar_reader import Caps, TarError, members

FORMAT = "patchwork-companion-backup/1"
MANIFEST, NAMES, READY, BACKUP_NAMES = "backup.json", "names.json", "ready", "names-backup.json"
STAGING = ".restore-"
CAPS = Caps(members=20_001, member=64 * 1024, total=64 * 1024 * 1024, header=4096)
"""A record is 2-10 KB; 20,000 games (plus backup.json and names.json) of up to 64 KB
each, 64 MB unpacked in all, a pax header of 4 KB: far above any real store."""
_RECORD = re.compile(r"records/([0-9A-Za-z][0-9A-Za-z_-]{0,63})\.json")
_NESTING = 4                 # backup.json and names.json are one object with flat values


class BackupError(ValueError):
    """A backup file that cannot be restored; says which member and why."""


@dataclass
class Restored:
    """What :func:`restore` did: ``games`` added, ``kept`` (already in the store, kept as
    they are), ``repaired`` (store records that were not valid, replaced), names
    ``added`` from the backup, names ``kept`` that the store gained since the backup,
    names ``left_out`` (over ``MAX_NAMES``), ``indexed`` games in the history after, or
    ``index_problem``: why the index could not be rebuilt (locked by another process; the
    games are restored all the same, the service or ``history`` rebuilds it later)."""

    games: int = 0
    kept: int = 0
    repaired: int = 0
    added: list[str] = field(default_factory=list)
    kept_names: list[str] = field(default_factory=list)
    left_out: list[str] = field(default_factory=list)
    indexed: int = 0
    index_problem: str = ""


def backup(folder: str | Path, target: str | Path) -> int:
    """Write every record (and ``names.json``) of the store in ``folder`` to ``target``
    (.tar.gz, replaced durably); returns the number of games. Raises OSError."""
    folder = Path(folder)
    records = sorted((folder / RECORDS).glob("*.json")) if (folder / RECORDS).is_dir() else []
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz", format=tarfile.USTAR_FORMAT) as tar:
        manifest = {"format": FORMAT, "games": len(records),
                    "created": datetime.now(timezone.utc).astimezone().isoformat(timespec="seconds")}
        _add(tar, MANIFEST, json.dumps(manifest).encode())
        for path in records:
            _add(tar, f"{RECORDS}/{path.name}", path.read_bytes())
        names = folder / NAMES
        if names.exists():
            _add(tar, NAMES, names.read_bytes())
    write_durably(Path(target), buf.getvalue())
    return len(records)


def _add(tar: tarfile.TarFile, name: str, data: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mode = 0o600
    tar.addfile(info, io.BytesIO(data))


# ----- checking ---------------------------------------------------------------------------
def check_manifest(data: bytes, where: str) -> dict:
    """``backup.json``: exactly ``format`` (this format), ``games`` (an integer >= 0) and
    ``created`` (text). Raises :class:`BackupError`."""
    try:
        manifest = jsonsafe.loads(data, MANIFEST, _NESTING)
    except ValueError as exc:
        raise BackupError(f"{where}: {MANIFEST} is not JSON ({exc})") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise BackupError(f"{where}: {MANIFEST} is not format {FORMAT}")
    unknown = sorted(set(manifest) - {"format", "games", "created"})
    if unknown:
        raise BackupError(f"{where}: {MANIFEST} has an unknown key {unknown[0][:40]!r}")
    games = manifest.get("games")
    if type(games) is not int or games < 0:
        raise BackupError(f"{where}: {MANIFEST}: \"games\" must be a whole number of games")
    if not isinstance(manifest.get("created", ""), str):
        raise BackupError(f"{where}: {MANIFEST}: \"created\" must be a date text")
    return manifest


def check_names(data: bytes, where: str) -> list[str]:
    """``names.json``: ``{"names": [text, ...]}``, each name as the box takes it (see
    ``companion.names.clean``). Returns the names. Raises :class:`BackupError`."""
    try:
        obj = jsonsafe.loads(data, NAMES, _NESTING)
    except ValueError as exc:
        raise BackupError(f"{where}: {NAMES} is not usable JSON ({exc})") from None
    if not isinstance(obj, dict) or set(obj) != {"names"} or not isinstance(obj["names"], list) \
            or not all(isinstance(n, str) for n in obj["names"]):
        raise BackupError(f"{where}: {NAMES} must be {{\"names\": [a name, ...]}}")
    try:
        return clean(obj["names"])
    except NamesError as exc:
        raise BackupError(f"{where}: {NAMES}: {exc}") from None


def check_record(data: bytes, where: str):
    """A record of the backup: the record format, a legal replay, and the result it claims
    (when it claims one) equal to the replay's. Returns the record. Raises
    :class:`BackupError`."""
    try:
        record = parse_record(data)
        _, result = replay(record)
    except (RecordError, ValueError, RecursionError) as exc:
        raise BackupError(f"{where}: not a valid game record: {exc}") from None
    claimed = record.result
    if claimed is not None and (claimed["scores"] != list(result.scores)
                                or claimed["winner"] != result.winner):
        raise BackupError(f"{where}: its result {claimed} disagrees with its replay "
                          f"(scores {list(result.scores)}, winner {result.winner}): edited?")
    return record


# ----- restoring --------------------------------------------------------------------------
def restore(folder: str | Path, source: str | Path) -> Restored:
    """Restore the backup ``source`` into the store in ``folder`` (see the module text).
    Raises :class:`BackupError` (the store unchanged) or OSError / sqlite3.Error (from the
    swap or a damaged index: :func:`finish_pending` completes it); an index locked by
    another process is said in ``index_problem``, not raised."""
    folder = Path(folder)
    finish_pending(folder)
    folder.mkdir(parents=True, exist_ok=True)
    staging = folder / f"{STAGING}{secrets.token_hex(4)}"
    (staging / RECORDS).mkdir(parents=True)
    held = _hold(staging, wait=True)           # in progress: another start leaves it alone
    try:
        try:
            done = _stage(folder, staging, source)
            write_durably(staging / READY, b"")
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
        done.added, done.kept_names, done.left_out = _swap(folder, staging)
    finally:
        os.close(held)
    try:
        done.indexed = History(folder).rebuild().games
    except sqlite3.OperationalError as exc:     # locked: the games are in, the index lags
        done.index_problem = str(exc)
    return done


def _stage(folder: Path, staging: Path, source: str | Path) -> Restored:
    """Check every member of ``source`` and write what is to be restored into ``staging``."""
    where = str(source)
    manifest, names, seen, done = None, None, set(), Restored()
    try:
        with open(source, "rb") as stream:
            for name, data in members(stream, CAPS, where):
                if name in seen:
                    raise BackupError(f"{where}: {name!r} is in the backup twice")
                seen.add(name)
                if name == MANIFEST:
                    manifest = check_manifest(data, where)
                elif name == NAMES:
                    names = check_names(data, where)
                elif _RECORD.fullmatch(name):
                    _stage_record(folder, staging, name, check_record(data, f"{where}: {name}"), done)
                else:
                    raise BackupError(f"{where}: {name[:80]!r} does not belong in a backup")
    except TarError as exc:
        raise BackupError(str(exc)) from None
    records = len(seen - {MANIFEST, NAMES})
    if manifest is None:
        raise BackupError(f"{where}: no {MANIFEST}: not a patchwork-companion backup")
    if manifest["games"] != records:
        raise BackupError(f"{where}: {MANIFEST} lists {manifest['games']} games but the file "
                          f"holds {records} (truncated?)")
    if names is not None:
        write_durably(staging / BACKUP_NAMES, json.dumps({"names": names}).encode("utf-8"))
    return done


def _stage_record(folder: Path, staging: Path, name: str, record, done: Restored) -> None:
    """Stage one checked record unless the store holds a valid copy of that game already."""
    target = folder / name
    if target.exists():
        try:
            replay(parse_record(target.read_bytes()))
            done.kept += 1
            return
        except (OSError, RecordError, ValueError, RecursionError):
            done.repaired += 1
    else:
        done.games += 1
    write_durably(staging / name, (dumps_record(record) + "\n").encode())


def _swap(folder: Path, staging: Path) -> tuple[list[str], list[str], list[str]]:
    """Move a complete staging folder's records into the store, merge its names; remove it.
    Returns (names added, names of the store kept, names left out)."""
    records = folder / RECORDS
    records.mkdir(exist_ok=True)
    for path in sorted((staging / RECORDS).glob("*.json")):
        os.replace(path, records / path.name)
    fsync_dir(records)
    merged = ([], [], [])
    backup_names = staging / BACKUP_NAMES
    if backup_names.exists():
        theirs = json.loads(backup_names.read_text("utf-8"))["names"]
        merged = _merge_names(folder / NAMES, theirs)
        backup_names.unlink()
    (staging / RECORDS).rmdir()
    (staging / READY).unlink()
    staging.rmdir()
    fsync_dir(folder)
    return merged


def _merge_names(path: Path, theirs: list[str]) -> tuple[list[str], list[str], list[str]]:
    """The store's names first (those added since the backup are kept), then the backup's
    others, at most ``MAX_NAMES``. Returns (added, store's names the backup lacks, left out)."""
    ours = load_names(path)
    known = {n.lower() for n in ours}
    new = [n for n in theirs if n.lower() not in known]
    room = max(0, MAX_NAMES - len(ours))
    added, left_out = new[:room], new[room:]
    if added:
        save_names(path, ours + added)
    in_backup = {n.lower() for n in theirs}
    return added, [n for n in ours if n.lower() not in in_backup], left_out


def finish_pending(folder: str | Path, rebuild: bool = True) -> list[str]:
    """Finish a restore cut short (power cut, kill): a staging folder marked complete is
    swapped in; one that is not is removed (the store was not changed). Then the index is
    rebuilt, unless ``rebuild`` is False (the game service leaves that to its index
    thread, which finds the rows missing). Returns one line per folder for the log.
    Raises OSError, sqlite3.Error."""
    folder = Path(folder)
    said = []
    for staging in sorted(folder.glob(f"{STAGING}*")) if folder.is_dir() else []:
        held = _hold(staging, wait=False) if staging.is_dir() else None
        if held is None:
            continue                            # not a folder, or a restore still running
        try:
            if not staging.is_dir():
                continue                        # finished by that restore meanwhile
            if (staging / READY).exists():
                _swap(folder, staging)
                said.append(f"{staging}: a restore cut short was completed")
            else:
                shutil.rmtree(staging)
                said.append(f"{staging}: a restore cut short before its check ended was "
                            f"undone (the store was not changed)")
        finally:
            os.close(held)
    if rebuild and any("completed" in s for s in said):
        History(folder).rebuild()
    return said


def _hold(staging: Path, wait: bool) -> int | None:
    """An open descriptor of the folder ``staging`` with an exclusive ``flock`` on it: the
    restore that made it holds it until its swap is done, so :func:`finish_pending` in
    another process (the service's start, a second ``restore``) never removes or swaps a
    restore that is still running. ``wait`` False: None when another process holds it
    (or the folder is gone). Raises OSError (``wait`` True)."""
    try:
        fd = os.open(staging, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        if wait:
            raise
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
    except BlockingIOError:
        os.close(fd)
        return None
    except BaseException:
        os.close(fd)
        raise
    return fd
