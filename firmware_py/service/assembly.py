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

from ..companion.names import load_names
from ..config import state_dir
from .feed import ControlListener, FeedPublisher, feed_dir
from ..hw.backends import Parts, build_parts
from ..hw.sensor_link import SensorLink
from .loop import Service

LOG = logging.getLogger(__name__)
SIGNAL_POLL_S = 0.5   #: the longest a SIGTERM/SIGINT taken by another thread waits to be handled


@dataclass
class Companion:
    """A running companion: ``service`` (the loop), ``parts`` and the sensor ``link``."""

    service: Service
    parts: Parts
    link: SensorLink | None
    capture: object = None     #: a ``sim.capture.Capture`` when ``sim.capture_dir`` is set
    feed: FeedPublisher | None = None
    control: ControlListener | None = None

    def close(self) -> None:
        """Stop the loop, then the sensor link, then outputs off and pins released; then
        the frame capture (if any) is flushed, its last frames being the outputs off; then
        the live feed stops."""
        self.service.stop()
        if self.link is not None:
            self.link.stop()
        self.parts.close()
        if self.capture is not None:
            self.capture.close()
        if self.control is not None:
            self.control.close()
        if self.feed is not None:
            self.feed.close()


def start_companion(cfg: dict, *, folder: str | Path | None = None, deal: Callable | None = None,
                    on_oled_frame=None, on_led_frame=None, notifier=None,
                    clock: Callable[[], float] = time.monotonic,
                    feed: str | Path | None = None, names: str | Path | None = None,
                    planner: Callable | None = None) -> Companion:
    """Build every part from ``cfg``, resume the journal and start the loop and sensor link.

    The loop starts (and says READY) before the buttons, the LED strip and the OLED
    are built, whose libraries take most of the start-up; they are built right
    after it, and a part that fails is reported as at any start (``service.problems``,
    the OLED's warning, the log) before this returns.

    With the sim backend and ``sim.capture_dir`` set, every OLED frame (PNG) and LED
    frame (JSON lines) also goes to that folder (see ``sim.capture.Capture``), besides
    the ``on_oled_frame``/``on_led_frame`` hooks given. ``feed``: publish the live feed
    into this folder (see :mod:`.feed`), or None; ``names``: the file of player names
    offered at setup (``companion.names``), or None; ``planner``: the box's search
    (``BoxRequest -> BoxMove``), by default ``ai.table.answer`` at each level's own budget."""
    folder = Path(folder) if folder else state_dir(cfg)
    holder: dict = {}

    def _post(event):
        holder["service"].post(event)

    capture = _capture(cfg)
    if capture is not None:
        on_oled_frame = _both(capture.oled, on_oled_frame)
        on_led_frame = _both(capture.leds, on_led_frame)
    parts = build_parts(cfg, _post, clock, on_oled_frame=on_oled_frame, on_led_frame=on_led_frame,
                        defer=True)
    publisher = FeedPublisher(feed) if feed is not None else None
    service = Service(cfg, parts, folder, clock=clock, deal=deal, notifier=notifier, feed=publisher,
                      planner=planner if planner is not None else _box_planner)
    holder["service"] = service
    if names is not None:                   # offered at setup; edited on the web page (PIN)
        service.known_names = lambda: load_names(names)
    service.sensor_status(False, "sensor: connecting" if parts.sensor_ports else "sensor: no port")
    service.start()               # READY: the loop runs; the buttons and outputs come up behind it
    failures = parts.finish()

    def _built():
        if not parts.sensor_ports:             # the simulated sensor did not start
            service.sensor_status(False, "sensor: no port")
        service.parts_built(failures)
    service.call(_built, timeout=30.0)
    link = None
    if parts.sensor_ports:
        link = SensorLink(parts.sensor_ports, cfg["sensor"]["baud"], service.post, clock)
        link.need_spaces(*service.call(service.sensor_needs))
        service.on_sensor_needs = link.need_spaces   # told when the game (or its need) changes
        link.start()
    control = None
    if feed is not None:
        try:
            control = ControlListener(feed, service.post)
        except OSError as exc:
            LOG.warning("no control socket in %s (%s): the web page cannot show a PIN", feed, exc)
    return Companion(service, parts, link, capture, publisher, control)


def _box_planner(request, clock: Callable[[], float] = time.perf_counter):
    """The box's search at its level's own budget, timed by ``clock`` (the search is
    imported on first use)."""
    from ..ai.table import answer
    return answer(request, clock=clock)


def names_path(cfg: dict) -> Path:
    """The player names file of ``cfg``: ``names.json`` in the state folder."""
    return state_dir(cfg) / "names.json"


def _capture(cfg: dict):
    """A frame capture into ``sim.capture_dir`` (sim backend only; None when unset)."""
    where = cfg["sim"]["capture_dir"]
    if not where:
        return None
    if cfg[""]["backend"] != "sim":
        LOG.warning("sim.capture_dir %s is used with the sim backend only; not capturing", where)
        return None
    from .capture import Capture     # only when asked: keeps start-up imports small
    try:
        capture = Capture(Path(where).expanduser())
    except OSError as exc:      # a bad folder costs the capture, never the game
        LOG.warning("sim.capture_dir %s: cannot keep frames there (%s); not capturing", where, exc)
        return None
    LOG.info("keeping every OLED and LED frame in %s", where)
    return capture


def _both(first: Callable, second: Callable | None) -> Callable:
    """A frame hook calling ``first`` then ``second`` (if any)."""
    if second is None:
        return first

    def hook(frame):
        """Hand ``frame`` to both hooks, the first one first."""
        first(frame)
        second(frame)
    return hook


def run_forever(cfg: dict) -> int:
    """The ``run`` command: serve until SIGTERM/SIGINT, then shut down in order (design 6)."""
    from .sdnotify import Notifier
    notifier = Notifier.from_environment()
    done = threading.Event()

    def _stop(signum, _frame):
        if not done.is_set():       # a second Ctrl-C or SIGTERM: already on the way out
            LOG.info("signal %s: shutting down", signum)
        done.set()

    # before starting: a Ctrl-C while the journal loads stops in order, too
    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGINT, _stop)
    # start-up problems were logged where found (the part builder, Service._problem)
    companion = start_companion(cfg, notifier=notifier, feed=feed_dir(cfg),
                                names=names_path(cfg))
    LOG.info("companion running; journal in %s", companion.service.folder)
    # a bounded wait: the kernel may hand the signal to any thread, and then only the main
    # thread's next wake-up runs the handler (a wait without a timeout could sleep forever)
    while not done.wait(SIGNAL_POLL_S):
        pass
    notifier.stopping("shutting down")
    companion.close()
    return 0
