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

from .config import state_dir
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

    def close(self) -> None:
        """Stop the loop, then the sensor link, then outputs off and pins released."""
        self.service.stop()
        if self.link is not None:
            self.link.stop()
        self.parts.close()


def start_companion(cfg: dict, *, folder: str | Path | None = None, deal: Callable | None = None,
                    on_oled_frame=None, on_led_frame=None, notifier=None,
                    clock: Callable[[], float] = time.monotonic) -> Companion:
    """Build every part from ``cfg``, resume the journal and start the loop and sensor link.

    The loop starts (and says READY) before the buttons, the LED strip and the OLED
    are built, whose libraries take most of the start-up; they are built right
    after it, and a part that fails is reported as at any start (``service.problems``,
    the OLED's warning, the log) before this returns."""
    folder = Path(folder) if folder else state_dir(cfg)
    holder: dict = {}

    def _post(event):
        holder["service"].post(event)

    parts = build_parts(cfg, _post, clock, on_oled_frame=on_oled_frame, on_led_frame=on_led_frame,
                        defer=True)
    service = Service(cfg, parts, folder, clock=clock, deal=deal, notifier=notifier)
    holder["service"] = service
    service.ui.sensor_status(False, "sensor: connecting" if parts.sensor_ports else "sensor: no port")
    service.start()               # READY: the loop runs; the buttons and outputs come up behind it
    failures = parts.finish()

    def _built():
        if not parts.sensor_ports:             # the simulated sensor did not start
            service.ui.sensor_status(False, "sensor: no port")
        service.parts_built(failures)
    service.call(_built, timeout=30.0)
    link = None
    if parts.sensor_ports:
        link = SensorLink(parts.sensor_ports, cfg["sensor"]["baud"], service.post, clock)
        link.start()
    return Companion(service, parts, link)


def run_forever(cfg: dict) -> int:
    """The ``run`` command: serve until SIGTERM/SIGINT, then shut down in order (design 6)."""
    from .hw.sdnotify import Notifier
    notifier = Notifier.from_environment()
    companion = start_companion(cfg, notifier=notifier)
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
