"""The installer, run for real into temporary roots (never on this machine)."""

from __future__ import annotations

import os
import tomllib
from pathlib import Path

import pytest

from firmware_py.deploy import install
from firmware_py.deploy.install import (
    BLOCK_BEGIN,
    BLOCK_END,
    InstallError,
    Installer,
    Options,
    edit_boot_config,
    find_boot_config,
    set_toml_value,
)

REPO = Path(__file__).resolve().parents[2]
STEPS = [
    "apt", "sysusers", "user", "venv", "config", "package", "config check", "command link",
    "unit", "pwm drop-in",
    "udev rule", "pio rule", "modules", "boot config", "pi5 devices", "udev reload",
    "daemon-reload", "enable", "start",
]

PI_OS_CONFIG_TXT = """\
# For more options and information see
# http://rptl.io/configtxt
# Some settings may impact device functionality. See link above for details

# Uncomment some or all of these to enable the optional hardware interfaces
#dtparam=i2c_arm=on
#dtparam=i2s=on
#dtparam=spi=on

# Enable audio (loads snd_bcm2835)
dtparam=audio=on

# Automatically load overlays for detected cameras
camera_auto_detect=1

[cm4]
# Enable host mode on the 2711 built-in XHCI USB controller.
otg_mode=1

[all]
"""


def make_root(tmp_path: Path, model: str | None = None, boot: str = "/boot/firmware/config.txt") -> Path:
    root = tmp_path / "root"
    config_txt = root / boot.lstrip("/")
    config_txt.parent.mkdir(parents=True)
    config_txt.write_text(PI_OS_CONFIG_TXT)
    if model:
        (root / "proc/device-tree").mkdir(parents=True)
        (root / "proc/device-tree/model").write_bytes(model.encode() + b"\0")
    return root


def snapshot(root: Path) -> dict[str, tuple]:
    """Every path under root with its kind, bytes, mode and mtime."""
    out = {}
    for path in sorted(root.rglob("*")):
        st = path.lstat()
        data = path.read_bytes() if path.is_file() and not path.is_symlink() else None
        out[str(path.relative_to(root))] = (path.is_symlink(), data, st.st_mode, st.st_mtime_ns)
    return out


def run(root: Path, *args: str) -> tuple[int, str]:
    import contextlib
    import io

    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        code = install.main(["--root", str(root), "--source", str(REPO), *args])
    return code, buffer.getvalue()


# ------------------------------------------------------------------ dry run and --root


def test_dry_run_prints_every_step_and_writes_nothing(tmp_path):
    root = make_root(tmp_path)
    before = snapshot(root)
    code, out = run(root, "--dry-run")
    assert code == 0
    for step in STEPS:
        assert f"  {step} " in out, f"step {step!r} not printed:\n{out}"
    assert "would write /etc/systemd/system/patchwork-companion.service" in out
    assert ("would set dtparam=i2c_arm=on, dtparam=i2c_arm_baudrate=400000, dtparam=audio=off, "
            "[pi3] core_freq=250 core_freq_min=250; [pi02] core_freq=250 core_freq_min=250; "
            "[pi4] core_freq=500 core_freq_min=500 in /boot/firmware/config.txt").replace(
                "; [", ", [") in out
    assert snapshot(root) == before
    plan = next(line for line in out.splitlines() if "config.txt core clock" in line)
    assert "[pi3]" in plan and "[pi02]" in plan and "[pi4]" in plan   # model unknown: all three


def test_dry_run_of_an_empty_root_creates_nothing(tmp_path):
    root = tmp_path / "empty"
    root.mkdir()
    code, out = run(root, "-n")
    assert code == 0
    assert "no /boot/firmware/config.txt" in out
    assert list(root.iterdir()) == []


