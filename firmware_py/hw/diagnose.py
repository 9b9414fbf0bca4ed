"""Why the LED strip or the buttons could not open on a Raspberry Pi: the cause and the fix.

:func:`cause` reads the error text a part's driver raised (as ``build_parts``
reports it) and, where it helps, the device nodes under ``root``; it returns
one sentence naming the cause and what to do, or None when the error is not
one it knows. It reads files only; it never changes anything.
"""
from __future__ import annotations

import grp
import os
import stat
from pathlib import Path

REINSTALL = "run `sudo patchwork-companion install` again (it installs what each LED route imports)"

#: A missing module -> what provides it, for the install hint.
MODULES = {
    "gpiod": "Blinka's `board` module on every Pi model needs the gpiod bindings "
             "(pip gpiod>=2.2.2,<3)",
    "_rpi_ws281x": "the PWM LED route needs rpi-ws281x (built from source: build-essential "
                   "and python3-dev)",
    "rpi_ws281x": "the PWM LED route needs rpi-ws281x (built from source: build-essential "
                  "and python3-dev)",
    "adafruit_raspberry_pi5_neopixel_write": "the Pi 5 PIO LED route needs "
                                             "adafruit-blinka-raspberry-pi5-neopixel",
    "neopixel_spi": "the SPI LED route needs adafruit-circuitpython-neopixel-spi",
    "lgpio": "gpiozero's lgpio pin factory needs the Pi OS package python3-lgpio, seen "
             "through the venv's --system-site-packages",
}


def _missing_module(error: str) -> str | None:
    marker = "No module named '"
    if marker not in error:
        return None
    name = error.split(marker, 1)[1].split("'", 1)[0]
    return name.split(".")[0]


def group_name(gid: int, root: Path = Path("/")) -> str:
    """The name of group ``gid`` from ``root``/etc/group (the system's, for root "/")."""
    if Path(root).resolve() != Path("/"):
        groups = Path(root) / "etc" / "group"
        lines = groups.read_text("utf-8", "replace").splitlines() if groups.is_file() else []
        for line in lines:
            fields = line.split(":")
            if len(fields) >= 3 and fields[2] == str(gid):
                return fields[0]
        return str(gid)
    try:
        return grp.getgrgid(gid).gr_name
    except KeyError:
        return str(gid)


def pio_cause(root: Path = Path("/")) -> str:
    """What is wrong with /dev/pio0 (the Pi 5 PIO block) under ``root``, or that it looks right."""
    pio = root / "dev" / "pio0"
    if not pio.exists():
        return ("/dev/pio0 is missing: this kernel or firmware has no PIO support; run "
                "`sudo apt update && sudo apt full-upgrade`, reboot, or use the SPI route")
    mode = stat.S_IMODE(pio.stat().st_mode)
    group = group_name(pio.stat().st_gid, root)
    if group != "gpio" or mode & 0o060 != 0o060:
        return (f"/dev/pio0 belongs to group {group} with mode {mode:04o}: the service's group "
                "gpio cannot open it; the installer's rule /etc/udev/rules.d/"
                "99-patchwork-pio.rules fixes that (`sudo udevadm trigger` or reboot)")
    return "/dev/pio0 exists and group gpio may use it"


def gpiochip_cause(root: Path = Path("/"), falls_back: bool = False) -> str:
    """Which /dev/gpiochip* exist under ``root`` and what that means for gpiozero on a Pi 5.

    ``falls_back``: the gpiozero in use is 2.0.1.post1 or later (it opens gpiochip0
    when gpiochip4 is absent), so a missing gpiochip4 link is no fault.
    """
    dev = root / "dev"
    chips = sorted(p.name for p in dev.glob("gpiochip*")) if dev.is_dir() else []
    if "gpiochip0" not in chips:
        return ("no /dev/gpiochip0: the GPIO character device is missing; update the kernel "
                "(`sudo apt full-upgrade`) and reboot")
    link = dev / "gpiochip4"
    if not link.exists() and falls_back:
        return (f"GPIO chips present: {', '.join(chips)} (no gpiochip4 link: gpiozero "
                ">=2.0.1.post1, which this install pins, opens gpiochip0)")
    if not link.exists():
        return ("/dev/gpiochip4 is absent (Pi OS dropped the compatibility link to gpiochip0): "
                "gpiozero before 2.0.1.post1 opens gpiochip4 on a Pi 5 and fails; "
                f"{REINSTALL}, or for now `sudo ln -s gpiochip0 /dev/gpiochip4`")
    return f"GPIO chips present: {', '.join(chips)}"


SERVICE = "patchwork-companion"     #: the game service's systemd unit


def busy_cause(error: str) -> str:
    """What a GPIO line held by another process (lgpio's "GPIO busy", the kernel's
    EBUSY) means and how to free it; names the BCM pin when ``error`` does ("BCM 27 ...")."""
    words = error.split()
    pin = next((f"BCM {words[i + 1]}" for i, w in enumerate(words[:-1]) if w == "BCM"), None)
    line = f"{pin} is" if pin else "a GPIO line is"
    return (f"{line} held by another process, probably the companion's own service; stop it "
            f"with `sudo systemctl stop {SERVICE}` (and start it again afterwards), or find "
            "the holder with `gpioinfo`")


def cause(error: str, root: Path = Path("/")) -> str | None:
    """The cause of a strip or button start failure ``error`` and the fix, or None.

    ``error`` is the text after "... failed to start: " (an exception's
    message); ``root`` is where /dev is looked at (tests pass a folder).
    """
    module = _missing_module(error)
    if module in MODULES:
        return f"{MODULES[module]}; {REINSTALL}"
    lowered = error.lower()
    if "gpio busy" in lowered or "busy" in lowered and "gpio" in lowered:
        return busy_cause(error)
    if "pio0" in lowered or "rp1-pio" in lowered:
        return pio_cause(root)
    if "gpiochip" in lowered:
        if "permission" in lowered:
            return "no permission on /dev/gpiochip*: the user must be in group gpio"
        return gpiochip_cause(root)
    if "spidev" in lowered:
        return ("/dev/spidev0.0 is missing or closed: SPI is off; the installer sets "
                "dtparam=spi=on for the SPI route, then reboot (and check `ls -l /dev/spidev0.0`)")
    if "hardware revision is not supported" in lowered:
        return ("rpi_ws281x (the PWM route) does not support this board, e.g. a Pi 5: "
                "use the PIO route there, or the SPI route on BCM 10")
    if "ws2811_init failed" in lowered or "mmap() failed" in lowered or "/dev/mem" in lowered:
        return ("the PWM route maps /dev/mem and needs root: the service gets it from the "
                "installer's drop-in; run selftest with sudo, or use the SPI route")
    if "unable to load any default pin factory" in lowered:
        return (f"{MODULES['lgpio']}; `sudo apt install python3-lgpio`, or set "
                "[buttons] pin_factory")
    if "permission denied" in lowered and os.path.sep + "dev" in error:
        return "a device under /dev is not open to this user: it must be in groups gpio, spi and i2c"
    return None
