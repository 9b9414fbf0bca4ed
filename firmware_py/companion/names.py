"""The player names the box knows: offered at the start of a game (NEXT/OK), edited on the web page.

A small JSON file, ``names.json`` in the state folder: ``{"names": ["Anna", ...]}``.
"Green" and "Yellow" are always offered first (the defaults) and never stored.
Written with ``firmware_py.disk.write_durably`` (a temporary file of its own, fsync,
rename, fsync of the folder; nothing left behind on an error).
"""
from __future__ import annotations

import json
from pathlib import Path

from ..disk import make_folder, write_durably
from ..rules import jsonsafe

DEFAULTS = ("Green", "Yellow")
MAX_NAMES = 40
MAX_LENGTH = 24


class NamesError(ValueError):
    """A name that cannot be kept; the message says which and why."""


def check_name(raw) -> str:
    """One name, spaces tidied; raises :class:`NamesError` when it is empty, longer than
    ``MAX_LENGTH`` or has characters that cannot be shown."""
    name = " ".join(str(raw).split())
    if not name:
        raise NamesError("a name cannot be empty")
    if len(name) > MAX_LENGTH:
        raise NamesError(f"name {name[:30]!r} is longer than {MAX_LENGTH} characters")
    if any(not ch.isprintable() for ch in name):
        raise NamesError(f"name {name!r} has characters that cannot be shown")
    return name


def clean(names) -> list[str]:
    """Trimmed, unique (case-insensitive), defaults removed, in the given order.

    Raises :class:`NamesError` for a name longer than ``MAX_LENGTH``, with control
    characters, or more than ``MAX_NAMES`` names."""
    out, seen = [], {d.lower() for d in DEFAULTS}
    for raw in names:
        if not " ".join(str(raw).split()):
            continue
        name = check_name(raw)
        if name.lower() not in seen:
            seen.add(name.lower())
            out.append(name)
    if len(out) > MAX_NAMES:
        raise NamesError(f"{len(out)} names: at most {MAX_NAMES} are kept")
    return out


def load_names(path: str | Path) -> list[str]:
    """The stored names (not the defaults); [] when the file is missing, unreadable or not
    ``{"names": [text, ...]}`` (nested too deeply, other types: never an exception)."""
    try:
        data = jsonsafe.loads(Path(path).read_bytes(), str(path), 4)
        names = data.get("names", []) if isinstance(data, dict) else []
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            return []
        return clean(names)
    except (OSError, ValueError):
        return []


def offered(path: str | Path | None) -> list[str]:
    """What the box offers at setup: the defaults, then the stored names."""
    return list(DEFAULTS) + (load_names(path) if path else [])


def save_names(path: str | Path, names) -> list[str]:
    """Store ``names`` (cleaned, see :func:`clean`) durably; returns what was stored."""
    kept = clean(names)
    path = Path(path)
    make_folder(path.parent)
    # 0640: the web page's user writes it, the game service (its group) reads it
    write_durably(path, json.dumps({"names": kept}, ensure_ascii=False).encode("utf-8"), 0o640)
    return kept
