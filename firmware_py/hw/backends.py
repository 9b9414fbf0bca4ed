"""Backends: build every part from the config, on a Raspberry Pi ("pi") or simulated ("sim").

The simulation uses the libraries' own stand-ins, never hand-made fakes:
gpiozero's ``MockFactory`` for the buttons, the real ``neopixel`` module on
Blinka's OS-agnostic board for the strip, luma's device class (sending only
what changed) over a byte-counting interface that passes the bytes on to
luma's ``noop`` for the OLED, and the simulated sensor process speaking the
real protocol over a pseudo-terminal. The simulated sensor starts first, as a
process of its own, while the other parts are built. A part that fails to
start is reported in ``Parts.failures`` and left out; the game goes on without it.
"""
from __future__ import annotations

import logging
import os
import tempfile
import threading
import time
from dataclasses import dataclass, field
from typing import Callable

from .parts import ButtonPanel, LedStrip, Oled

LOG = logging.getLogger(__name__)


@dataclass
class Parts:
    """The built parts; any may be None when it failed (see ``failures``).

    ``pin_factory`` is the gpiozero factory in use (a ``MockFactory`` in
    simulation, so the simulation can drive its pins); ``sim_sensor`` the
    simulated sensor process (simulation only); ``sensor_ports`` what the
    sensor link opens.
    """

    buttons: ButtonPanel | None = None
    strip: LedStrip | None = None
    oled: Oled | None = None
    pin_factory: object = None
    sim_sensor: object = None
    sensor_ports: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    pending: Callable[[], None] | None = None

    def finish(self) -> list[str]:
        """Build what ``build_parts(defer=True)`` left for later (nothing when it is
        all built): waits for every part to come up or fail, at most
        ``START_SECONDS`` each; returns the failures added."""
        pending, self.pending = self.pending, None
        before = len(self.failures)
        if pending is not None:
            pending()
        return self.failures[before:]

    def close(self) -> None:
        """Turn the outputs off and release pins and processes, in order."""
        for part in (self.strip, self.oled):
            if part is not None:
                part.close()
        if self.buttons is not None:
            self.buttons.close()
        if self.sim_sensor is not None:
            self.sim_sensor.close()


START_SECONDS = 10.0  #: a part whose driver does not start within this long is left out


def _try(parts: Parts, what: str, build: Callable):
    """``build()`` on a helper thread: its result, or None when it raised or did not
    finish within ``START_SECONDS`` (a hung bus); either way the failure is reported
    and the game goes on without the part. A build that finishes too late is closed."""
    return _begin(what, build)(parts)


def _begin(what: str, build: Callable) -> Callable[[Parts], object]:
    """Start ``build()`` on a helper thread now; the function returned waits for it
    (at most ``START_SECONDS`` from now) and gives what :func:`_try` gives."""
    box: dict = {}
    lock = threading.Lock()

    def run():
        """Build the part on this helper thread; keep its result or its error."""
        try:
            result = build()
        except Exception as exc:  # noqa: BLE001  any driver error: report, go on without it
            result, box["error"] = None, exc
        with lock:
            box["result"] = result
            late = box.get("abandoned", False)
        if late and hasattr(result, "close"):
            try:
                result.close()      # e.g. release pins claimed after we gave up waiting
            except Exception:  # noqa: BLE001
                pass

    thread = threading.Thread(target=run, name=f"start-{what}", daemon=True)
    thread.start()
    deadline = time.monotonic() + START_SECONDS

    def finish(parts: Parts):
        """Wait for the build; its result, or None with the failure reported in ``parts``."""
        thread.join(max(0.0, deadline - time.monotonic()))
        with lock:
            if "result" not in box:
                box["abandoned"] = True
                box["error"] = f"no answer within {START_SECONDS:g} s"
        if "error" in box:
            from .diagnose import cause
            found = cause(str(box["error"]))
            LOG.error("%s failed to start: %s%s", what, box["error"],
                      f" -> cause: {found}" if found else "")
            parts.failures.append(f"{what} failed to start: {box['error']}")
            return None
        return box["result"]
    return finish


def _pin_factory(name: str):
    if name == "mock":
        from gpiozero.pins.mock import MockFactory
        return MockFactory()
    if name == "auto":
        return None
    module, cls = {"lgpio": ("gpiozero.pins.lgpio", "LGPIOFactory"),
                   "rpigpio": ("gpiozero.pins.rpigpio", "RPiGPIOFactory"),
                   "native": ("gpiozero.pins.native", "NativeFactory")}[name]
    return getattr(__import__(module, fromlist=[cls]), cls)()


#: Blinka 10's ``import board`` asks "Install them into the current Python
#: environment? [Y/n]" when stdin and stdout are a terminal and a platform
#: library it lists is missing. On a Pi 3/4/Zero 2 W it lists rpi_ws281x and the
#: Pi PWM library even for the SPI route, so ``calibrate`` or ``run`` typed on a
#: terminal would stop there, and a yes pip-installs into the service's venv. The
#: installer puts in what the LED route imports; this variable makes Blinka skip
#: the question (the missing import then fails with its own message).
NO_BLINKA_PROMPT = ("BLINKA_SKIP_DEPENDENCY_CHECK", "1")


