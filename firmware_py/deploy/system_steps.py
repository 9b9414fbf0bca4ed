"""The installer's steps on the operating system: packages, users and groups, the
state folder's access, the firmware's config.txt and the Pi 5's devices (see
:mod:`firmware_py.deploy.install` for the order)."""
from __future__ import annotations

from pathlib import Path, PurePosixPath

from .boot_config import edit_boot_config, edit_clock_block, find_boot_config
from .layout import GROUPS, STATE_DIR, SYSUSERS, USER, WEB_USER, under
from .plan import Plan, core_clock_sections
from .plumbing import atomic_write
from .plumbing import Plumbing


class SystemSteps(Plumbing):
    """The steps that set up the operating system for the service."""

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
            atomic_write(backup, path.read_bytes(), 0o644)
        atomic_write(path, new.encode("utf-8"), path.stat().st_mode & 0o777)
        self.reboot_needed = True
        self.reboot_for = "I2C at 400 kHz" + (" and the fixed core clock" if clocks else "")
        self.report("boot config", "changed", f"set {settings} in {target} (backup: {backup.name})")


def _owner(root: Path, uid: int) -> str:
    """The user name of ``uid`` in ``root``'s /etc/passwd ('' when it has none)."""
    path = under(root, PurePosixPath("/etc/passwd"))
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
        path = under(root, PurePosixPath("/etc") / name)
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
