"""What the installer puts on each Raspberry Pi model for each LED route.

A :class:`Plan` lists the Raspberry Pi OS (apt) packages and the pip
requirements that the service's imports need on one model, LED route, CPU
architecture and Python version, and the build tools pip needs when one of
them has no wheel there (and only then). ``install --dry-run`` prints it;
``tests/deploy/test_install_plan.py`` runs the real Blinka, neopixel, neopixel_spi
and gpiozero imports for each model and route and checks that every module
they reach outside the package itself is provided by the plan.

Facts the tables below rest on (checked against PyPI and the libraries'
sources; see hardware/README.md, "What the installer installs"):

* Blinka 10 (``adafruit-blinka>=10,<11``) imports ``gpiod`` for ``board`` on
  every Pi model (Pi 3, Zero 2 W, 4 and 5 alike) and declares ``gpiod>=2.2.2,<3``;
  Blinka 9 used RPi.GPIO on the Pi 3/4 and lgpio on the Pi 5, so the plan pins
  the major version it was checked against.
* ``neopixel_write`` uses ``_rpi_ws281x`` (rpi-ws281x) on a Pi 3/4/Zero 2 W
  and ``adafruit_raspberry_pi5_neopixel_write`` on a Pi 5.
* PyPI has no wheels for rpi-ws281x at all: pip builds it (gcc, Python headers).
* adafruit-blinka-raspberry-pi5-neopixel 1.0.0rc2 has wheels for aarch64 and
  armv7l, CPython 3.11 and 3.13 (checked); other versions build from source (g++).
* gpiod 2.x has aarch64 wheels for CPython 3.11 and 3.13, none for armv7l.
* gpiozero's lgpio pin factory needs ``lgpio``: the Pi OS package python3-lgpio
  (seen through the venv's --system-site-packages), or the PyPI wheel
  (CPython 3.11 only), else a build with swig and liblgpio-dev.
* gpiozero 2.0 and 2.0.1 open /dev/gpiochip4 on a Pi 5 whatever exists;
  2.0.1.post1 and later fall back to gpiochip0 when gpiochip4 is absent.
* Pillow and sysv_ipc (a Blinka dependency) have no PyPI wheels for armv7l
  (32-bit Pi OS): pip gets them from piwheels where Pi OS's /etc/pip.conf points
  to it, else builds them.
"""
from __future__ import annotations

from dataclasses import dataclass

MODELS = ("pi3", "pi02", "pi4", "pi5")
MODEL_NAMES = {"pi3": "Pi 3", "pi02": "Pi Zero 2 W", "pi4": "Pi 4", "pi5": "Pi 5"}
ROUTES = ("neopixel", "neopixel_spi", "none")
ARCHES = ("aarch64", "armv7l")
BLINKA = "adafruit-blinka>=10,<11"
BUILD_C = ("build-essential", "python3-dev")

_WHEELS_311_313 = frozenset((arch, py) for arch in ARCHES for py in ((3, 11), (3, 13)))

#: The fixed core clock per model: (config.txt filter section, lines). On the
#: Pi 3, Zero 2 W and Pi 4 the SPI and I2C controllers divide the VPU core
#: clock, which the firmware scales with load: without these lines the SPI LED
#: data's bit timing drifts (wrong colours, flicker) and I2C set to 400 kHz at
#: one core frequency runs at another (250 kHz was measured on a Pi 3). Setting
#: the maximum and the minimum to the same value pins the clock: 250 MHz is the
#: Pi 3 / Zero 2 W core clock's floor, 500 MHz the Pi 4's default. The Pi 5's
#: SPI and I2C sit on the RP1, which has its own fixed clocks: nothing to write.
CORE_CLOCK = {
    "pi3": ("pi3", ("core_freq=250", "core_freq_min=250")),
    "pi02": ("pi02", ("core_freq=250", "core_freq_min=250")),
    "pi4": ("pi4", ("core_freq=500", "core_freq_min=500")),
}