def test_install_into_a_root_writes_the_files(tmp_path):
    root = make_root(tmp_path, model="Raspberry Pi 4 Model B Rev 1.5")
    code, out = run(root)
    assert code == 0, out
    etc = root / "etc"
    assert (etc / "systemd/system/patchwork-companion.service").read_text() == (
        REPO / "systemd/patchwork-companion.service"
    ).read_text()
    assert (etc / "udev/rules.d/99-patchwork-sensor.rules").read_text() == (
        REPO / "systemd/99-patchwork-sensor.rules"
    ).read_text()
    assert (etc / "sysusers.d/patchwork-companion.conf").read_text() == (
        REPO / "systemd/patchwork-companion.sysusers"
    ).read_text()
    assert (etc / "modules-load.d/patchwork-companion.conf").read_text().splitlines()[-1] == "i2c-dev"
    for path in [etc / "systemd/system/patchwork-companion.service", etc / "patchwork-companion/config.toml"]:
        assert path.stat().st_mode & 0o777 == 0o644

    config = tomllib.loads((etc / "patchwork-companion/config.toml").read_text())
    assert config["backend"] == "pi"
    assert config["journal"]["dir"] == "/var/lib/patchwork-companion"
    assert config["leds"]["driver"] == "neopixel"

    boot = (root / "boot/firmware/config.txt").read_text()
    assert boot.startswith(PI_OS_CONFIG_TXT.replace("dtparam=audio=on", "dtparam=audio=off"))
    assert "dtparam=i2c_arm=on\ndtparam=i2c_arm_baudrate=400000\n" in boot
    assert "dtparam=spi=on" not in boot.replace("#dtparam=spi=on", "")
    assert "\ndtparam=audio=off\n" in boot  # PWM route: rewritten in place, not appended
    assert "dtparam=audio=on" not in boot
    assert (root / "boot/firmware/config.txt.before-patchwork-companion").read_text() == PI_OS_CONFIG_TXT

    # PWM route on a Pi 4: the root drop-in, with a note saying so
    dropin = etc / "systemd/system/patchwork-companion.service.d/50-pwm-root.conf"
    assert "User=root" in dropin.read_text()
    # commands for a running system are printed, not run
    for command in ["systemd-sysusers --root=", "-m venv", "-m pip install", "udevadm control --reload",
                    "systemctl daemon-reload", "systemctl --root="]:
        assert command in out, command
    assert "reboot" in out
    assert not (root / "opt").exists()  # no venv built into the staging root


def test_config_from_the_installer_passes_the_service_validator(tmp_path):
    from firmware_py.config import load_config

    root = make_root(tmp_path)
    assert run(root)[0] == 0
    cfg = load_config(root / "etc/patchwork-companion/config.toml")
    assert cfg[""]["backend"] == "pi"


def test_second_run_changes_nothing(tmp_path):
    root = make_root(tmp_path)
    assert run(root)[0] == 0
    before = snapshot(root)
    code, out = run(root)
    assert code == 0
    assert snapshot(root) == before
    assert " changed " not in out and "would change" not in out
    for step in ["sysusers", "config", "unit", "pwm drop-in", "udev rule", "modules", "boot config",
                 "udev reload", "daemon-reload"]:
        assert any(line.split()[:2] == ["ok", step.split()[0]] for line in out.splitlines()), step


def test_existing_config_is_never_overwritten(tmp_path):
    root = make_root(tmp_path)
    config = root / "etc/patchwork-companion/config.toml"
    config.parent.mkdir(parents=True)
    config.write_text('backend = "pi"\n[leds]\ndriver = "none"\n')
    code, out = run(root, "--leds-driver", "neopixel_spi")
    assert code == 0
    assert config.read_text() == 'backend = "pi"\n[leds]\ndriver = "none"\n'
    assert "exists (kept as it is)" in out
    assert not (root / "etc/systemd/system/patchwork-companion.service.d").exists()


def put(root: Path, target: str, text: str) -> Path:
    """A file already in the root before the install: ``target`` holding ``text``."""
    path = root / target.lstrip("/")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_invalid_existing_config_stops_the_install(tmp_path):
    root = make_root(tmp_path)
    put(root, "/etc/patchwork-companion/config.toml", "backend = \n")
    code, _ = run(root)
    assert code == 1


