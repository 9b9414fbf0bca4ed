"""The web process's side of the live feed: one subscriber socket, many browsers.

:class:`LiveHub` binds the feed socket ``web.sock`` in the feed folder, wakes
on each datagram through the asyncio loop (``add_reader``: no thread, no
polling), keeps the newest snapshot, encodes it once as a server-sent event
and hands it to every open page. Each page (:class:`Client`) keeps only the
newest event it has not sent yet, so a slow browser skips states instead of
piling them up, and never holds up the others. Every two seconds it checks
that its socket file still exists (the feed folder may have been recreated)
and reads ``live.json`` if it is newer than what it has (a missed datagram).
When a snapshot's ``pin_asked`` goes up within one service run (someone chose
"Web PIN" in the box's menu), it calls ``on_pin_asked``.
"""
from __future__ import annotations

import asyncio
import json
import logging
import time
from pathlib import Path
from typing import Callable

from ..service.feed import LIVE_FILE
from .feed import FeedSubscriber, feed_age, read_live, service_running

LOG = logging.getLogger(__name__)

CHECK_SECONDS = 2.0


class Client:
    """One open page: the newest event not yet sent (bytes) and a wake-up."""

    def __init__(self):
        self.pending: bytes | None = None
        self.wake = asyncio.Event()

    def offer(self, event: bytes) -> None:
        """Replace what waits with ``event`` (older unsent states are skipped)."""
        self.pending = event
        self.wake.set()

    async def next_event(self, timeout: float) -> bytes | None:
        """The next event, or None after ``timeout`` seconds without one."""
        try:
            await asyncio.wait_for(self.wake.wait(), timeout)
        except asyncio.TimeoutError:
            return None
        self.wake.clear()
        event, self.pending = self.pending, None
        return event


def sse_event(snapshot: dict) -> bytes:
    """A snapshot as one server-sent event (``id`` = its seq, ``data`` = its JSON)."""
    data = json.dumps(snapshot, separators=(",", ":"))
    return f"id: {snapshot.get('seq', 0)}\nevent: live\ndata: {data}\n\n".encode()


def _count(snap: dict, key: str) -> int:
    value = snap.get(key)
    return value if type(value) is int else 0


class LiveHub:
    """Feed subscriber + fan-out to pages. ``snapshot`` is the newest (or None)."""

    def __init__(self, folder: str | Path, name: str = "web"):
        self.folder = Path(folder)
        self.name = name
        self.snapshot: dict | None = read_live(self.folder)
        self.event: bytes | None = sse_event(self.snapshot) if self.snapshot else None
        self.clients: set[Client] = set()
        self.sub: FeedSubscriber | None = None
        self._task: asyncio.Task | None = None
        self.received = 0
        self._mtime = 0                 # live.json's mtime when last read
        self.stopped: int | None = None  # whole minutes since the service stopped (None: runs)
        self._heard: float | None = None  # Unix time of the last check that found it running
        self.on_pin_asked: Callable[[], None] = lambda: None

    async def start(self) -> None:
        """Bind the socket and start listening (call inside the running loop)."""
        self._bind()
        self._task = asyncio.get_running_loop().create_task(self._watch())

    def _bind(self) -> None:
        loop = asyncio.get_running_loop()
        if self.sub is not None:
            loop.remove_reader(self.sub.fileno())
            self.sub.bind()
        else:
            self.sub = FeedSubscriber(self.folder, self.name)
        loop.add_reader(self.sub.fileno(), self._readable)

    def _readable(self) -> None:
        snap = self.sub.drain()
        if snap is not None:
            self.received += 1
            self.update(snap)

    def update(self, snap: dict) -> None:
        """Take ``snap`` if it is newer than the one held, and push it to every page."""
        old = self.snapshot
        if old is not None and old.get("run") == snap.get("run") and \
                snap.get("seq", 0) <= old.get("seq", 0):
            return
        self.snapshot = snap
        self.stopped = None
        if (old is not None and old.get("run") == snap.get("run")
                and _count(snap, "pin_asked") > _count(old, "pin_asked")):
            self.on_pin_asked()
        self._push(sse_event(snap))

    def _push(self, event: bytes) -> None:
        self.event = event
        for client in self.clients:
            client.offer(event)

    def check_alive(self, now: float | None = None) -> None:
        """Say on every page when the game service has stopped (it no longer holds the
        feed's lock, see :func:`~firmware_py.web.feed.service_running`): the snapshot
        held is sent again with ``stopped_s``, the seconds (``now``: Unix time) since
        it was last heard of (the later of ``live.json``'s mtime, which a clean stop
        touches, and the last check that found it running), again each whole minute;
        without it once the service runs again. No lock file to test: not said."""
        if self.snapshot is None:
            return
        now = time.time() if now is None else now
        age = None
        if service_running(self.folder) is False:
            ages = [a for a in (feed_age(self.folder, now),
                                None if self._heard is None else now - self._heard) if a is not None]
            age = max(0.0, min(ages, default=0.0))
        else:
            self._heard = now
        minute = None if age is None else int(age // 60)
        if minute == self.stopped:
            return
        self.stopped = minute
        self._push(sse_event({**self.snapshot, "stopped_s": int(age)} if age is not None
                             else self.snapshot))

    async def _watch(self) -> None:
        while True:
            await asyncio.sleep(CHECK_SECONDS)
            try:
                if not self.sub.bound():
                    LOG.info("live feed socket %s vanished: binding again", self.sub.path)
                    self._bind()
                self.check_alive()
                try:
                    mtime = (self.folder / LIVE_FILE).stat().st_mtime_ns
                except FileNotFoundError:
                    continue                      # nothing published yet
                if mtime != self._mtime:          # changed since: a datagram may be missing
                    self._mtime = mtime
                    snap = read_live(self.folder)
                    if snap is not None:
                        self.update(snap)
            except OSError as exc:
                LOG.warning("live feed in %s: %s", self.folder, exc)

    def add(self) -> Client:
        """A new page: it gets the newest snapshot first."""
        client = Client()
        self.clients.add(client)
        if self.event is not None:
            client.offer(self.event)
        return client

    def remove(self, client: Client) -> None:
        """A page went away."""
        self.clients.discard(client)

    async def close(self) -> None:
        """Stop listening and remove the socket file."""
        if self._task is not None:
            self._task.cancel()
        if self.sub is not None:
            try:
                asyncio.get_running_loop().remove_reader(self.sub.fileno())
            except (RuntimeError, ValueError):
                pass
            self.sub.close()
