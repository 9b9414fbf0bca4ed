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
import hashlib
import os
import re
import shlex
import sys
import tomllib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from ..disk import replace_symlink, write_durably
from .boot_config import BLOCK_BEGIN, BLOCK_END, CLOCK_BEGIN, CLOCK_END  # noqa: F401  (re-exported)
from .boot_config import edit_boot_config, edit_clock_block, find_boot_config
from .layout import (  # noqa: F401  (the paths and texts, also read from here)
    SERVICE, WEB_SERVICE, USER, WEB_USER, GROUPS, PREFIX, VENV, STAMP, STATE_DIR, CONFIG, UNIT,
    DROPIN, WANTS_LINK, WEB_UNIT, WEB_WANTS_LINK, UDEV_RULE, SYSUSERS, MODULES, COMMAND_LINK,
    BOOT_CONFIGS, MODEL_FILE, PYPI_NAME, LED_DRIVERS, PIO_RULE, PIO_RULE_TEXT, PWM_ROOT_DROPIN,
    MODULES_TEXT,
)
from .layout import under as _under
from .options import InstallError, Options, Runner, StepResult, run_command
from .plan import ARCHES, MODELS, Plan, core_clock_sections, make_plan, model_from_text
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
    here = Path(__file__).resolve().parent.parent
    return here if (here / "systemd" / SERVICE).is_file() else None