def test_spi_route_enables_spi_and_needs_no_root(tmp_path):
    root = make_root(tmp_path, model="Raspberry Pi 3 Model B Plus Rev 1.3")
    code, out = run(root, "--leds-driver", "neopixel_spi")
    assert code == 0
    config = tomllib.loads((root / "etc/patchwork-companion/config.toml").read_text())
    assert config["leds"]["driver"] == "neopixel_spi" and config["leds"]["pin"] == "D10"
    boot = (root / "boot/firmware/config.txt").read_text()
    assert "dtparam=spi=on\n" in boot and "dtparam=audio=on\n" in boot  # audio untouched
    assert not (root / "etc/systemd/system/patchwork-companion.service.d").exists()
    assert "adafruit-circuitpython-neopixel-spi" in out


def test_changing_the_led_route_adds_then_removes_the_root_dropin(tmp_path):
    root = make_root(tmp_path, model="Raspberry Pi Zero 2 W Rev 1.0")
    dropin = root / "etc/systemd/system/patchwork-companion.service.d/50-pwm-root.conf"
    config = root / "etc/patchwork-companion/config.toml"
    assert run(root, "--leds-driver", "neopixel")[0] == 0
    assert dropin.is_file()
    config.write_text(set_toml_value(config.read_text(), "leds", "driver", '"neopixel_spi"'))
    code, out = run(root)
    assert code == 0
    assert not dropin.exists() and not dropin.parent.exists()
    assert "removed /etc/systemd/system/patchwork-companion.service.d/50-pwm-root.conf" in out
    assert "systemctl daemon-reload" in out


def test_pi5_uses_the_pio_driver_without_root(tmp_path):
    root = make_root(tmp_path, model="Raspberry Pi 5 Model B Rev 1.0")
    code, out = run(root)
    assert code == 0
    assert not (root / "etc/systemd/system/patchwork-companion.service.d").exists()
    assert "adafruit-blinka-raspberry-pi5-neopixel" in out
    assert "rpi-ws281x" not in out
    assert "dtparam=audio=on\n" in (root / "boot/firmware/config.txt").read_text()


def test_old_boot_config_location(tmp_path):
    root = make_root(tmp_path, boot="/boot/config.txt")
    assert find_boot_config(root) == root / "boot/config.txt"
    code, out = run(root)
    assert code == 0
    assert "dtparam=i2c_arm_baudrate=400000" in (root / "boot/config.txt").read_text()


def test_missing_source_is_an_error(tmp_path):
    root = make_root(tmp_path)
    import contextlib
    import io

    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = install.main(["--root", str(root), "--source", str(tmp_path / "nowhere")])
    assert code == 1
    assert "--source" in err.getvalue()


def test_bad_arguments_and_help():
    import contextlib
    import io

    with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()) as out:
        assert install.main(["--leds-driver", "pi6"]) == 2
        assert install.main(["--help"]) == 0
    assert "--dry-run" in out.getvalue() and "--root" in out.getvalue()


def test_live_install_needs_root(monkeypatch):
    monkeypatch.setattr(os, "geteuid", lambda: 1000)

    def never(argv, capture):
        raise AssertionError(f"ran {argv}")

    with pytest.raises(InstallError, match="needs root"):
        Installer(Options(root=Path("/"), source=REPO), runner=never, out=lambda line: None).run()


# ------------------------------------------------------------------ live mode, fake commands


