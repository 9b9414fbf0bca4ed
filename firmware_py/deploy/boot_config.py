"""Editing the Raspberry Pi firmware's config.txt: the ``dtparam`` lines the box needs
and the managed core-clock block, keeping every other line as it is."""
from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path

from .layout import BOOT_CONFIGS, under

BLOCK_BEGIN = "# patchwork-companion: begin (managed by `patchwork-companion install`)"
BLOCK_END = "# patchwork-companion: end"
CLOCK_BEGIN = "# patchwork-companion core clock: begin (managed by `patchwork-companion install`)"
CLOCK_END = "# patchwork-companion core clock: end"
_DTPARAM_ALIASES = {"i2c": "i2c_arm", "i2c_baudrate": "i2c_arm_baudrate"}
_TRUE = {"on", "true", "yes", "okay", "1"}
_FALSE = {"off", "false", "no", "0"}


def _parse_dtparam(line: str) -> list[tuple[str, str]] | None:
    match = re.fullmatch(r"\s*dtparam\s*=\s*(.*?)\s*", line)
    if not match:
        return None
    items = []
    for part in match.group(1).split(","):
        name, sep, value = part.strip().partition("=")
        if name.strip():
            items.append((name.strip(), value.strip() if sep else "on"))
    return items


def _same_value(have: str, want: str) -> bool:
    have, want = have.lower(), want.lower()
    if want in _TRUE:
        return have in _TRUE
    if want in _FALSE:
        return have in _FALSE
    return have == want


def edit_boot_config(text: str, wanted: Mapping[str, str]) -> str:
    """Return config.txt text in which each ``dtparam`` in ``wanted`` has its value.

    A parameter is already right when its last assignment in the file is
    unconditional (before any ``[filter]`` section, or after ``[all]``) and has
    the wanted value; ``i2c``/``i2c_baudrate`` count as ``i2c_arm``/``i2c_arm_baudrate``
    and a bare ``dtparam=name`` means ``on``. An unconditional last assignment
    with another value is rewritten in place (other parameters on a
    comma-separated line are kept); otherwise the parameter goes into a managed
    block at the end of the file, under ``[all]``. Every other line is kept as is.

    Args:
        text: the current file (may be empty).
        wanted: e.g. ``{"i2c_arm": "on", "i2c_arm_baudrate": "400000"}``.

    Returns:
        The new text; equal to ``text`` when nothing needed changing.
    """
    lines = text.splitlines()
    changed, missing = _set_in_place(lines, _last_assignments(lines), wanted)
    if missing:
        changed = True
        _append_block(lines, missing)
    return "\n".join(lines) + "\n" if changed else text


def _last_assignments(lines: Sequence[str]) -> dict[str, tuple[int, bool, str]]:
    """Per ``dtparam`` name (aliases resolved) its last assignment in ``lines``:
    ``(line index, unconditional, value)``, unconditional meaning before any
    ``[filter]`` section or after ``[all]``."""
    unconditional = True
    last: dict[str, tuple[int, bool, str]] = {}
    for index, line in enumerate(lines):
        stripped = line.strip()
        if stripped.startswith("[") and stripped.endswith("]"):
            unconditional = stripped[1:-1].strip().lower() == "all"
            continue
        for name, value in _parse_dtparam(line) or ():
            last[_DTPARAM_ALIASES.get(name, name)] = (index, unconditional, value)
    return last


def _set_in_place(lines: list[str], last: Mapping[str, tuple[int, bool, str]],
                  wanted: Mapping[str, str]) -> tuple[bool, dict[str, str]]:
    """Rewrite in ``lines`` each unconditional last assignment of a ``wanted`` parameter
    that has another value; return whether a line changed and the parameters that have
    no unconditional last assignment (name -> wanted value), in ``wanted``'s order."""
    changed = False
    missing: dict[str, str] = {}
    for name, value in wanted.items():
        found = last.get(name)
        if found is None or not found[1]:
            missing[name] = value
        elif not _same_value(found[2], value):
            lines[found[0]] = _rewrite_dtparam(lines[found[0]], name, value)
            changed = True
    return changed, missing


def _append_block(lines: list[str], missing: Mapping[str, str]) -> None:
    """Put the managed block, under ``[all]``, at the end of ``lines`` with the
    ``missing`` parameters; the lines of an earlier managed block that set none of
    them move into it, where nothing after it overrides them."""
    kept = _take_block(lines, missing)  # move our block to the end, where nothing overrides it
    while lines and not lines[-1].strip():
        lines.pop()
    if lines:
        lines.append("")
    lines += [BLOCK_BEGIN, "[all]", *kept, *(f"dtparam={k}={v}" for k, v in missing.items()), BLOCK_END]


def _take_block(lines: list[str], missing: Mapping[str, str]) -> list[str]:
    """Remove the managed block from ``lines``; return its setting lines (not blank,
    not ``[all]``) that set none of the ``missing`` parameters ([] without a block)."""
    block = _find_block(lines)
    if block is None:
        return []
    start, end = block
    kept = [ln for ln in lines[start + 1 : end] if ln.strip() and ln.strip() != "[all]"]
    del lines[start : end + 1]
    return [ln for ln in kept if not _sets_any(ln, missing)]


def edit_clock_block(text: str, sections: Sequence[tuple[str, Sequence[str]]]) -> str:
    """Return config.txt text whose managed core-clock block holds ``sections``.

    The block is ``[filter]`` then its lines for each (filter, lines) pair, closed
    by ``[all]`` so that nothing after it is filtered; it goes at the end of the
    file. An identical block is left where it is (a second run changes nothing);
    a different one is replaced; no sections remove the block. Every other line
    is kept as is.

    Args:
        text: the current file (may be empty).
        sections: e.g. ``(("pi4", ("core_freq=500", "core_freq_min=500")),)``.

    Returns:
        The new text; equal to ``text`` when nothing needed changing.
    """
    body = [ln for f, lines in sections for ln in (f"[{f}]", *lines)]
    want = [CLOCK_BEGIN, *body, "[all]", CLOCK_END] if body else []
    lines = text.splitlines()
    block = _find_block(lines, CLOCK_BEGIN, CLOCK_END)
    if block is not None and lines[block[0] : block[1] + 1] == want:
        return text
    if block is None and not want:
        return text
    if block is not None:
        del lines[block[0] : block[1] + 1]
    while lines and not lines[-1].strip():
        lines.pop()
    if lines and want:
        lines.append("")
    return "\n".join(lines + want) + "\n"


def _find_block(lines: list[str], begin: str = BLOCK_BEGIN,
                end: str = BLOCK_END) -> tuple[int, int] | None:
    try:
        start = lines.index(begin)
        return start, lines.index(end, start)
    except ValueError:
        return None


def _sets_any(line: str, names: Mapping[str, str]) -> bool:
    return any(_DTPARAM_ALIASES.get(n, n) in names for n, _ in _parse_dtparam(line) or ())


def _rewrite_dtparam(line: str, name: str, value: str) -> str:
    items = _parse_dtparam(line) or []
    parts = [f"{n}={value}" if _DTPARAM_ALIASES.get(n, n) == name else f"{n}={v}" for n, v in items]
    return "dtparam=" + ",".join(parts)


def find_boot_config(root: Path) -> Path | None:
    """The firmware config file under ``root``: /boot/firmware/config.txt (Bookworm on),
    else /boot/config.txt, else ``None``."""
    for candidate in BOOT_CONFIGS:
        path = under(root, candidate)
        if path.is_file():
            return path
    return None
