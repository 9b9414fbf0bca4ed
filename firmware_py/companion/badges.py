"""The OLED's corner badge: a warning's full text (kept for the log and the
live page) said as a short cause in the players' words.

``short_cause("sensor offline: device lost (SerialException: ...)")`` gives
``"sensor unplugged"``. The full text, with any exception, is logged where the
warning is raised (the sensor link, the output parts, the keeper); the badge
never shows a Python exception's name.
"""
from __future__ import annotations

import re

# (pattern searched in the warning's text, the badge); the first match wins
_CAUSES: tuple[tuple[str, str], ...] = (
    (r"^sensor offline: (no device|device lost|reader error)", "sensor unplugged"),
    (r"^sensor offline: silent", "sensor silent"),
    (r"^sensor offline: sensor (speaks protocol|has \d+ spaces)", "sensor firmware?"),
    (r"^sensor port in use", "sensor port busy"),
    (r"^sensor: no port", "no sensor set"),
    (r"^sensor: connecting", "sensor starting"),
    (r"^sensor offline", "sensor offline"),
)
_EXCEPTION = re.compile(r"[(:]?\s*\(?[A-Z][A-Za-z]*(Error|Exception)\b.*$")


def short_cause(text: str) -> str:
    """The badge for one warning ``text`` (any str; "" stays ""): the sensor's
    troubles in a few words ("sensor unplugged", "sensor silent"); any
    other warning as it is (they are written in the players' words: "not saving: disk
    full (/folder)", "turns 16-20 lost; resumed at turn 15"), but never with an
    exception's class name and what follows it (that is in the log)."""
    for pattern, badge in _CAUSES:
        if re.search(pattern, text):
            return badge
    short = _EXCEPTION.sub("", text).rstrip(" :(")
    return short if short or not text else "see log"


def badge(warnings) -> str:
    """The badge text for several warnings (an iterable of str): their short
    causes, each once, joined by " / " (the renderer shows them in turn)."""
    return " / ".join(dict.fromkeys(c for c in map(short_cause, warnings) if c))