class FakeSystem:
    """Answers the installer's commands the way a Pi would, inside a temp root."""

    def __init__(self, root: Path):
        self.root = root
        self.calls: list[list[str]] = []
        self.enabled = False
        self.active = False
        self.fail: str | None = None
        self.stale_unit = False
        self.debs: set[str] = {"python3-venv"}
        self.python = "3.11"

    def __call__(self, argv, capture):
        argv = list(argv)
        self.calls.append(argv)
        joined = " ".join(argv)
        if self.fail and self.fail in joined:
            return 1, "boom"
        if argv[0] == "dpkg-query":
            return 0, "".join(f"{name} {'ii' if name in self.debs else 'un'}\n"
                              for name in argv[3:])
        if argv[0] == "apt-get":
            self.debs.update(a for a in argv[2:] if not a.startswith("-"))
        if argv[1:2] == ["-c"]:
            return 0, f"{self.python}\n"
        if argv[:2] == ["systemctl", "is-enabled"]:
            return (0, "enabled\n") if self.enabled else (1, "disabled\n")
        if argv[:2] == ["systemctl", "is-active"]:
            return (0, "") if self.active else (3, "")
        if argv[:2] == ["systemctl", "show"]:
            return 0, "yes\n" if self.stale_unit else "no\n"
        if argv[0] == "systemd-sysusers":
            etc = self.root / "etc"
            (etc / "passwd").write_text("patchwork:x:995:995::/var/lib/patchwork-companion:/usr/sbin/nologin\n"
                                        "patchwork-web:x:994:994::/var/lib/patchwork-companion:"
                                        "/usr/sbin/nologin\n")
            (etc / "group").write_text("".join(f"{g}:x:{900 + i}:patchwork\n" for i, g in enumerate(install.GROUPS))
                                       + "patchwork:x:995:patchwork-web\n")
        elif "venv" in argv:
            python = self.root / "opt/patchwork-companion/venv/bin/python"
            python.parent.mkdir(parents=True, exist_ok=True)
            python.write_text("")
        elif argv[:2] == ["systemctl", "enable"]:
            self.enabled = True
        elif argv[:2] in (["systemctl", "start"], ["systemctl", "restart"]):
            self.active = True
        return 0, ""


def acting(calls: list[list[str]]) -> list[list[str]]:
    """The commands that change something (not the read-only queries)."""
    queries = (["is-enabled"], ["is-active"], ["show"], ["-c"])
    return [c for c in calls if c[1:2] not in queries and c[0] != "dpkg-query"]


def live(root: Path, system: FakeSystem, **options) -> tuple[Installer, list[str]]:
    lines: list[str] = []
    installer = Installer(Options(root=root, source=REPO, **options), runner=system, out=lines.append,
                          run_commands=True)
    installer.run()
    return installer, lines


def test_live_run_runs_each_command_once_then_nothing(tmp_path, monkeypatch):
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    root = make_root(tmp_path, model="Raspberry Pi 4 Model B Rev 1.5")
    system = FakeSystem(root)
    first, _ = live(root, system)
    commands = [" ".join(c[:3]) for c in acting(system.calls)]
    assert commands == [
        "apt-get update",
        "apt-get install -y",
        "systemd-sysusers /etc/sysusers.d/patchwork-companion.conf",
        "/usr/bin/python3 -m venv",
        "/opt/patchwork-companion/venv/bin/python -m pip",
        "/opt/patchwork-companion/venv/bin/patchwork-companion config check",
        "udevadm control --reload",
        "udevadm trigger --action=add",
        "systemctl daemon-reload",
        "systemctl enable patchwork-companion.service",
        "systemctl start patchwork-companion.service",
    ]
    assert (root / "opt/patchwork-companion/install-stamp.txt").is_file()
    assert first.reboot_needed

    assert "apt-get install -y --no-install-recommends i2c-tools python3-lgpio build-essential " \
        "python3-dev" in " ".join(acting(system.calls)[1])
    system.calls.clear()
    second, lines = live(root, system)
    ran = acting(system.calls)
    assert ran == [["/opt/patchwork-companion/venv/bin/patchwork-companion", "config", "check",
                    "/etc/patchwork-companion/config.toml"]]  # read-only check
    assert all(r.status in ("ok", "skipped") for r in second.results), lines
    assert not second.reboot_needed

    # installed from a wheel later on: the checkout is found again through the stamp
    monkeypatch.setattr(install, "_checkout_of_this_module", lambda: None)
    lines = []
    assert Installer(Options(root=root), runner=system, out=lines.append, run_commands=True).source() == REPO

    system.calls.clear()
    live(root, system, reinstall=True)
    ran = [" ".join(c[:4]) for c in acting(system.calls)]
    assert ran[0].endswith("-m pip install") and ran[-1] == "systemctl restart patchwork-companion.service"

    # a unit written by a run that failed before daemon-reload is reloaded next time
    system.calls.clear()
    system.stale_unit = True
    live(root, system)
    assert ["systemctl", "daemon-reload"] in system.calls