def core_clock_sections(model: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """The config.txt sections that pin the core clock on ``model``: ((filter, lines), ...).

    One section for a Pi 3, Zero 2 W or Pi 4, none for a Pi 5; for "other" and
    "unknown" all three (each under its own model filter, so only the right
    one applies when the card boots)."""
    if model in CORE_CLOCK:
        return (CORE_CLOCK[model],)
    if model == "pi5":
        return ()
    return tuple(CORE_CLOCK.values())


def core_clock_line(model: str, route: str) -> str:
    """The plan's line about the core clock for ``model`` and LED ``route``."""
    sections = core_clock_sections(model)
    if not sections:
        return ("config.txt core clock: nothing to fix on a Pi 5 (the RP1 clocks SPI and I2C "
                "itself)")
    buses = "SPI (the LED data) and I2C (the OLED)" if route == "neopixel_spi" else "I2C (the OLED)"
    shown = "; ".join(f"[{f}] {' '.join(lines)}" for f, lines in sections)
    return (f"config.txt core clock {shown}: {buses} follow the core clock, which "
            "scales with load unless fixed")


@dataclass(frozen=True)
class Need:
    """One thing the imports need.

    kind: "apt" (a Raspberry Pi OS package) or "pip" (a requirement);
    name: the package or requirement; provides: the top-level import names it
    supplies; why: one line for the maker; wheels: (arch, (major, minor))
    pairs with a wheel on PyPI, or None for a pure-Python wheel that fits
    everywhere (an empty set: source only); build: apt packages pip needs
    to build it when there is no wheel.
    """

    kind: str
    name: str
    provides: tuple[str, ...]
    why: str
    wheels: frozenset | None = None
    build: tuple[str, ...] = ()

    def needs_build(self, arch: str, python: tuple[int, int]) -> bool:
        """True when pip must build this from source on ``arch`` with ``python``."""
        return self.kind == "pip" and self.wheels is not None and (arch, python) not in self.wheels


@dataclass(frozen=True)
class Plan:
    """What to install for one model, LED route, architecture and Python.

    apt: Raspberry Pi OS packages, runtime ones first, then build tools;
    pip: requirements added to the package's own; build: the build tools
    among ``apt`` and why each source build needs them; needs: every
    :class:`Need` considered.
    """

    model: str
    route: str
    arch: str
    python: tuple[int, int]
    needs: tuple[Need, ...]

    @property
    def apt(self) -> tuple[str, ...]:
        """apt packages: the runtime ones, then the build tools (no repeats)."""
        names = [n.name for n in self.needs if n.kind == "apt"]
        for need in self.needs:
            if need.needs_build(self.arch, self.python):
                names += need.build
        return tuple(dict.fromkeys(names))

    @property
    def pip(self) -> tuple[str, ...]:
        """pip requirements installed with the package."""
        return tuple(n.name for n in self.needs if n.kind == "pip")

    @property
    def builds(self) -> tuple[Need, ...]:
        """The pip requirements that have no wheel here and are built from source."""
        return tuple(n for n in self.needs if n.needs_build(self.arch, self.python))

    def provides(self) -> set[str]:
        """Every top-level import name the plan supplies."""
        return {name for need in self.needs for name in need.provides}

    def lines(self, clock_model: str | None = None) -> list[str]:
        """The plan for ``install --dry-run``: one line per need, the build tools, then
        the core clock lines for ``clock_model`` (default: the plan's model; the
        installer passes the detected one, which may be "unknown")."""
        py = f"{self.python[0]}.{self.python[1]}"
        out = [f"{MODEL_NAMES.get(self.model, self.model)}, LED route {self.route}, "
               f"{self.arch}, Python {py}"]
        for need in self.needs:
            how = "source build" if need.needs_build(self.arch, self.python) else (
                "apt" if need.kind == "apt" else "wheel")
            out.append(f"{need.kind} {need.name} ({how}): {need.why}")
        builds = self.builds
        if builds:
            tools = tuple(dict.fromkeys(t for n in builds for t in n.build))
            out.append(f"build tools {' '.join(tools)}: no wheel for "
                       f"{', '.join(n.name for n in builds)} on {self.arch} / Python {py}")
        else:
            out.append("build tools: none (every pip requirement has a wheel here)")
        out.append(core_clock_line(clock_model or self.model, self.route))
        return out


def _common(arch: str, system_site_packages: bool) -> list[Need]:
    needs = [
        Need("apt", "python3-venv", (), "creates /opt/patchwork-companion/venv"),
        Need("apt", "i2c-tools", (), "i2cdetect, to find the OLED on the bus"),
        Need("pip", BLINKA, ("board", "digitalio", "busio", "neopixel_write", "microcontroller"),
             "Blinka 10: the board module every LED route imports (its GPIO chain was checked)"),
        Need("pip", "gpiod>=2.2.2,<3", ("gpiod",),
             "libgpiod bindings: Blinka 10's board module imports them on every Pi",
             frozenset(("aarch64", py) for py in ((3, 11), (3, 13))), BUILD_C),
        Need("pip", "gpiozero>=2.0.1.post1", ("gpiozero",),
             "buttons; from 2.0.1.post1 it finds the Pi 5's header GPIO without /dev/gpiochip4"),
    ]
    if system_site_packages:
        needs.append(Need("apt", "python3-lgpio", ("lgpio",),
                          "gpiozero's lgpio pin factory (buttons), seen by the venv"))
    else:
        needs.append(Need("pip", "lgpio>=0.2.2", ("lgpio",),
                          "gpiozero's lgpio pin factory (buttons)",
                          frozenset({("aarch64", (3, 11)), ("armv7l", (3, 11))}),
                          BUILD_C + ("swig", "liblgpio-dev")))
    if arch == "armv7l":
        needs.append(Need("pip", "pillow>=10.0", ("PIL",),
                          "OLED drawing; no PyPI wheel for armv7l: piwheels (Pi OS's pip.conf) "
                          "or a build", frozenset(), BUILD_C + ("libjpeg-dev", "zlib1g-dev")))
        needs.append(Need("pip", "sysv_ipc>=1.1.0", ("sysv_ipc",),
                          "a Blinka dependency; no PyPI wheel for armv7l", frozenset(), BUILD_C))
    return needs


def _route(model: str, route: str) -> list[Need]:
    if route == "neopixel_spi":
        return [Need("pip", "adafruit-circuitpython-neopixel-spi>=1.0",
                     ("neopixel_spi", "adafruit_bus_device"),
                     "SPI LED route: the strip on BCM 10 through /dev/spidev0.0")]
    if route == "neopixel" and model == "pi5":
        return [Need("pip", "adafruit-blinka-raspberry-pi5-neopixel>=1.0.0rc2",
                     ("adafruit_raspberry_pi5_neopixel_write",),
                     "Pi 5 PIO LED route: neopixel_write through /dev/pio0 "
                     "(a release candidate; pip takes it because the requirement names one)",
                     _WHEELS_311_313, BUILD_C)]
    if route == "neopixel":
        return [Need("pip", "rpi-ws281x>=4.3", ("_rpi_ws281x", "rpi_ws281x"),
                     "PWM LED route: neopixel_write through rpi_ws281x on BCM 18 (runs as root)",
                     frozenset(), BUILD_C)]
    return []


def make_plan(model: str, route: str, arch: str = "aarch64", python: tuple[int, int] = (3, 11),
              system_site_packages: bool = True) -> Plan:
    """The plan for ``model`` (see :data:`MODELS`; "other"/"unknown" count as a Pi 4),
    ``route`` (see :data:`ROUTES`), ``arch`` (see :data:`ARCHES`) and ``python``
    (major, minor). Raises ValueError for a route or architecture it does not know."""
    if route not in ROUTES:
        raise ValueError(f"LED route must be one of {', '.join(ROUTES)}, got {route!r}")
    if arch not in ARCHES:
        raise ValueError(f"architecture must be one of {', '.join(ARCHES)}, got {arch!r} "
                         "(Raspberry Pi OS 64-bit is aarch64, 32-bit is armv7l)")
    model = model if model in MODELS else "pi4"
    needs = _common(arch, system_site_packages) + _route(model, route)
    return Plan(model, route, arch, tuple(python), tuple(needs))


def model_from_text(text: str) -> str:
    """The model key for /proc/device-tree/model text, e.g. "Raspberry Pi 5 Model B Rev 1.0"
    -> "pi5"; "unknown" for anything else."""
    for marker, key in (("Raspberry Pi 5", "pi5"), ("Compute Module 5", "pi5"),
                        ("Raspberry Pi 500", "pi5"), ("Raspberry Pi 4", "pi4"),
                        ("Raspberry Pi 400", "pi4"), ("Compute Module 4", "pi4"),
                        ("Raspberry Pi Zero 2", "pi02"), ("Raspberry Pi 3", "pi3"),
                        ("Compute Module 3", "pi3")):
        if marker in text:
            return key
    return "unknown"
