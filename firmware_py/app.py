"""Assembling the companion: config -> parts -> service -> sensor link, and shutting down in order.

Shared by ``run`` (the service itself), ``demo`` and ``sim``.
"""
from __future__ import annotations

import logging
import signal
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from .companion.names import load_names
from .config import state_dir
from .feed import ControlListener, FeedPublisher, feed_dir
from .hw.backends import Parts, build_parts
from .hw.sensor_link import SensorLink
from .service import Service

LOG = logging.getLogger(__name__)


@dataclass
class Companion:
    """A running companion: ``service`` (the loop), ``parts`` and the sensor ``link``."""

    service: Service
    parts: Parts
    link: SensorLink | None
    feed: FeedPublisher | None = None
    control: ControlListener | None = None

    def close(self) -> None:
        """Stop the loop, then the sensor link, then outputs off and pins released, then the feed."""
        self.service.stop()
        if self.link is not None:
            self.link.stop()
        self.parts.close()
        if self.control is not None:
            self.control.close()
        if self.feed is not None:
            self.feed.close()


def start_companion(cfg: dict, *, folder: str | Path | None = None, deal: Callable | None = None,
                    on_oled_frame=None, on_led_frame=None, notifier=None,
                    clock: Callable[[], float] = time.monotonic,
                    feed: str | Path | None = None, names: str | Path | None = None) -> Companion:
    """Build every part from ``cfg``, resume the journal and start the loop and sensor link.

    ``feed``: publish the live feed into this folder (see :mod:`.feed`), or None;
    ``names``: the file of player names offered at setup (``companion.names``), or None."""
    folder = Path(folder) if folder else state_dir(cfg)
    holder: dict = {}

    def _post(event):
        holder["service"].post(event)

    parts = build_parts(cfg, _post, clock, on_oled_frame=on_oled_frame, on_led_frame=on_led_frame)
    publisher = FeedPublisher(feed) if feed is not None else None
    service = Service(cfg, parts, folder, clock=clock, deal=deal, notifier=notifier, feed=publisher)
    holder["service"] = service
    if names is not None:                   # offered at setup; edited on the web page (PIN)
        service.ui.known_names = lambda: load_names(names)
    service.ui.sensor_status(False, "sensor: connecting" if parts.sensor_ports else "sensor: no port")
    service.start()
    link = None
    if parts.sensor_ports:
        link = SensorLink(parts.sensor_ports, cfg["sensor"]["baud"], service.post, clock)
        link.start()
    control = None
    if feed is not None:
        try:
            control = ControlListener(feed, service.post)
        except OSError as exc:
            LOG.warning("no control socket in %s (%s): the web page cannot show a PIN", feed, exc)
    return Companion(service, parts, link, publisher, control)


def names_path(cfg: dict) -> Path:
    """The player names file of ``cfg``: ``names.json`` in the state folder."""
    return state_dir(cfg) / "names.json"


def run_forever(cfg: dict) -> int:
    """The ``run`` command: serve until SIGTERM/SIGINT, then shut down in order (design 6)."""
    from .hw.sdnotify import Notifier
    notifier = Notifier.from_environment()
    companion = start_companion(cfg, notifier=notifier, feed=feed_dir(cfg),
                                names=names_path(cfg))
    done = threading.Event()

    def _stop(signum, _frame):
        LOG.info("signal %s: shutting down", signum)
        done.set()

    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGINT, _stop)
    for problem in companion.service.problems:
        LOG.warning("%s", problem)
    LOG.info("companion running; journal in %s", companion.service.folder)
    done.wait()
    notifier.stopping("shutting down")
    companion.close()
    return 0