def test_live_failure_stops_with_the_step_named(tmp_path, monkeypatch):
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    root = make_root(tmp_path)
    system = FakeSystem(root)
    system.fail = "pip install"
    with pytest.raises(InstallError, match="package"):
        live(root, system)
    assert not (root / "opt/patchwork-companion/install-stamp.txt").exists()
    system.fail = "config check"
    with pytest.raises(InstallError, match="config check"):
        live(root, system)


def test_package_from_pypi_gets_the_pi_extra(tmp_path):
    root = make_root(tmp_path)
    code, out = run(root, "--package", "patchwork-companion==0.1.0", "--leds-driver", "none")
    assert code == 0
    assert "'patchwork-companion[pi]==0.1.0'" in out


# ------------------------------------------------------------------ boot config edits


WANT = {"i2c_arm": "on", "i2c_arm_baudrate": "400000"}


def test_boot_config_edit_is_idempotent_and_keeps_other_lines():
    once = edit_boot_config(PI_OS_CONFIG_TXT, WANT)
    assert once != PI_OS_CONFIG_TXT
    assert once.startswith(PI_OS_CONFIG_TXT)
    assert once.endswith(f"{BLOCK_BEGIN}\n[all]\ndtparam=i2c_arm=on\ndtparam=i2c_arm_baudrate=400000\n{BLOCK_END}\n")
    assert edit_boot_config(once, WANT) == once
    more = edit_boot_config(once, {**WANT, "spi": "on"})
    assert more.count(BLOCK_BEGIN) == 1 and "dtparam=spi=on\n" in more
    assert edit_boot_config(more, {**WANT, "spi": "on"}) == more
    assert edit_boot_config(more, WANT) == more  # never removes what it added


@pytest.mark.parametrize(
    ("before", "after"),
    [
        # already right, also via alias or bare name: untouched, byte for byte
        ("dtparam=i2c_arm=on\ndtparam=i2c_arm_baudrate=400000\n", None),
        ("dtparam=i2c=on,i2c_baudrate=400000", None),
        ("dtparam=i2c_arm\ndtparam=i2c_arm_baudrate=400000\n[pi4]\narm_boost=1\n", None),
        # wrong unconditional values are rewritten in place, neighbours kept
        ("dtparam=i2c_arm=off\nfoo=1\ndtparam=i2c_arm_baudrate=100000\n",
         "dtparam=i2c_arm=on\nfoo=1\ndtparam=i2c_arm_baudrate=400000\n"),
        ("dtparam=audio=on,i2c_arm=on,i2c_arm_baudrate=100000\n",
         "dtparam=audio=on,i2c_arm=on,i2c_arm_baudrate=400000\n"),
        ("dtparam=i2c_baudrate=100000\ndtparam=i2c_arm=on\n",
         "dtparam=i2c_baudrate=400000\ndtparam=i2c_arm=on\n"),
    ],
)
def test_boot_config_cases(before, after):
    assert edit_boot_config(before, WANT) == (before if after is None else after)


