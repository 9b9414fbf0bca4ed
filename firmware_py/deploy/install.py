"""``patchwork-companion install``: set up a Raspberry Pi as the table-side box, idempotently.

One run, in this order (each step first checks, then acts only if needed, so a
second run changes nothing):

0. ``plan``         prints what this model and LED route import and which packages supply it
                    (:mod:`firmware_py.deploy.plan`)
   ``apt``          apt-get install the Raspberry Pi OS packages of the plan that are missing
                    (build tools only when a pip requirement has no wheel here)
1. ``sysusers``     /etc/sysusers.d/patchwork-companion.conf (the user and its groups)
2. ``user``         system user ``patchwork`` in gpio, i2c, spi, dialout, and the web page's
                    user ``patchwork-web`` in the group ``patchwork`` (systemd-sysusers)
   ``store access``  a state folder from an older install: the group gets records/ and the
                    index, ``patchwork-web`` its names.json
3. ``venv``         /opt/patchwork-companion/venv
4. ``config``       /etc/patchwork-companion/config.toml from the default, only if absent
                    (``backend = "pi"``, journal in /var/lib/patchwork-companion)
5. ``package``      pip install the checkout (or ``--package``) with the ``pi`` extra and
                    the plan's pip requirements; skipped when the install stamp matches
6. ``config check`` ``patchwork-companion config check`` on that file
   ``command link`` /usr/local/bin/patchwork-companion -> the venv's entry point (on the PATH)
7. ``unit``         /etc/systemd/system/patchwork-companion.service
8. ``pwm drop-in``  a root drop-in only for the PWM NeoPixel route (see :data:`PWM_ROOT_DROPIN`)
9. ``udev rule``    /etc/udev/rules.d/99-patchwork-sensor.rules
   ``pio rule``     Pi 5 PIO route only: /etc/udev/rules.d/99-patchwork-pio.rules (/dev/pio0 to gpio)
   ``pi5 devices``  Pi 5 only: checks /dev/pio0 and /dev/gpiochip0/4 and says what to do
10. ``modules``     /etc/modules-load.d/patchwork-companion.conf (i2c-dev)
11. ``boot config`` dtparam=i2c_arm=on, i2c_arm_baudrate=400000, plus spi=on for the
                    SPI LED route or audio=off for the PWM route (not on a Pi 5), and
                    on a Pi 3 / Zero 2 W / Pi 4 the fixed core clock under the model's
                    filter (:data:`firmware_py.deploy.plan.CORE_CLOCK`), in
                    /boot/firmware/config.txt or /boot/config.txt
12. ``udev reload`` / 13. ``daemon-reload`` when their files changed
14. ``enable`` / 15. ``start`` (restart when something it runs changed)

``--dry-run`` prints what each step would do and changes nothing. ``--root DIR``
installs the files into a staging root and only prints the commands that act
on a running system (systemd-sysusers, venv, pip, udevadm, systemctl), so tests
and image builds never touch the machine they run on.

Run it from a source checkout before the package is installed::

    sudo python3 -m firmware_py.deploy.install --dry-run
    sudo python3 -m firmware_py.deploy.install

Standard library only (Python >= 3.11 for tomllib).
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import tomllib
from collections.abc import Sequence
from pathlib import Path

from .boot_config import BLOCK_BEGIN, BLOCK_END, CLOCK_BEGIN, CLOCK_END  # noqa: F401  (read from here)
from .boot_config import edit_boot_config, edit_clock_block, find_boot_config  # noqa: F401
from .layout import (  # noqa: F401  (the paths and texts, also read from here)
    BOOT_CONFIGS, COMMAND_LINK, CONFIG, DROPIN, GROUPS, LED_DRIVERS, MODEL_FILE, MODULES,
    MODULES_TEXT, PIO_RULE, PIO_RULE_TEXT, PREFIX, PWM_ROOT_DROPIN, PYPI_NAME, SERVICE, STAMP,
    STATE_DIR, SYSUSERS, UDEV_RULE, UNIT, USER, VENV, WANTS_LINK, WEB_SERVICE, WEB_UNIT,
    WEB_USER, WEB_WANTS_LINK,
)
from .options import InstallError, Options, StepResult
from .plan import ARCHES, MODELS, Plan, make_plan, model_from_text
from .service_steps import ServiceSteps
from .system_steps import SystemSteps
from .toml_text import set_toml_value

__all__ = [
    "InstallError",
    "Installer",
    "Options",
    "StepResult",
    "edit_boot_config",
    "find_boot_config",
    "main",
    "set_toml_value",
]

# --------------------------------------------------------------------------- installer


def _checkout_of_this_module() -> Path | None:
    here = Path(__file__).resolve().parents[2]          # firmware_py/deploy/ -> the checkout
    return here if (here / "systemd" / SERVICE).is_file() else None


class Installer(ServiceSteps, SystemSteps):
    """Runs the steps for ``options``; ``runner`` runs commands, ``out`` prints a line.

    ``run_commands`` (default: ``options.root`` is "/") decides whether the
    commands acting on a live system run or are only printed ("deferred").
    The fields and the plumbing are :class:`~firmware_py.deploy.plumbing.Plumbing`'s;
    the steps are :class:`~firmware_py.deploy.service_steps.ServiceSteps`' and
    :class:`~firmware_py.deploy.system_steps.SystemSteps`'; here are the inputs and
    their order (:meth:`run`).
    """

    # -- inputs ------------------------------------------------------------

    def source(self) -> Path:
        """The checkout holding systemd/: ``--source``, else the one this module is in,
        else the one the last install came from (first line of the install stamp).

        Raises:
            InstallError: if none of them has systemd/patchwork-companion.service.
        """
        source = self.options.source or _checkout_of_this_module() or self._source_from_stamp()
        if source is None or not (Path(source) / "systemd" / SERVICE).is_file():
            raise InstallError(
                "cannot find systemd/patchwork-companion.service: pass --source with the "
                "patchwork-companion source checkout"
            )
        return Path(source)

    def _source_from_stamp(self) -> Path | None:
        stamp = self.path(STAMP)
        try:
            first = stamp.read_text("utf-8").splitlines()[0]
        except (OSError, IndexError):
            return None
        if first.endswith("[pi]") and first.startswith("/"):
            candidate = Path(first[: -len("[pi]")])
            if (candidate / "systemd" / SERVICE).is_file():
                return candidate
        return None

    def model(self) -> str:
        """The Raspberry Pi model: one of :data:`MODELS`, "other" (given as --model: a
        Pi 3/4/Zero 2 W) or "unknown" (from --model or /proc/device-tree/model)."""
        if self.options.model != "auto":
            return self.options.model
        path = self.path(MODEL_FILE)
        try:
            text = path.read_bytes().decode("utf-8", "replace").rstrip("\0\n")
        except OSError:
            return "unknown"
        return model_from_text(text)

    def arch(self) -> str:
        """The CPU architecture pip installs for: --arch, this machine's, or aarch64."""
        if self.options.arch != "auto":
            return self.options.arch
        machine = os.uname().machine if self.run_commands else "aarch64"
        return machine if machine in ARCHES else "aarch64"

    def python_version(self) -> tuple[int, int]:
        """(major, minor) of the venv's interpreter: --python-version, asked, or 3.11."""
        wanted = self.options.python_version
        if wanted == "auto" and self.run_commands:
            status, out = self.query([self.options.python, "-c",
                                      "import sys; print('%d.%d' % sys.version_info[:2])"])
            wanted = out.strip() if status == 0 else ""
        match = re.fullmatch(r"(\d+)\.(\d+)", wanted)
        return (int(match.group(1)), int(match.group(2))) if match else (3, 11)

    def plan(self, driver: str, model: str) -> Plan:
        """The :class:`~firmware_py.deploy.plan.Plan` for this model and LED route; an
        unknown model with the neopixel route gets both the PWM and the Pi 5 library."""
        opts = self.options
        known = model if model in MODELS else "pi4"
        plan = make_plan(known, driver, self.arch(), self.python_version(),
                         opts.system_site_packages)
        if model not in MODELS and model != "other" and driver == "neopixel":
            pi5 = make_plan("pi5", driver, plan.arch, plan.python, opts.system_site_packages)
            plan = Plan(plan.model, driver, plan.arch, plan.python,
                        tuple(dict.fromkeys(plan.needs + pi5.needs)))
        return plan

    def template(self) -> str:
        """The config to write when none exists, set up for the Pi service."""
        if self.options.config_template:
            text = Path(self.options.config_template).read_text("utf-8")
        else:
            packaged = Path(__file__).resolve().parents[1] / "default-config.toml"
            if not packaged.is_file():
                raise InstallError(f"{packaged} is missing: pass --config-template FILE")
            text = packaged.read_text("utf-8")
        text = set_toml_value(text, "", "backend", '"pi"')
        text = set_toml_value(text, "journal", "dir", f'"{STATE_DIR}"')
        driver = self.options.leds_driver
        if driver != "auto":
            text = set_toml_value(text, "leds", "driver", f'"{driver}"')
            if driver in ("neopixel", "neopixel_spi"):
                text = set_toml_value(text, "leds", "pin", '"D18"' if driver == "neopixel" else '"D10"')
        return text

    def led_driver(self, config_text: str, where: str) -> str:
        """The LED route of the config being installed (leds.driver)."""
        try:
            data = tomllib.loads(config_text)
        except tomllib.TOMLDecodeError as exc:
            raise InstallError(f"{where} is not valid TOML ({exc}); fix it and run again") from exc
        leds = data.get("leds", {})
        return str(leds.get("driver", "neopixel")) if isinstance(leds, dict) else "neopixel"

    def driver_packages(self, driver: str, model: str) -> list[str]:
        """The pip requirements of the plan for this LED route and model."""
        return list(self.plan(driver, model).pip)

    # -- the steps ---------------------------------------------------------

    def run(self) -> list[StepResult]:
        """Do every step in order; return their results.

        Raises:
            InstallError: when a step fails or an input is missing; steps
                before it stay done (running again resumes where it stopped).
        """
        self._check_root()
        source = self.source()
        model = self.model()
        systemd_dir = source / "systemd"
        config_text, driver = self._config_and_driver()
        plan = self.plan(driver, model)
        for line in plan.lines(clock_model=model):
            self.out(f"{'plan':>12}  {line}")
        self.step_apt(plan)

        self.write_file("sysusers", SYSUSERS, (systemd_dir / "patchwork-companion.sysusers").read_text("utf-8"))
        self.step_user()
        self.step_store_access()
        self.step_venv()
        config_text = self.step_config(config_text)

        self.step_package(source, plan)
        binary = VENV / "bin" / "patchwork-companion"
        self.check_config(binary)
        self.step_command_link(binary)

        web_on = self.step_units(systemd_dir, config_text, driver, model)
        self.step_device_files(systemd_dir, driver, model)
        self.step_udev_reload()
        self.step_daemon_reload()
        self.step_enable()
        self.step_start()
        self.step_web(web_on)
        self.summary()
        return self.results

    def _check_root(self) -> None:
        """Acting on this machine (not a dry run, no staging root) needs root.

        Raises:
            InstallError: when not run as root.
        """
        if self.run_commands and not self.options.dry_run and hasattr(os, "geteuid") \
                and os.geteuid() != 0:
            raise InstallError("installing on this machine needs root: run it with sudo (or use --dry-run)")

    def _config_and_driver(self) -> tuple[str, str]:
        """The config text to install (the existing file, else the template) and its
        LED route (leds.driver)."""
        config_path = self.path(CONFIG)
        if config_path.is_file():
            config_text = config_path.read_text("utf-8")
            return config_text, self.led_driver(config_text, str(CONFIG))
        config_text = self.template()
        return config_text, self.led_driver(config_text, "the default config")


    def summary(self) -> None:
        """Print the closing line: how many steps changed, were skipped or failed."""
        counts: dict[str, int] = {}
        for result in self.results:
            counts[result.status] = counts.get(result.status, 0) + 1
        order = ("changed", "would change", "deferred", "warning", "ok", "skipped")
        text = ", ".join(f"{counts[s]} {s}" for s in order if counts.get(s))
        self.out(f"{'done':>12}  {text}")
        if self.reboot_needed:
            self.out(f"{'reboot':>12}  config.txt changed: reboot to enable {self.reboot_for} "
                     "(sudo reboot)")