def _fingerprint(source: Path) -> str:
    digest = hashlib.sha256()
    files = [source / "pyproject.toml", *sorted((source / "firmware_py").rglob("*"))]
    for path in files:
        if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc":
            digest.update(str(path.relative_to(source)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def _owner(root: Path, uid: int) -> str:
    """The user name of ``uid`` in ``root``'s /etc/passwd ('' when it has none)."""
    path = _under(root, PurePosixPath("/etc/passwd"))
    if path.is_file():
        for line in path.read_text("utf-8", "replace").splitlines():
            fields = line.split(":")
            if len(fields) > 2 and fields[2] == str(uid):
                return fields[0]
    return ""


def _read_passwd_groups(root: Path) -> tuple[set[str], dict[str, set[str]]]:
    users: set[str] = set()
    groups: dict[str, set[str]] = {}
    for name, sink in (("passwd", "users"), ("group", "groups")):
        path = _under(root, PurePosixPath("/etc") / name)
        if not path.is_file():
            continue
        for line in path.read_text("utf-8", "replace").splitlines():
            fields = line.split(":")
            if len(fields) < 4 or line.startswith("#"):
                continue
            if sink == "users":
                users.add(fields[0])
            else:
                groups[fields[0]] = {m for m in fields[3].split(",") if m}
    return users, groups


@dataclass
class Installer:
    """Runs the steps for ``options``; ``runner`` runs commands, ``out`` prints a line.

    ``run_commands`` (default: ``options.root`` is "/") decides whether the
    commands acting on a live system run or are only printed ("deferred").
    """

    options: Options
    runner: Runner = run_command
    out: Callable[[str], None] = print
    run_commands: bool | None = None
    results: list[StepResult] = field(default_factory=list)
    _changed: set[str] = field(default_factory=set)
    reboot_needed: bool = False
    #: what the reboot enables, for the closing line ("" until config.txt changes)
    reboot_for: str = ""

    def __post_init__(self) -> None:
        if self.run_commands is None:
            self.run_commands = Path(self.options.root).resolve() == Path("/")

    # -- plumbing ----------------------------------------------------------

    @property
    def root(self) -> Path:
        """The install root: ``--root DIR``, or ``/`` for the running system."""
        return Path(self.options.root)

    def path(self, target: PurePosixPath) -> Path:
        """The host path of ``target`` inside the install root."""
        return _under(self.root, target)

    def report(self, name: str, status: str, detail: str) -> StepResult:
        """Print one step's outcome line and keep it for the summary."""
        result = StepResult(name, status, detail)
        self.results.append(result)
        self.out(f"{status:>12}  {name:<14} {detail}")
        if status == "changed":
            self._changed.add(name)
        return result

    def write_file(self, name: str, target: PurePosixPath, data: str, mode: int = 0o644) -> bool:
        """Make ``target`` hold ``data`` (atomically, fsynced); report; True if it differs(ed)."""
        path = self.path(target)
        payload = data.encode("utf-8")
        if path.is_file() and path.read_bytes() == payload and (path.stat().st_mode & 0o777) == mode:
            self.report(name, "ok", f"{target} is up to date")
            return False
        if self.options.dry_run:
            self.report(name, "would change", f"would write {target} ({len(payload)} bytes)")
            return True
        _atomic_write(path, payload, mode)
        self.report(name, "changed", f"wrote {target}")
        return True

    def remove_file(self, name: str, target: PurePosixPath) -> None:
        """Remove a managed file if present (idempotent) and report the step."""
        path = self.path(target)
        if not path.exists():
            self.report(name, "ok", f"{target} not needed, absent")
            return
        if self.options.dry_run:
            self.report(name, "would change", f"would remove {target}")
            return
        path.unlink()
        try:
            path.parent.rmdir()
        except OSError:
            pass
        self.report(name, "changed", f"removed {target}")

    def command(self, name: str, argv: Sequence[str], why: str = "", capture: bool = False,
                offline: bool = False) -> None:
        """Run a command that must succeed; only print it in a dry run or under ``--root``.

        ``offline``: the printed command works on the staging root from the
        build machine (it has a ``--root`` flag) rather than on the booted target.

        Raises:
            InstallError: if it exits non-zero.
        """
        shown = shlex.join(argv)
        if self.options.dry_run:
            self.report(name, "would change", f"would run: {shown}{why}")
            return
        if not self.run_commands:
            where = "to finish the root, run" if offline else "on the booted target, run"
            self.report(name, "deferred", f"{where}: {shown}{why}")
            return
        status, output = self.runner(argv, capture)
        if status != 0:
            raise InstallError(f"{name}: `{shown}` failed with exit status {status}{output and ': ' + output}")
        self.report(name, "changed", f"ran: {shown}")

    def query(self, argv: Sequence[str]) -> tuple[int, str]:
        """Run a read-only command (also in a dry run); (255, "") when commands don't run."""
        if not self.run_commands:
            return 255, ""
        return self.runner(argv, True)

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
            packaged = Path(__file__).with_name("default-config.toml")
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

    # -- the web page (off unless --web or [web] enabled = true) ------------

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

    def _would(self, name: str) -> bool:
        return any(r.name == name and r.status == "would change" for r in self.results)

    def _touched(self, *names: str) -> bool:
        """True if any of these steps changed something now (or would, in a dry run)."""
        return any(n in self._changed or self._would(n) for n in names)

    def step_store_access(self) -> None:
        """A state folder from an install before the web page had its own user: give the
        group ``patchwork`` the records and the index, and ``patchwork-web`` its names.json
        (the journal stays the service's alone; systemd makes the folder 1770)."""
        state = self.path(STATE_DIR)
        argv: list[list[str]] = []
        records, names = state / "records", state / "names.json"
        if records.is_dir() and records.stat().st_mode & 0o070 != 0o070:
            argv.append(["chmod", "-R", "g+rwX", str(STATE_DIR / "records")])
        shared = [f for f in sorted(state.glob("history.sqlite3*")) if f.stat().st_mode & 0o060 != 0o060]
        if shared:
            argv.append(["chmod", "g+rw", *(str(STATE_DIR / f.name) for f in shared)])
        if names.is_file() and _owner(self.root, names.stat().st_uid) != WEB_USER:
            argv.append(["chown", f"{WEB_USER}:{USER}", str(STATE_DIR / "names.json")])
        if not argv:
            self.report("store access", "ok", f"{STATE_DIR}: records, index and names as the web "
                                              f"page's user needs them")
        for one in argv:
            self.command("store access", one, " (the web page's own user reads and corrects these)")

    def step_user(self) -> None:
        """Create the 'patchwork' system user and its groups, and the web page's user
        'patchwork-web' in the group 'patchwork', with systemd-sysusers."""
        users, groups = _read_passwd_groups(self.root)
        missing = [g for g in GROUPS if USER not in groups.get(g, set())]
        if WEB_USER not in groups.get(USER, set()):
            missing.append(f"{WEB_USER} in {USER}")
        if USER in users and WEB_USER in users and not missing:
            self.report("user", "ok", f"{USER} exists in {', '.join(GROUPS)}; {WEB_USER} in {USER}")
            return
        if self.run_commands:
            self.command("user", ["systemd-sysusers", str(SYSUSERS)])
        else:
            self.command("user", ["systemd-sysusers", f"--root={self.root}", str(self.path(SYSUSERS))],
                         offline=True)

    def step_apt(self, plan: Plan) -> None:
        """apt-get install the plan's Raspberry Pi OS packages that are not installed yet."""
        wanted = list(plan.apt)
        if self.run_commands:
            status, out = self.query(["dpkg-query", "-W", "-f=${Package} ${db:Status-Abbrev}\n", *wanted])
            have = {f[0] for f in (line.split() for line in out.splitlines()) if len(f) > 1 and f[1] == "ii"}
            missing = [name for name in wanted if name not in have]
        else:
            missing = wanted              # a staging root: the target installs them when it boots
        if not missing:
            self.report("apt", "ok", f"installed: {' '.join(wanted)}")
            return
        self.command("apt update", ["apt-get", "update"])      # an old package list fails installs
        self.command("apt", ["apt-get", "install", "-y", "--no-install-recommends", *missing])

    def step_pi5_devices(self, driver: str, model: str) -> None:
        """On a Pi 5: check /dev/pio0 (PIO route) and the gpiochip gpiozero opens; say what to do."""
        from ..hw.diagnose import gpiochip_cause, pio_cause
        if model != "pi5":
            self.report("pi5 devices", "skipped", "not a Pi 5")
            return
        if not self.path(PurePosixPath("/dev")).is_dir():
            self.report("pi5 devices", "skipped", "no /dev under this root: check on the Pi "
                        "with `ls -l /dev/pio0 /dev/gpiochip*`")
            return
        findings = [gpiochip_cause(self.root, falls_back=True)]
        if driver == "neopixel":
            findings.append(pio_cause(self.root))
        bad = [f for f in findings if not f.startswith(("GPIO chips present", "/dev/pio0 exists"))]
        self.report("pi5 devices", "warning" if bad else "ok", "; ".join(findings))

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
            _atomic_write(stamp_path, stamp.encode("utf-8"), 0o644)

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

    def step_boot_config(self, driver: str, model: str) -> None:
        """Enable I2C at 400 kHz (and SPI or PWM audio-off per LED route) in config.txt."""
        path = find_boot_config(self.root)
        if path is None:
            self.report("boot config", "skipped", "no /boot/firmware/config.txt or /boot/config.txt here")
            return
        target = "/" + str(path.relative_to(self.root)).lstrip("/")
        wanted = {"i2c_arm": "on", "i2c_arm_baudrate": "400000"}
        if driver == "neopixel_spi":
            wanted["spi"] = "on"
        elif driver == "neopixel" and model != "pi5":
            wanted["audio"] = "off"  # the PWM route shares PWM0 with the analog audio
        clocks = core_clock_sections(model)
        text = path.read_text("utf-8")
        new = edit_clock_block(edit_boot_config(text, wanted), clocks)
        settings = ", ".join([f"dtparam={k}={v}" for k, v in wanted.items()]
                             + [f"[{f}] {' '.join(lines)}" for f, lines in clocks])
        if new == text:
            self.report("boot config", "ok", f"{target} has {settings}")
            return
        if self.options.dry_run:
            self.report("boot config", "would change", f"would set {settings} in {target}")
            return
        backup = path.with_name(path.name + ".before-patchwork-companion")
        if not backup.exists():
            _atomic_write(backup, path.read_bytes(), 0o644)
        _atomic_write(path, new.encode("utf-8"), path.stat().st_mode & 0o777)
        self.reboot_needed = True
        self.reboot_for = "I2C at 400 kHz" + (" and the fixed core clock" if clocks else "")
        self.report("boot config", "changed", f"set {settings} in {target} (backup: {backup.name})")

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


def _with_extra(spec: str) -> str:
    match = re.match(r"^([A-Za-z0-9][A-Za-z0-9._-]*)(.*)$", spec)
    return f"{match.group(1)}[pi]{match.group(2)}" if match else spec


def _atomic_write(path: Path, data: bytes, mode: int) -> None:
    """Write ``data`` to ``path`` durably: temp file, fsync, rename, fsync the folder."""
    path.parent.mkdir(parents=True, exist_ok=True)
    write_durably(path, data, mode)


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
