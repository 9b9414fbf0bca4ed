"""Setting one key in TOML text while keeping the rest of the text (comments, order)."""
from __future__ import annotations

import re
import tomllib

def set_toml_value(text: str, section: str, key: str, literal: str) -> str:
    """Set ``key = literal`` in ``[section]`` ("" = top level) of TOML text, keeping the rest.

    An existing ``key = ...`` line in that section is replaced (its comment is
    dropped); a missing key is added after the section header; a missing
    section is appended. ``literal`` is TOML source, e.g. ``'"pi"'``.

    Raises:
        ValueError: if the result is not valid TOML.
    """
    lines = text.splitlines()
    current = ""
    header_at = -1 if section == "" else None
    for index, line in enumerate(lines):
        stripped = line.strip()
        header = re.fullmatch(r"\[\s*([A-Za-z0-9_.-]+)\s*\]\s*(#.*)?", stripped)
        if header:
            current = header.group(1)
            if current == section:
                header_at = index
            continue
        if current == section and re.match(rf"{re.escape(key)}\s*=", stripped):
            indent = line[: len(line) - len(line.lstrip())]
            lines[index] = f"{indent}{key} = {literal}"
            break
    else:
        if header_at is None:
            lines += ["", f"[{section}]", f"{key} = {literal}"]
        else:
            lines.insert(header_at + 1, f"{key} = {literal}")
    result = "\n".join(lines) + "\n"
    tomllib.loads(result)
    return result