def test_boot_config_conditional_override_gets_an_all_block():
    text = "dtparam=i2c_arm=on\ndtparam=i2c_arm_baudrate=400000\n[pi4]\ndtparam=i2c_arm_baudrate=100000"
    out = edit_boot_config(text, WANT)
    assert out.startswith(text + "\n\n" + BLOCK_BEGIN + "\n[all]\n")
    assert out.endswith("dtparam=i2c_arm_baudrate=400000\n" + BLOCK_END + "\n")
    assert edit_boot_config(out, WANT) == out


def test_boot_config_block_moves_below_a_later_override():
    once = edit_boot_config("", {**WANT, "spi": "on"})
    assert once.startswith(BLOCK_BEGIN)
    overridden = once + "[pi5]\ndtparam=i2c_arm_baudrate=100000\n"
    fixed = edit_boot_config(overridden, {**WANT, "spi": "on"})
    assert fixed.count(BLOCK_BEGIN) == 1
    assert fixed.startswith("[pi5]\ndtparam=i2c_arm_baudrate=100000\n\n" + BLOCK_BEGIN)
    assert "dtparam=spi=on" in fixed and "dtparam=i2c_arm=on" in fixed
    assert edit_boot_config(fixed, {**WANT, "spi": "on"}) == fixed


def test_boot_config_file_without_final_newline_or_comments_only():
    assert edit_boot_config("#dtparam=i2c_arm=on", WANT).startswith("#dtparam=i2c_arm=on\n\n" + BLOCK_BEGIN)
    assert edit_boot_config("dtparam=audio=on", {}) == "dtparam=audio=on"


# ------------------------------------------------------------------ TOML edits


def test_set_toml_value():
    text = '# top\nbackend = "sim"\n\n[leds]\ndriver = "neopixel"   # comment\ncount = 54\n\n[journal]\n'
    out = set_toml_value(text, "leds", "driver", '"neopixel_spi"')
    assert 'driver = "neopixel_spi"\ncount = 54' in out
    out = set_toml_value(out, "journal", "dir", '"/var/lib/x"')
    assert tomllib.loads(out)["journal"]["dir"] == "/var/lib/x"
    out = set_toml_value(out, "", "backend", '"pi"')
    assert tomllib.loads(out)["backend"] == "pi"
    out = set_toml_value(out, "display", "rotate", "2")
    data = tomllib.loads(out)
    assert data["display"]["rotate"] == 2 and data["leds"]["count"] == 54
    assert set_toml_value('[a]\nx = 1\n', "", "y", "2").startswith("y = 2\n")
    with pytest.raises(tomllib.TOMLDecodeError):
        set_toml_value(text, "leds", "driver", "not toml")


def test_live_plan_follows_the_pis_python(tmp_path, monkeypatch):
    """On a Pi 5 the PIO library has wheels for Python 3.11-3.13: build tools only beyond."""
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    for python, builds in (("3.13", False), ("3.14", True)):
        root = make_root(tmp_path / python, model="Raspberry Pi 5 Model B Rev 1.0")
        system = FakeSystem(root)
        system.python = python
        _, lines = live(root, system)
        apt = next(c for c in acting(system.calls) if c[:2] == ["apt-get", "install"])
        assert ("build-essential" in apt) == builds, (python, apt)
        assert any(f"Python {python}" in line for line in lines)


# ------------------------------------------------------------------ the web page


def test_web_page_is_off_unless_asked_for(tmp_path):
    root = make_root(tmp_path)
    code, out = run(root)
    assert code == 0 and "off (install --web" in out
    assert not (root / "etc/systemd/system/patchwork-companion-web.service").exists()
    config = tomllib.loads((root / "etc/patchwork-companion/config.toml").read_text())
    assert config["web"]["enabled"] is False and config["web"]["address"] == "127.0.0.1"


