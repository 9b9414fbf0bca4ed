"""Where the installer puts things on the Raspberry Pi, and the small files it writes
whole (see :mod:`firmware_py.deploy.install` for the steps)."""
from __future__ import annotations

from pathlib import Path, PurePosixPath

SERVICE = "patchwork-companion.service"
WEB_SERVICE = "patchwork-companion-web.service"
USER = "patchwork"
WEB_USER = "patchwork-web"     #: the web page's own user, a member of the group USER
GROUPS = ("gpio", "i2c", "spi", "dialout")
PREFIX = PurePosixPath("/opt/patchwork-companion")
VENV = PREFIX / "venv"
STAMP = PREFIX / "install-stamp.txt"
STATE_DIR = PurePosixPath("/var/lib/patchwork-companion")
CONFIG = PurePosixPath("/etc/patchwork-companion/config.toml")
UNIT = PurePosixPath("/etc/systemd/system") / SERVICE
DROPIN = PurePosixPath("/etc/systemd/system") / (SERVICE + ".d") / "50-pwm-root.conf"
WANTS_LINK = PurePosixPath("/etc/systemd/system/multi-user.target.wants") / SERVICE
WEB_UNIT = PurePosixPath("/etc/systemd/system") / WEB_SERVICE
WEB_WANTS_LINK = PurePosixPath("/etc/systemd/system/multi-user.target.wants") / WEB_SERVICE
UDEV_RULE = PurePosixPath("/etc/udev/rules.d/99-patchwork-sensor.rules")
SYSUSERS = PurePosixPath("/etc/sysusers.d/patchwork-companion.conf")
MODULES = PurePosixPath("/etc/modules-load.d/patchwork-companion.conf")
#: ``patchwork-companion`` on every user's PATH (and root's, for sudo): a link to the
#: venv's entry point, so the build steps' commands work as written.
COMMAND_LINK = PurePosixPath("/usr/local/bin/patchwork-companion")
BOOT_CONFIGS = (PurePosixPath("/boot/firmware/config.txt"), PurePosixPath("/boot/config.txt"))
MODEL_FILE = PurePosixPath("/proc/device-tree/model")
PYPI_NAME = "patchwork-companion"
LED_DRIVERS = ("neopixel", "neopixel_spi", "none")
PIO_RULE = PurePosixPath("/etc/udev/rules.d/99-patchwork-pio.rules")
PIO_RULE_TEXT = """\
# Written by `patchwork-companion install` for the Pi 5 PIO LED route: the
# service (group gpio) drives the strip through /dev/pio0, which some
# Raspberry Pi OS releases leave to root:root.
SUBSYSTEM=="*-pio", GROUP="gpio", MODE="0660"
"""

#: Written for ``[leds] driver = "neopixel"`` on a Pi 3/4/Zero 2 W: rpi_ws281x's
#: PWM/DMA route maps /dev/mem and works only as root. The SPI route and the
#: Pi 5 PIO route need no root; the installer removes the file for them.
PWM_ROOT_DROPIN = """\
# Written by `patchwork-companion install` because [leds] driver = "neopixel"
# on a Pi 3/4/Zero 2 W: the PWM/DMA NeoPixel route (rpi_ws281x on BCM 18) maps
# /dev/mem and /dev/vcio and only works as root. driver = "neopixel_spi"
# (BCM 10) needs no root; with it the installer removes this file.
# /dev/vcio is allowed by path: it has been a misc device (major 10) since
# 2021, so no "char-vcio" class exists in /proc/devices to allow it by.
[Service]
User=root
CapabilityBoundingSet=CAP_SYS_RAWIO
DeviceAllow=/dev/mem rw
DeviceAllow=/dev/vcio rw
"""

MODULES_TEXT = "# Written by `patchwork-companion install`: /dev/i2c-* for the OLED.\ni2c-dev\n"


def under(root: Path, target: PurePosixPath) -> Path:
    """The host path of the absolute ``target`` inside the install ``root``."""
    return Path(root) / str(target).lstrip("/")
