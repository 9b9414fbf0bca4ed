"""Who may change anything through the web page: a PIN shown on the OLED, guarded
against guessing, and Origin checks.

The page is read-only for everyone. Editing (player names) needs a PIN that only
someone at the table can read: :meth:`PinGate.issue` makes a random 6-digit PIN
and asks the game service to show it on the OLED (a datagram to its control
socket, see :mod:`firmware_py.service.feed`); the PIN is good for ``minutes`` and for
:data:`MAX_TRIES` wrong guesses. A right PIN gives the browser a random session
cookie for the same time. There is no default password, and nothing is stored
on disk.

Guessing (the rule the README's figure comes from): every wrong PIN is logged
with the address it came from and counts against a :class:`Backoff` for that
address and one for the whole page. A back-off forgets one failure per
:data:`DECAY_S` (continuously); once it holds more than its free failures, the
next guess must wait ``2 ** (failures - free)`` seconds, at most
:data:`MAX_WAIT_S`. A guess refused because of a wait is not a try and changes
nothing. So nobody guesses faster than about once an hour for long:
:func:`most_guesses` counts the most guesses the rules allow in a period, and
each guess hits a random 6-digit PIN with odds of at most one in
``10**6 - MAX_TRIES``.

A stranger cannot lock the players out: asking for a PIN on the page while one
is valid shows that same PIN again (it never burns it), and a PIN asked for on
the box itself (the menu, :meth:`PinGate.issue` with ``at_box=True``) is held
up by no back-off (behind a reverse proxy every browser is one address), only
by its own :data:`MAX_TRIES`: such a PIN exists only when someone at the box
asked for it, and five guesses hit it with odds of 5 in a million.

Every POST must carry an ``Origin`` header naming an allowed host of this page
(:mod:`.hosts`): a form on another site cannot post here on a visitor's behalf
(cross-site request forgery), nor can a page on a rebound name.
"""
from __future__ import annotations

import hmac
import logging
import math
import secrets
import time
from dataclasses import dataclass
from typing import Callable

LOG = logging.getLogger(__name__)

MAX_TRIES = 5            #: wrong PINs before the PIN is void
ISSUE_SECONDS = 10.0     #: at most one new PIN this often
DIGITS = 6               #: digits of a PIN
FREE_PAGE = 5            #: page-wide failures before the waits start
FREE_ADDRESS = 3         #: failures from one address before its waits start
DECAY_S = 3600.0         #: one failure is forgotten per hour (continuously)
MAX_WAIT_S = 3600.0      #: the longest wait between two guesses
MAX_ADDRESSES = 4096     #: addresses whose failures are remembered, at most
COOKIE = "pwc_session"


class AuthError(Exception):
    """A refused request; ``status`` is the HTTP status to answer with."""

    def __init__(self, message: str, status: int = 403):
        super().__init__(message)
        self.status = status


class Backoff:
    """Failures that decay (one per :data:`DECAY_S`) and the wait they impose: after
    a failure that leaves ``n`` failures, the next try waits ``2 ** (n - free)``
    seconds (0 while ``n <= free``), at most :data:`MAX_WAIT_S`. Times in seconds."""

    def __init__(self, free: int):
        self.free = free
        self.failures = 0.0
        self.last = -math.inf
        self.next_at = -math.inf

    def wait(self, now: float) -> float:
        """Seconds until the next try is allowed (0 = now)."""
        return max(0.0, self.next_at - now)

    def failed(self, now: float) -> None:
        """Count a failure at ``now``."""
        self.failures = max(0.0, self.failures - (now - self.last) / DECAY_S) + 1
        self.last = now
        over = self.failures - self.free
        self.next_at = now + (min(2.0 ** over, MAX_WAIT_S) if over > 0 else 0.0)

    def quiet(self, now: float) -> bool:
        """True when it has forgotten every failure (it may be dropped)."""
        return self.failures - (now - self.last) / DECAY_S <= 0 and self.wait(now) == 0


def most_guesses(seconds: float, free: int = FREE_PAGE) -> int:
    """The most guesses the page-wide back-off allows in ``seconds``: an attacker who
    guesses the moment each wait ends (every guess wrong)."""
    backoff, now, count = Backoff(free), 0.0, 0
    while True:
        now = max(now, backoff.next_at)
        if now > seconds:
            return count
        backoff.failed(now)
        count += 1


def guess_odds(seconds: float) -> float:
    """The odds of hitting a PIN within ``seconds`` at the fastest allowed rate (a union
    bound: each guess hits with odds of at most one in ``10**DIGITS - MAX_TRIES``)."""
    return most_guesses(seconds) / (10 ** DIGITS - MAX_TRIES)