def test_install_web_installs_and_enables_the_page_and_stays_idempotent(tmp_path):
    root = make_root(tmp_path)
    assert run(root)[0] == 0
    code, out = run(root, "--web", "--web-address", "192.168.1.20")
    assert code == 0, out
    unit = root / "etc/systemd/system/patchwork-companion-web.service"
    assert unit.read_text() == (REPO / "systemd/patchwork-companion-web.service").read_text()
    config_text = (root / "etc/patchwork-companion/config.toml").read_text()
    config = tomllib.loads(config_text)
    assert (config["web"]["enabled"], config["web"]["address"]) == (True, "192.168.1.20")
    assert config["backend"] == "pi" and config["journal"]["dir"] == str(install.STATE_DIR)
    assert "systemctl --root=" in out and f"enable {install.WEB_SERVICE}" in out
    from firmware_py.config import validate
    assert validate(config)["web"]["enabled"] is True
    before = snapshot(root)
    code, out = run(root)                                   # the config keeps it on
    assert code == 0 and snapshot(root) == before
    assert "patchwork-companion-web.service is up to date" in out


# ------------------------------------------------------------------ the fixed core clock

CLOCKS = {
    "Raspberry Pi 3 Model B Plus Rev 1.3": "[pi3]\ncore_freq=250\ncore_freq_min=250\n[all]\n",
    "Raspberry Pi Zero 2 W Rev 1.0": "[pi02]\ncore_freq=250\ncore_freq_min=250\n[all]\n",
    "Raspberry Pi 4 Model B Rev 1.5": "[pi4]\ncore_freq=500\ncore_freq_min=500\n[all]\n",
}


def _clock_block(boot: str) -> str:
    lines = boot.splitlines(keepends=True)
    start = lines.index(install.CLOCK_BEGIN + "\n")
    end = lines.index(install.CLOCK_END + "\n")
    return "".join(lines[start + 1 : end])


@pytest.mark.parametrize("model", sorted(CLOCKS))
@pytest.mark.parametrize("route", ["neopixel", "neopixel_spi", "none"])
def test_the_installer_fixes_the_core_clock_per_model(tmp_path, model, route):
    """SPI and I2C follow the core clock on a Pi 3 / Zero 2 W / Pi 4: the installer
    writes the fixed clock for the model, on every LED route (the OLED is on I2C), and
    its plan says so."""
    root = make_root(tmp_path, model=model)
    code, out = run(root, "--leds-driver", route)
    assert code == 0, out
    boot = (root / "boot/firmware/config.txt").read_text()
    assert _clock_block(boot) == CLOCKS[model]
    assert boot.startswith(PI_OS_CONFIG_TXT.replace("dtparam=audio=on", "dtparam=audio=off")
                           if route == "neopixel" else PI_OS_CONFIG_TXT)
    plan = next(line for line in out.splitlines() if "config.txt core clock" in line)
    assert CLOCKS[model].split("\n")[0] in plan
    assert ("SPI (the LED data) and I2C" in plan) == (route == "neopixel_spi")
    assert "fixed core clock" in out  # the reboot line
    code, again = run(root, "--leds-driver", route)
    assert code == 0 and (root / "boot/firmware/config.txt").read_text() == boot


def test_no_core_clock_lines_on_a_pi5_and_a_moved_card_loses_them(tmp_path):
    root = make_root(tmp_path, model="Raspberry Pi 4 Model B Rev 1.5")
    assert run(root)[0] == 0
    assert install.CLOCK_BEGIN in (root / "boot/firmware/config.txt").read_text()
    (root / "proc/device-tree/model").write_bytes(b"Raspberry Pi 5 Model B Rev 1.0\0")
    code, out = run(root)
    assert code == 0
    boot = (root / "boot/firmware/config.txt").read_text()
    assert "core_freq" not in boot and install.CLOCK_BEGIN not in boot
    assert "nothing to fix on a Pi 5" in out
    # the reboot line names what changed: no core clock on a Pi 5
    reboot = next(line for line in out.splitlines() if line.strip().startswith("reboot"))
    assert "I2C at 400 kHz" in reboot and "core clock" not in reboot


