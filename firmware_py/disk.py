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
import tempfile
from pathlib import Path

__all__ = ["fsync_dir", "make_folder", "write_durably", "write_text_durably"]


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
    target = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        try:
            os.fchmod(fd, mode)
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    fsync_dir(target.parent)


def write_text_durably(path: str | os.PathLike, text: str, mode: int = 0o644) -> None:
    """:func:`write_durably` for text, encoded as UTF-8."""
    write_durably(path, text.encode("utf-8"), mode)
