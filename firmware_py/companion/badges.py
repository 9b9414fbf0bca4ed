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
    (r"^sensor offline: link error rate|^sensor link errors", "sensor link errors"),
    (r"^sensor offline: sensor (speaks protocol|has \d+ spaces)", "sensor firmware?"),
    (r"^sensor port in use", "sensor port busy"),
    (r"^sensor: no port", "no sensor set"),
    (r"^sensor: connecting", "sensor starting"),
    (r"^sensor offline", "sensor offline"),
    (r"^LED strip failed", "LEDs not working"),
    (r"^OLED failed", "screen trouble"),
    (r"^(not saving|record not saved).*(No space|disk full)", "disk full"),
    (r"^not saving", "not saving"),
    (r"^record not saved", "game not saved"),
    (r"^journal", "journal repaired"),
    (r"^history index", "history: see log"),
    (r"^internal error", "error: see log"),
)
_EXCEPTION = re.compile(r"\(?[A-Z][A-Za-z]*(Error|Exception)\b")


def short_cause(text: str) -> str:
    """The badge for one warning ``text`` (any str; "" stays ""): a known cause
    in a few words, else the text up to its first ":" or "(", and never an
    exception's class name (then "see log")."""
    for pattern, badge in _CAUSES:
        if re.search(pattern, text):
            return badge
    short = re.split(r"[:(]", text, maxsplit=1)[0].strip()
    return "see log" if _EXCEPTION.search(short) else short


def badge(warnings) -> str:
    """The badge text for several warnings (an iterable of str): their short
    causes, each once, joined by " / " (the renderer shows them in turn)."""
    return " / ".join(dict.fromkeys(c for c in map(short_cause, warnings) if c))