def test_a_pi5_install_does_not_promise_a_fixed_core_clock(tmp_path):
    root = make_root(tmp_path, model="Raspberry Pi 5 Model B Rev 1.0")
    code, out = run(root, "--leds-driver", "neopixel_spi")
    assert code == 0, out
    reboot = next(line for line in out.splitlines() if line.strip().startswith("reboot"))
    assert "I2C at 400 kHz" in reboot and "core clock" not in reboot


def test_clock_block_edit_keeps_other_lines_and_replaces_only_its_own():
    pi4 = (("pi4", ("core_freq=500", "core_freq_min=500")),)
    once = install.edit_clock_block(PI_OS_CONFIG_TXT, pi4)
    assert once.startswith(PI_OS_CONFIG_TXT) and install.edit_clock_block(once, pi4) == once
    both = install.edit_boot_config(once, WANT)
    assert install.edit_clock_block(both, pi4) == both
    pi3 = (("pi3", ("core_freq=250", "core_freq_min=250")),)
    moved = install.edit_clock_block(both, pi3)
    assert "core_freq=500" not in moved and moved.count(install.CLOCK_BEGIN) == 1
    assert install.edit_clock_block(moved, ()) == install.edit_clock_block(both, ())
    assert "dtparam=i2c_arm_baudrate=400000" in install.edit_clock_block(moved, ())


# ------------------------------------------------------------------ the command on the PATH


def test_the_command_is_on_the_path(tmp_path):
    """The build steps type `patchwork-companion ...`: /usr/local/bin (on every user's
    and root's PATH on Pi OS) links to the venv's entry point."""
    root = make_root(tmp_path, model="Raspberry Pi 4 Model B Rev 1.5")
    code, out = run(root, "--dry-run")
    assert "would link /usr/local/bin/patchwork-companion -> " in out
    assert not (root / "usr").exists()
    assert run(root)[0] == 0
    link = root / "usr/local/bin/patchwork-companion"
    assert link.is_symlink()
    assert os.readlink(link) == "/opt/patchwork-companion/venv/bin/patchwork-companion"
    code, out = run(root)
    assert code == 0
    assert "ok  command link" in out


def test_a_foreign_file_on_the_command_path_is_never_replaced(tmp_path, capsys):
    root = make_root(tmp_path)
    mine = put(root, "/usr/local/bin/patchwork-companion", "#!/bin/sh\necho mine\n")
    code, _ = run(root)
    assert code == 1
    assert "/usr/local/bin/patchwork-companion exists and is not a link" in capsys.readouterr().err
    assert mine.read_text() == "#!/bin/sh\necho mine\n"


def test_a_state_folder_from_before_the_web_user_is_opened_to_it(tmp_path):
    """An older box: records/ and the index private to patchwork, names.json written by
    the page when it ran as patchwork. The installer hands the group the records and the
    index and the page's user its names, and leaves the journal alone."""
    root = tmp_path / "root"
    state = root / "var/lib/patchwork-companion"
    (state / "records").mkdir(parents=True)
    (state / "records").chmod(0o700)
    for name, mode in (("history.sqlite3", 0o600), ("journal.jsonl", 0o600), ("names.json", 0o600)):
        (state / name).write_text("x")
        (state / name).chmod(mode)
    code, out = run(root)
    assert code == 0
    lines = [ln for ln in out.splitlines() if "store access" in ln]
    assert any("chmod -R g+rwX /var/lib/patchwork-companion/records" in ln for ln in lines)
    assert any("chmod g+rw /var/lib/patchwork-companion/history.sqlite3" in ln for ln in lines)
    assert any("chown patchwork-web:patchwork /var/lib/patchwork-companion/names.json" in ln
               for ln in lines)
    assert not any("journal" in ln for ln in lines)
    (state / "records").chmod(0o770)
    (state / "history.sqlite3").chmod(0o660)
    (state / "names.json").unlink()
    code, out = run(root)
    assert "store access" in out and not any(
        "store access" in ln and "chmod" in ln for ln in out.splitlines())