def _pixels(cfg: dict, sim: bool):
    leds = cfg["leds"]
    if sim:
        os.environ.setdefault("BLINKA_FORCEBOARD", "OS_AGNOSTIC_BOARD")
        os.environ.setdefault("BLINKA_FORCECHIP", "OS_AGNOSTIC")
    os.environ[NO_BLINKA_PROMPT[0]] = NO_BLINKA_PROMPT[1]
    import board
    if leds["driver"] == "neopixel_spi" and not sim:
        # Not `import neopixel` here: it imports neopixel_write, which needs the PWM
        # (rpi_ws281x) or Pi 5 PIO library that the SPI route does not install.
        import neopixel_spi
        return neopixel_spi.NeoPixel_SPI(board.SPI(), leds["count"], brightness=leds["brightness"],
                                         auto_write=False, pixel_order=leds["order"])
    import neopixel
    order = getattr(neopixel, leds["order"])
    pin = getattr(board, leds["pin"], None)
    if pin is None and sim:
        pin = board.NEOPIXEL          # the OS-agnostic board names its LED pin NEOPIXEL
    if pin is None:
        raise ValueError(f"leds.pin: board has no pin {leds['pin']!r}")
    return neopixel.NeoPixel(pin, leds["count"], brightness=leds["brightness"],
                             auto_write=False, pixel_order=order)


def _oled_device(cfg: dict, sim: bool):
    """luma's device for ``display.driver``, sending only changed pages and columns
    (:mod:`.oled_pages`): over I2C on a Pi, over a byte counter in simulation."""
    disp = cfg["display"]
    from .oled_pages import ByteCounter, PagedSh1106, PagedSsd1306
    cls = {"ssd1306": PagedSsd1306, "sh1106": PagedSh1106}[disp["driver"]]
    if sim:
        serial = ByteCounter()
    else:
        from luma.core.interface.serial import i2c
        serial = i2c(port=disp["i2c_port"], address=disp["i2c_address"])
    try:
        return cls(serial, width=128, height=64, rotate=disp["rotate"])
    except Exception:
        cleanup = getattr(serial, "cleanup", None)    # retried later: no open bus left behind
        if cleanup is not None:
            try:
                cleanup()
            except Exception:  # noqa: BLE001
                pass
        raise


def build_parts(cfg: dict, post: Callable, clock: Callable, *, on_oled_frame=None,
                on_led_frame=None, spaces: int = 54, defer: bool = False) -> Parts:
    """Build the parts named by ``cfg`` for its backend ("pi" or "sim").

    ``post`` receives raw button edges (from gpiozero's threads); the frame
    hooks see every frame sent to the OLED and the strip. ``spaces`` sizes the
    simulated sensor. Never raises for a part that fails: see ``failures``.

    ``defer=True`` builds nothing yet but ``sensor_ports`` (and starts the
    simulated sensor's process): the buttons, the strip and the OLED, whose
    libraries take most of the start-up, are built by :meth:`Parts.finish`,
    which the caller runs once the game loop is up.
    """
    sim = cfg[""]["backend"] == "sim"
    parts = Parts()
    sim_sensor = None
    if sim:   # a process of its own: it starts while the other parts are built
        link = cfg["sim"]["sensor_link"] or os.path.join(
            tempfile.mkdtemp(prefix="patchwork-sim-"), "sensor")
        sim_sensor = _begin("simulated sensor", lambda: _start_sim_sensor(cfg, spaces, link))
        parts.sensor_ports = [link]
    else:
        parts.sensor_ports = list(cfg["sensor"]["ports"])
    parts.pending = lambda: _build_rest(parts, cfg, post, clock, sim, sim_sensor,
                                        on_oled_frame, on_led_frame)
    if not defer:
        parts.finish()
    return parts


def _build_rest(parts: Parts, cfg: dict, post: Callable, clock: Callable, sim: bool,
                sim_sensor, on_oled_frame, on_led_frame) -> None:
    """The buttons, the strip and the OLED, then the simulated sensor's answer."""
    factory_name = "mock" if sim else cfg["buttons"]["pin_factory"]
    parts.pin_factory = _try(parts, "pin factory", lambda: _pin_factory(factory_name))
    pins = {b: cfg["buttons"][b] for b in ("next", "ok", "back")}
    parts.buttons = _try(parts, "buttons", lambda: ButtonPanel(pins, post, clock, parts.pin_factory))
    if cfg["leds"]["driver"] != "none":
        pixels = _try(parts, "LED strip", lambda: _pixels(cfg, sim))
        if pixels is not None:
            parts.strip = LedStrip(pixels, on_led_frame)
    if cfg["display"]["driver"] != "none":
        def build():
            """luma's device for the configured OLED (raises when it does not answer)."""
            return _oled_device(cfg, sim)
        device = _try(parts, "OLED", build)
        parts.oled = Oled(device, on_oled_frame, build=build)
        if device is None:        # absent at start: tried again at every frame, as a part
            parts.oled.failed = parts.failures[-1]         # that failed later would be
    if sim_sensor is not None:
        parts.sim_sensor = sim_sensor(parts)
        if parts.sim_sensor is None:
            link = cfg["sim"]["sensor_link"]
            parts.sensor_ports = [str(link)] if link else []


#: backend -> where its simulated token sensor lives ("module:class"), resolved by name when
#: that backend starts: hw/ imports nothing from the rooms above it (sim/ is one of them)
SENSOR_SIMULATORS = {"sim": "firmware_py.sim.sensor:SimSensorProcess"}


def resolve(spec: str):
    """The object named by ``"package.module:attribute"`` (imported now).

    Raises ImportError or AttributeError naming what is missing."""
    from importlib import import_module
    module, _, attribute = spec.partition(":")
    return getattr(import_module(module), attribute)


def _start_sim_sensor(cfg: dict, spaces: int, link: str):
    SimSensorProcess = resolve(SENSOR_SIMULATORS["sim"])
    return SimSensorProcess(link, spaces=spaces, speed=cfg["sim"]["speed"]).start()
