"""The box's club bridge fed by the game service's live feed.

The networked process (the web page's, or ``club bridge`` on its own) binds
the feed socket ``club`` and hands each new snapshot's game to the
:class:`.bridge.ClubBridge`: the snapshot's ``game_id``, its ``record`` (the
game record of the moves so far) and ``at`` (when the service published it).
Snapshots without a game (setup, menus before a deal) are skipped. A snapshot
that does not parse is logged and skipped; the bridge goes on.
"""
from __future__ import annotations

import logging
import threading

from ..rules import RecordError, parse_record
from .progress import Offer

LOG = logging.getLogger(__name__)


def offer_of(snapshot: dict, table: str = "") -> Offer | None:
    """The :class:`Offer` of a live-feed snapshot, or None when it holds no game.

    The game id is the table's name and the snapshot's ``game_id`` (which names the
    deal), so two tables playing the same deal (a duplicate tournament) stay two games.

    Raises ``RecordError`` (a ValueError) when its record is malformed."""
    record = snapshot.get("record")
    game_id = snapshot.get("game_id")
    if not isinstance(record, dict) or not isinstance(game_id, str) or not game_id:
        return None
    colours = tuple(p.get("colour", "") for p in snapshot.get("players", ()))
    at = snapshot.get("at")
    return Offer(f"{table}-{game_id}" if table else game_id, parse_record(record), float(at) if isinstance(at, (int, float)) else 0.0,
                 colours if len(colours) == 2 and all(colours) else ("green", "yellow"))


class FeedLink:
    """Reads the live feed in ``folder`` on its own thread and offers each new game
    state to ``bridge`` (a :class:`.bridge.ClubBridge`). ``close()`` stops it."""

    def __init__(self, folder, bridge):
        from ..web.feed import FeedSubscriber, read_live
        self.folder = folder
        self.running: bool | None = None     # the game service, as its feed shows it
        self.bridge = bridge
        self.subscriber = FeedSubscriber(folder, "club")
        self._stop = threading.Event()
        self._last = None
        first = read_live(folder)
        if first is not None:
            self._offer(first)
        self._thread = threading.Thread(target=self._run, name="club-feed", daemon=True)
        self._thread.start()

    def _offer(self, snapshot: dict) -> None:
        try:
            offer = offer_of(snapshot, self.bridge.settings.table)
        except (RecordError, ValueError, TypeError) as exc:
            LOG.warning("club: a live snapshot without a valid record was skipped: %s", exc)
            return
        key = None if offer is None else (offer.game_id, offer.record.moves)
        if offer is not None and key != self._last:
            self._last = key
            self.bridge.offer(offer)

    def _run(self) -> None:
        while not self._stop.is_set():
            if not self.subscriber.bound():
                self.subscriber.bind()
            snapshot = self.subscriber.receive(timeout=1.0)
            if snapshot is not None:
                newest = self.subscriber.drain() or snapshot
                self._offer(newest)
            self.watch_service()

    def watch_service(self) -> None:
        """Tell the bridge when the game service stops (it no longer holds the feed's
        lock, see :func:`~firmware_py.web.feed.service_running`) and when it runs
        again; the scoreboard then shows the table offline. Nothing published yet:
        running, as far as anyone knows."""
        from ..web.feed import service_running
        running = service_running(self.folder) is not False
        if running != self.running:
            self.running = running
            self.bridge.service_running(running)

    def close(self) -> None:
        """Stop reading and remove the feed socket."""
        self._stop.set()
        self._thread.join(2.0)
        self.subscriber.close()
