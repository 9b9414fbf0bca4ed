"""Who may change anything through the web page: a PIN shown on the OLED, and Origin checks.

The page is read-only for everyone. Editing (player names) needs a PIN that only
someone at the table can read: :meth:`PinGate.issue` makes a random 6-digit PIN
and asks the game service to show it on the OLED (a datagram to its control
socket, see :mod:`firmware_py.feed`); the PIN is good for ``minutes`` and for
``MAX_TRIES`` wrong guesses, after which a new one must be shown. A right PIN
gives the browser a random session cookie for the same time. There is no
default password, and nothing is stored on disk.

Every POST must carry an ``Origin`` header naming this very page
(``http(s)://`` + the ``Host`` it was asked for): a form on another site
cannot post here on a visitor's behalf (cross-site request forgery).
"""
from __future__ import annotations

import hmac
import secrets
import time
from dataclasses import dataclass
from typing import Callable
from urllib.parse import urlsplit

MAX_TRIES = 5            #: wrong PINs before the PIN is void
ISSUE_SECONDS = 10.0     #: at most one new PIN this often
COOKIE = "pwc_session"


class AuthError(Exception):
    """A refused request; ``status`` is the HTTP status to answer with."""

    def __init__(self, message: str, status: int = 403):
        super().__init__(message)
        self.status = status


def check_origin(origin: str | None, host: str | None) -> None:
    """Raise :class:`AuthError` unless ``origin`` is ``http://HOST`` or ``https://HOST``."""
    if not origin or not host:
        raise AuthError("refused: a change must come from this page (no Origin header)")
    parts = urlsplit(origin)
    if parts.scheme not in ("http", "https") or parts.netloc.lower() != host.lower():
        raise AuthError(f"refused: a change must come from this page, not from {origin}")


@dataclass
class _Pin:
    value: str
    until: float
    tries: int = 0


class PinGate:
    """PINs and sessions. ``show(pin, seconds)`` asks the service to show a PIN (raises
    OSError when it cannot); ``clock`` gives seconds (monotonic)."""

    def __init__(self, show: Callable[[str, int], None], minutes: int = 5,
                 clock: Callable[[], float] = time.monotonic):
        self.show = show
        self.seconds = int(minutes * 60)
        self.clock = clock
        self.pin: _Pin | None = None
        self.sessions: dict[str, float] = {}
        self._last_issue = -ISSUE_SECONDS

    def issue(self) -> None:
        """Make a new PIN and have the OLED show it; raises AuthError when asked too
        often or when the companion cannot be reached (no PIN is then valid)."""
        now = self.clock()
        if now - self._last_issue < ISSUE_SECONDS:
            raise AuthError("a PIN was just shown on the OLED; wait a few seconds", 429)
        value = f"{secrets.randbelow(10**6):06d}"
        try:
            self.show(value, self.seconds)
        except OSError as exc:
            self.pin = None
            raise AuthError(f"the companion is not running, so no PIN can be shown ({exc})",
                            503) from None
        self._last_issue = now
        self.pin = _Pin(value, now + self.seconds)

    def login(self, guess: str) -> str:
        """Check ``guess``; returns a new session token, raises AuthError when wrong,
        expired or tried too often (the PIN is then void)."""
        pin, now = self.pin, self.clock()
        if pin is None or now > pin.until or pin.tries >= MAX_TRIES:
            self.pin = None
            raise AuthError("no valid PIN: ask for one, then read it on the OLED")
        if not hmac.compare_digest(pin.value, (guess or "").strip()):
            pin.tries += 1
            left = MAX_TRIES - pin.tries
            if left == 0:
                self.pin = None
            raise AuthError(f"wrong PIN ({left} tries left)" if left else
                            "wrong PIN; ask for a new one")
        self.pin = None                            # one PIN, one session
        token = secrets.token_urlsafe(24)
        self.sessions[token] = now + self.seconds
        return token

    def allowed(self, token: str | None) -> bool:
        """True when ``token`` is a session that has not expired."""
        now = self.clock()
        for old in [t for t, until in self.sessions.items() if until < now]:
            del self.sessions[old]
        return bool(token) and token in self.sessions
