"""The installer's steps for the service itself: its venv and package, its config,
its units and device files, the reloads, enabling and starting it, and the web
page's unit (see :mod:`firmware_py.deploy.install` for the order)."""
from __future__ import annotations

import hashlib
import os
import re
import tomllib
from pathlib import Path, PurePosixPath

from ..disk import replace_symlink
from .layout import (
    COMMAND_LINK, CONFIG, DROPIN, MODULES, MODULES_TEXT, PIO_RULE, PIO_RULE_TEXT,
    PWM_ROOT_DROPIN, SERVICE, STAMP, UDEV_RULE, UNIT, VENV, WANTS_LINK, WEB_SERVICE, WEB_UNIT,
    WEB_WANTS_LINK,
)
from .options import InstallError
from .plan import MODELS, Plan
from .plumbing import atomic_write
from .toml_text import set_toml_value
from .plumbing import Plumbing


class ServiceSteps(Plumbing):
    """The steps that install, configure and start the service (and its web page)."""

    def step_venv(self) -> None:
        """Create the venv (with the system site packages when asked) unless it exists."""
        opts = self.options
        venv_python = VENV / "bin" / "python"
        if self.path(venv_python).exists():
            self.report("venv", "ok", f"{VENV} exists")
        else:
            flags = ["--system-site-packages"] if opts.system_site_packages else []
            self.command("venv", [opts.python, "-m", "venv", *flags, str(VENV)])

    def step_config(self, config_text: str) -> str:
        """Write ``config_text`` as the config unless one exists (kept as it is), then the
        web keys asked for (:meth:`step_web_config`); return the config text installed."""
        if self.path(CONFIG).is_file():
            self.report("config", "ok", f"{CONFIG} exists (kept as it is)")
        else:
            self.write_file("config", CONFIG, config_text)
        return self.step_web_config(config_text)

    def step_units(self, systemd_dir: Path, config_text: str, driver: str, model: str) -> bool:
        """Write the service unit, the web unit when the config turns the page on, and the
        root drop-in for the PWM NeoPixel route (not on a Pi 5; removed otherwise).
        Returns whether the web page is on."""
        self.write_file("unit", UNIT, (systemd_dir / SERVICE).read_text("utf-8"))
        web_on = self.web_enabled(config_text)
        if web_on:
            self.write_file("web unit", WEB_UNIT, (systemd_dir / WEB_SERVICE).read_text("utf-8"))
        if driver == "neopixel" and model != "pi5":
            note = "" if model in (*MODELS, "other") else " (model unknown: pass --model pi5 for a Pi 5)"
            self.write_file("pwm drop-in", DROPIN, PWM_ROOT_DROPIN)
            self.out(f"{'note':>12}  {'pwm drop-in':<14} the PWM LED route runs the service as root{note}")
        else:
            self.remove_file("pwm drop-in", DROPIN)
        return web_on

    def step_device_files(self, systemd_dir: Path, driver: str, model: str) -> None:
        """The udev rules (the sensor's; the PIO one only for a Pi 5's NeoPixel route), the
        modules to load, the boot config and the Pi 5's device checks."""
        self.write_file("udev rule", UDEV_RULE, (systemd_dir / "99-patchwork-sensor.rules").read_text("utf-8"))
        if driver == "neopixel" and model == "pi5":
            self.write_file("pio rule", PIO_RULE, PIO_RULE_TEXT)
        else:
            self.remove_file("pio rule", PIO_RULE)
        self.write_file("modules", MODULES, MODULES_TEXT)
        self.step_boot_config(driver, model)
        self.step_pi5_devices(driver, model)

    def step_udev_reload(self) -> None:
        """Reload udev and trigger the tty (and PIO) devices when a rule changed."""
        if self._touched("udev rule", "pio rule"):
            self.command("udev reload", ["udevadm", "control", "--reload"])
            self.command("udev trigger", ["udevadm", "trigger", "--action=add", "--subsystem-match=tty"])
            if self._touched("pio rule"):
                self.command("udev pio", ["udevadm", "trigger", "--action=add", "--subsystem-match=rp1-pio"])
        else:
            self.report("udev reload", "ok", "rule unchanged")

    def step_daemon_reload(self) -> None:
        """``systemctl daemon-reload`` when a unit changed, also after an earlier run that
        wrote the unit and then failed (systemd says it needs a reload)."""
        status, stale = self.query(["systemctl", "show", "--property=NeedDaemonReload", "--value", SERVICE])
        if self._touched("unit", "pwm drop-in", "web unit") or (status == 0 and stale.strip() == "yes"):
            self.command("daemon-reload", ["systemctl", "daemon-reload"])
        else:
            self.report("daemon-reload", "ok", "unit unchanged")

    def web_enabled(self, config_text: str) -> bool:
        """True when the config being installed turns the web page on."""
        try:
            web = tomllib.loads(config_text).get("web", {})
        except tomllib.TOMLDecodeError:
            return False
        return isinstance(web, dict) and web.get("enabled") is True

    def step_web_config(self, config_text: str) -> str:
        """With --web: set [web] enabled = true and the address in the config (the only
        keys the installer changes in an existing config, because they were asked for)."""
        if not self.options.web:
            return config_text
        new = set_toml_value(config_text, "web", "enabled", "true")
        new = set_toml_value(new, "web", "address", f'"{self.options.web_address}"')
        if tomllib.loads(new).get("web") != tomllib.loads(config_text).get("web"):
            self.write_file("web config", CONFIG, new)
        else:
            self.report("web config", "ok", f"{CONFIG} has [web] enabled = true")
        return new

    def step_web(self, on: bool) -> None:
        """Enable and (re)start the web page's unit when the config turns it on."""
        if not on:
            self.report("web", "skipped", "off (install --web, or [web] enabled = true, turns "
                        "the LAN page on)")
            return
        if self.run_commands:
            status, output = self.query(["systemctl", "is-enabled", WEB_SERVICE])
            enabled = status == 0 and output.strip() == "enabled"
        else:
            enabled = self.path(WEB_WANTS_LINK).is_symlink()
        if enabled:
            self.report("web enable", "ok", f"{WEB_SERVICE} is enabled")
        elif self.run_commands:
            self.command("web enable", ["systemctl", "enable", WEB_SERVICE])
        else:
            self.command("web enable", ["systemctl", f"--root={self.root}", "enable", WEB_SERVICE],
                         offline=True)
        if not (self.options.start and self.run_commands):
            self.report("web start", "skipped", "it starts with the system")
            return
        status, _ = self.query(["systemctl", "is-active", "--quiet", WEB_SERVICE])
        relevant = {n for n in ("package", "config", "web config", "web unit") if self._touched(n)}
        if status != 0:
            self.command("web start", ["systemctl", "start", WEB_SERVICE])
        elif relevant:
            self.command("web start", ["systemctl", "restart", WEB_SERVICE],
                         f"  (changed: {', '.join(sorted(relevant))})")
        else:
            self.report("web start", "ok", f"{WEB_SERVICE} is running")

    def step_package(self, source: Path, plan: Plan) -> None:
        """pip-install the package (with the pi extra) and the plan's requirements into the
        venv unless the stamp matches."""
        opts = self.options
        extras = list(plan.pip)
        if opts.package:
            spec = opts.package if "[" in opts.package else _with_extra(opts.package)
            print_spec, fingerprint = spec, spec
        else:
            spec = f"{source}[pi]"
            print_spec, fingerprint = spec, _fingerprint(source)
        stamp = "\n".join([print_spec, *extras, fingerprint]) + "\n"
        stamp_path = self.path(STAMP)
        current = stamp_path.read_text("utf-8") if stamp_path.is_file() else None
        if current == stamp and self.path(VENV / "bin" / "python").exists() and not opts.reinstall:
            self.report("package", "ok", f"installed from {print_spec} (stamp matches)")
            return
        argv = [str(VENV / "bin" / "python"), "-m", "pip", "install", "--upgrade", spec, *extras]
        self.command("package", argv)
        if self.run_commands and not opts.dry_run:
            atomic_write(stamp_path, stamp.encode("utf-8"), 0o644)

    def step_command_link(self, binary: PurePosixPath) -> None:
        """Link :data:`COMMAND_LINK` to the venv's ``patchwork-companion`` (idempotent).

        Raises:
            InstallError: when something other than a symbolic link is in the way
                (a file the installer did not write is never replaced).
        """
        path = self.path(COMMAND_LINK)
        if path.is_symlink() and os.readlink(path) == str(binary):
            self.report("command link", "ok", f"{COMMAND_LINK} -> {binary}")
            return
        if path.exists() and not path.is_symlink():
            raise InstallError(f"command link: {COMMAND_LINK} exists and is not a link; move it "
                               f"away so that `patchwork-companion` runs {binary}, then run again")
        if self.options.dry_run:
            self.report("command link", "would change", f"would link {COMMAND_LINK} -> {binary}")
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        replace_symlink(path, str(binary))
        self.report("command link", "changed", f"linked {COMMAND_LINK} -> {binary} (on the PATH)")

    def check_config(self, binary: PurePosixPath) -> None:
        """Validate the installed config with 'patchwork-companion config check'."""
        argv = [str(binary), "config", "check", str(CONFIG)]
        if self.options.dry_run or not self.run_commands:
            self.command("config check", argv)
            return
        status, output = self.runner(argv, True)
        if status != 0:
            raise InstallError(f"{CONFIG} does not pass `config check`:\n{output.strip()}\nFix it and run again.")
        self.report("config check", "ok", f"{CONFIG} is valid")

    def step_enable(self) -> None:
        """systemctl enable the service (idempotent)."""
        if self.run_commands:
            status, output = self.query(["systemctl", "is-enabled", SERVICE])
            enabled = status == 0 and output.strip() == "enabled"
        else:
            enabled = self.path(WANTS_LINK).is_symlink()
        if enabled:
            self.report("enable", "ok", f"{SERVICE} is enabled")
        elif self.run_commands:
            self.command("enable", ["systemctl", "enable", SERVICE])
        else:
            self.command("enable", ["systemctl", f"--root={self.root}", "enable", SERVICE], offline=True)

    def step_start(self) -> None:
        """Start the service, or restart it when the package, config or unit changed."""
        if not self.options.start:
            self.report("start", "skipped", "--no-start: it starts at the next boot")
            return
        if not self.run_commands:
            self.report("start", "skipped", "installing into a root: it starts when that system boots")
            return
        status, _ = self.query(["systemctl", "is-active", "--quiet", SERVICE])
        relevant = {n for n in ("package", "config", "unit", "pwm drop-in") if self._touched(n)}
        if status != 0:
            self.command("start", ["systemctl", "start", SERVICE])
        elif relevant:
            self.command("start", ["systemctl", "restart", SERVICE], f"  (changed: {', '.join(sorted(relevant))})")
        else:
            self.report("start", "ok", f"{SERVICE} is running")


def _fingerprint(source: Path) -> str:
    digest = hashlib.sha256()
    files = [source / "pyproject.toml", *sorted((source / "firmware_py").rglob("*"))]
    for path in files:
        if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc":
            digest.update(str(path.relative_to(source)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def _with_extra(spec: str) -> str:
    match = re.match(r"^([A-Za-z0-9][A-Za-z0-9._-]*)(.*)$", spec)
    return f"{match.group(1)}[pi]{match.group(2)}" if match else spec