# --------------------------------------------------------------------------- CLI


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``patchwork-companion install``."""
    parser = argparse.ArgumentParser(
        prog="patchwork-companion install",
        description="Install the companion as a systemd service on this Raspberry Pi "
        "(idempotent: running it again changes nothing).",
    )
    parser.add_argument("-n", "--dry-run", action="store_true", help="print each step, change nothing")
    parser.add_argument("--root", type=Path, default=Path("/"),
                        help="install into this staging root; commands for the running system are only printed")
    parser.add_argument("--source", type=Path, help="source checkout (default: the one this module is in)")
    parser.add_argument("--package", help="pip requirement to install instead of the checkout, "
                        f"e.g. {PYPI_NAME}==0.1.0 (the [pi] extra is added)")
    parser.add_argument("--python", default="/usr/bin/python3", help="interpreter for the venv (default: %(default)s)")
    parser.add_argument("--leds-driver", choices=("auto", *LED_DRIVERS), default="auto",
                        help="LED route written into a new config: neopixel (PWM, BCM 18; Pi 5: PIO), "
                        "neopixel_spi (SPI, BCM 10, no root), none; auto keeps the default")
    parser.add_argument("--model", choices=("auto", *MODELS, "other"), default="auto",
                        help="Raspberry Pi model: pi3, pi02 (Zero 2 W), pi4, pi5; other = a "
                        "Pi 3/4/Zero 2 W (auto: read /proc/device-tree/model)")
    parser.add_argument("--arch", choices=("auto", *ARCHES), default="auto",
                        help="aarch64 (64-bit Pi OS) or armv7l (32-bit); auto: this machine's, "
                        "aarch64 under --root")
    parser.add_argument("--python-version", default="auto",
                        help="the venv Python as MAJOR.MINOR (auto: ask --python; 3.11 under --root)")
    parser.add_argument("--config-template", type=Path, help="start a new config from this TOML file")
    parser.add_argument("--no-start", dest="start", action="store_false", help="enable the service but do not start it")
    parser.add_argument("--reinstall", action="store_true", help="run pip even if this version is installed")
    parser.add_argument("--no-system-site-packages", dest="system_site_packages", action="store_false",
                        help="create the venv without the system's packages (e.g. python3-lgpio)")
    parser.add_argument("--web", action="store_true",
                        help="also install and start the LAN web page (sets [web] enabled = true)")
    parser.add_argument("--web-address", default="0.0.0.0",
                        help="with --web: the one address the page listens on (default: %(default)s, "
                        "every interface; 127.0.0.1 keeps it on the Pi)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``patchwork-companion install``.

    Args:
        argv: the arguments after ``install`` (default: ``sys.argv[1:]``).

    Returns:
        0 on success, 1 when a step failed (the message is on stderr), 2 for bad arguments.
    """
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return int(exc.code or 0)
    options = Options(
        root=args.root, dry_run=args.dry_run, source=args.source, package=args.package,
        python=args.python, leds_driver=args.leds_driver, model=args.model, arch=args.arch,
        python_version=args.python_version,
        config_template=args.config_template, start=args.start, reinstall=args.reinstall,
        system_site_packages=args.system_site_packages, web=args.web,
        web_address=args.web_address,
    )
    installer = Installer(options)
    try:
        installer.run()
    except InstallError as exc:
        print(f"patchwork-companion install: error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