def _wait_words(seconds: float) -> str:
    return f"{math.ceil(seconds)} s" if seconds < 120 else f"{math.ceil(seconds / 60)} minutes"


@dataclass
class _Pin:
    value: str
    until: float
    at_box: bool = False
    tries: int = 0


class PinGate:
    """PINs, sessions and the guessing back-off. ``show(pin, seconds)`` asks the service
    to show a PIN (raises OSError when it cannot); ``clock`` gives seconds (monotonic)."""

    def __init__(self, show: Callable[[str, int], None], minutes: int = 5,
                 clock: Callable[[], float] = time.monotonic):
        self.show = show
        self.seconds = int(minutes * 60)
        self.clock = clock
        self.pin: _Pin | None = None
        self.sessions: dict[str, float] = {}
        self.page = Backoff(FREE_PAGE)
        self.addresses: dict[str, Backoff] = {}
        self._last_issue = -ISSUE_SECONDS

    def issue(self, at_box: bool = False) -> None:
        """Have the OLED show a PIN: the one still valid (so asking again never burns
        it), else a new one. ``at_box``: asked for on the box itself, which always makes
        a new PIN and is never held up. Raises AuthError when asked on the page too often
        or when the companion cannot be reached (no PIN is then valid)."""
        now = self.clock()
        pin = self._valid(now)
        if not at_box and now - self._last_issue < ISSUE_SECONDS:
            raise AuthError("a PIN was just shown on the OLED; wait a few seconds", 429)
        if at_box or pin is None:
            pin = _Pin(f"{secrets.randbelow(10 ** DIGITS):0{DIGITS}d}", now + self.seconds, at_box)
        try:
            self.show(pin.value, max(60, int(pin.until - now)))
        except OSError as exc:
            self.pin = None
            raise AuthError(f"the companion is not running, so no PIN can be shown ({exc})",
                            503) from None
        self._last_issue = now
        self.pin = pin

    def _valid(self, now: float) -> _Pin | None:
        pin = self.pin
        if pin is None or now > pin.until or pin.tries >= MAX_TRIES:
            self.pin = None
            return None
        return pin

    def login(self, guess: str, address: str = "?") -> str:
        """Check ``guess`` from ``address``; returns a new session token. Raises
        AuthError (429 while a back-off makes the guess wait, changing nothing; 403 when
        wrong, expired or tried too often, the PIN then void)."""
        now = self.clock()
        pin = self._valid(now)
        mine = self.addresses.get(address)
        wait = 0.0 if pin is not None and pin.at_box else max(
            mine.wait(now) if mine else 0.0, self.page.wait(now))
        if wait > 0:
            raise AuthError(f"too many wrong PINs: try again in {_wait_words(wait)} (or ask "
                            f"for a PIN on the box: menu, Web PIN)", 429)
        if pin is None:
            raise AuthError("no valid PIN: ask for one, then read it on the OLED")
        if not hmac.compare_digest(pin.value, (guess or "").strip()):
            return self._wrong(pin, address, now)
        self.pin = None                            # one PIN, one session
        token = secrets.token_urlsafe(24)
        self.sessions[token] = now + self.seconds
        return token

    def _wrong(self, pin: _Pin, address: str, now: float):
        pin.tries += 1
        if not pin.at_box:
            self.page.failed(now)
        self._address(address, now).failed(now)
        LOG.warning("web: wrong PIN from %s (%d of %d tries of this PIN; next guess from "
                    "there in %.0f s, from anywhere in %.0f s)", address, pin.tries, MAX_TRIES,
                    self.addresses[address].wait(now), self.page.wait(now))
        left = MAX_TRIES - pin.tries
        if left == 0:
            self.pin = None
        raise AuthError(f"wrong PIN ({left} tries left)" if left else "wrong PIN; ask for a new one")

    def _address(self, address: str, now: float) -> Backoff:
        if address not in self.addresses and len(self.addresses) >= MAX_ADDRESSES:
            for old in [a for a, b in self.addresses.items() if b.quiet(now)]:
                del self.addresses[old]
            if len(self.addresses) >= MAX_ADDRESSES:   # still full: the oldest failure goes
                del self.addresses[min(self.addresses, key=lambda a: self.addresses[a].last)]
        return self.addresses.setdefault(address, Backoff(FREE_ADDRESS))

    def allowed(self, token: str | None) -> bool:
        """True when ``token`` is a session that has not expired."""
        now = self.clock()
        for old in [t for t, until in self.sessions.items() if until < now]:
            del self.sessions[old]
        return bool(token) and token in self.sessions
