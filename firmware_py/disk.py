"""Durable writes: the one way the package replaces a file that must survive a power cut.

Write-then-rename is only durable with an fsync of the file before the rename
and an fsync of its folder after it; SD cards cut mid-write otherwise leave
empty or NUL-filled files. Every writer uses :func:`write_durably`, which also
gives each write a temporary file of its own, so two writers (two processes,
or two threads) replacing files in one folder never write through the same
temporary name: each target ends up holding exactly one writer's bytes.

Standard library only; no clock, no threads.
"""
from __future__ import annotations

import os
import secrets
import tempfile
from pathlib import Path

__all__ = ["fsync_dir", "is_temporary", "make_folder", "remove_temporaries", "replace_symlink",
           "write_durably", "write_in_ram", "write_text_durably"]


def fsync_dir(path: str | os.PathLike) -> None:
    """fsync the folder ``path`` so that a rename or a new file in it survives a
    power cut. Raises OSError if the folder cannot be opened or synced."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def make_folder(path: str | os.PathLike, shared: bool = False) -> Path:
    """Create the folder ``path`` (and missing parents) if it is missing, private to its
    owner whatever the umask: mode 0700, or with ``shared`` 0700 plus the group bits of
    the folder it is in (so ``records/`` in a folder the group may use, such as systemd's
    StateDirectory of mode 1770, is the group's too). An existing folder is left as it
    is. Returns ``path``; raises OSError (FileExistsError for a file in the way)."""
    folder = Path(path)
    if folder.is_dir():
        return folder
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    mode = 0o700
    if shared:
        mode |= folder.parent.stat().st_mode & 0o070
    os.chmod(folder, mode)
    return folder


def write_durably(path: str | os.PathLike, data: bytes, mode: int = 0o644) -> None:
    """Replace the file ``path`` by ``data`` (bytes) so that after a power cut it
    holds either its old content or all of ``data``, never a mix or nothing.

    Steps: a temporary file with a unique name in the target's folder (created
    with ``O_EXCL``, permissions ``mode``), write, fsync the file, rename over
    ``path``, fsync the folder. On any error (OSError from the disk, or anything
    else raised half-way) the temporary file is removed and the error re-raised;
    ``path`` is then unchanged. A failed fsync of the folder after the rename is
    re-raised too (the new content is in place but may not survive a power cut).
    """
    _replace(Path(path), data, mode, durable=True)


def write_in_ram(path: str | os.PathLike, data: bytes, mode: int = 0o644) -> None:
    """Replace ``path`` by ``data`` for readers only, never for a power cut: the same
    unique temporary file and rename as :func:`write_durably` (a reader sees the old
    or the new file, never half of one), without any fsync. Only for files in a
    folder that lives in RAM (``/run``: the live feed), where an fsync buys nothing
    and would wear nothing but time. Errors as :func:`write_durably`."""
    _replace(Path(path), data, mode, durable=False)


VANISHED_RETRIES = 3    #: writes again when a start-up clean-up took the temporary file


def _replace(target: Path, data: bytes, mode: int, durable: bool) -> None:
    """Write ``data`` under a temporary name and rename it over ``target``. A process
    starting up removes the temporary files a killed writer left (:func:`remove_temporaries`)
    and cannot tell them from one being written at that instant: when the rename finds
    the temporary file gone, the whole write is made again (at most
    :data:`VANISHED_RETRIES` times), so a writer in flight never fails for it."""
    for attempt in range(VANISHED_RETRIES):
        tmp = _write_temporary(target, data, mode, durable)
        try:
            _rename_into(tmp, target, durable)
            return
        except FileNotFoundError:       # the temporary file (or the whole folder) went
            if attempt == VANISHED_RETRIES - 1 or not os.path.isdir(target.parent):
                raise


def _write_temporary(target: Path, data: bytes, mode: int, durable: bool) -> str:
    """A new temporary file (``.<name>.<random>.tmp``) beside ``target`` holding ``data``,
    fsynced when ``durable``; its path. On any error it is removed and the error re-raised."""
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        try:
            os.fchmod(fd, mode)
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            if durable:
                os.fsync(fd)
        finally:
            os.close(fd)
    except BaseException:
        _discard(tmp)
        raise
    return tmp


def replace_symlink(path: str | os.PathLike, target: str, durable: bool = True) -> None:
    """Make ``path`` a symbolic link to ``target`` in one step: a new link under a unique
    temporary name (``.<name>.<random>.tmp``) in the same folder, renamed over ``path``
    (a reader finds the old link or the new one, never none), then the folder fsynced
    unless ``durable`` is False (a link in RAM). On any error the temporary link is
    removed and the error re-raised. Raises OSError (e.g. IsADirectoryError)."""
    path = Path(path)
    while True:
        tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
        try:
            os.symlink(target, tmp)
            break
        except FileExistsError:
            continue
    _rename_into(tmp, path, durable)


def _rename_into(tmp: str | Path, target: Path, durable: bool) -> None:
    """Rename ``tmp`` over ``target`` (``tmp`` removed if that fails), then fsync the folder."""
    try:
        os.replace(tmp, target)
    except BaseException:
        _discard(tmp)
        raise
    if durable:
        fsync_dir(target.parent)


def _discard(tmp: str | Path) -> None:
    try:
        os.unlink(tmp)
    except OSError:
        pass


def is_temporary(name: str) -> bool:
    """True for the name of a temporary file this module makes (``.<target>.<random>.tmp``):
    one left by a process killed between creating and renaming it."""
    return name.startswith(".") and name.endswith(".tmp")


def remove_temporaries(folder: str | os.PathLike) -> list[str]:
    """Remove the temporary files a killed writer left in ``folder`` (see
    :func:`is_temporary`); returns their names. Called at start-up; a writer of this
    module whose temporary file it takes at that very instant writes again (see
    :func:`write_durably`). Missing folder: []."""
    removed = []
    try:
        names = os.listdir(folder)
    except OSError:
        return removed
    for name in names:
        if is_temporary(name):
            try:
                os.unlink(os.path.join(folder, name))
                removed.append(name)
            except OSError:
                pass
    return removed


def write_text_durably(path: str | os.PathLike, text: str, mode: int = 0o644) -> None:
    """:func:`write_durably` for text, encoded as UTF-8."""
    write_durably(path, text.encode("utf-8"), mode)
