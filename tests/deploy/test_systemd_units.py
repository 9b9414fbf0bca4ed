"""The systemd unit, sysusers file and udev rule: verified by systemd's own tools
where they exist, and checked directive by directive everywhere."""

from __future__ import annotations

import fnmatch
import re
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

from firmware_py.deploy import install

SYSTEMD = Path(__file__).resolve().parents[2] / "systemd"
UNIT = SYSTEMD / "patchwork-companion.service"
SYSUSERS = SYSTEMD / "patchwork-companion.sysusers"
RULES = SYSTEMD / "99-patchwork-sensor.rules"
HOST_UNIT_DIRS = [Path("/usr/lib/systemd/system"), Path("/lib/systemd/system")]


def parse_unit(text: str) -> dict[str, list[tuple[str, str]]]:
    """{section: [(key, value), ...]} keeping repeated keys in order."""
    sections: dict[str, list[tuple[str, str]]] = {}
    current = None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("[") and line.endswith("]"):
            current = line[1:-1]
            sections.setdefault(current, [])
            continue
        key, sep, value = line.partition("=")
        assert sep and current, f"not a directive: {raw!r}"
        sections[current].append((key.strip(), value.strip()))
    return sections


def values(unit, section, key) -> list[str]:
    return [v for k, v in unit[section] if k == key]


def one(unit, section, key) -> str:
    found = values(unit, section, key)
    assert len(found) == 1, f"{section}.{key}: {found}"
    return found[0]


@pytest.fixture(scope="module")
def unit():
    return parse_unit(UNIT.read_text())


# ------------------------------------------------------------------ systemd-analyze


def staging_root(tmp_path: Path, unit_text: str, dropins: dict[str, str] | None = None,
                 name: str = UNIT.name) -> Path:
    """A root with the host's stock units, the unit unchanged (as ``name``), and a stub at
    its ExecStart."""
    host_units = next((d for d in HOST_UNIT_DIRS if (d / "sysinit.target").exists()), None)
    if host_units is None:
        pytest.skip("no stock systemd units on this machine")
    root = tmp_path / "root"
    shutil.copytree(host_units, root / "usr/lib/systemd/system", symlinks=True)
    exec_start = shlex.split(one(parse_unit(unit_text), "Service", "ExecStart"))[0]
    stub = root / exec_start.lstrip("/")
    stub.parent.mkdir(parents=True)
    stub.write_text("#!/bin/sh\nexit 0\n")
    stub.chmod(0o755)
    unit_dir = root / "etc/systemd/system"
    unit_dir.mkdir(parents=True)
    (unit_dir / name).write_text(unit_text)
    for dropin, text in (dropins or {}).items():
        (unit_dir / (name + ".d")).mkdir(exist_ok=True)
        (unit_dir / (name + ".d") / dropin).write_text(text)
    return root


def analyze_verify(root: Path, name: str = UNIT.name) -> tuple[int, str]:
    done = subprocess.run(
        ["systemd-analyze", "verify", f"--root={root}", "--man=no", "--generators=no",
         f"/etc/systemd/system/{name}"],
        capture_output=True, text=True, timeout=120,
    )
    output = done.stdout + done.stderr
    if "unrecognized option" in output:
        pytest.skip(f"this systemd-analyze cannot verify in a root: {output.strip()}")
    return done.returncode, output


needs_analyze = pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd-analyze not installed")


@needs_analyze
def test_systemd_analyze_verify_passes(tmp_path):
    """The real unit file, unchanged, in a root where its ExecStart exists."""
    code, output = analyze_verify(staging_root(tmp_path, UNIT.read_text()))
    about_us = [ln for ln in output.splitlines() if "patchwork" in ln]
    assert code == 0 and not about_us, output


@needs_analyze
def test_systemd_analyze_verify_with_the_pwm_root_dropin(tmp_path):
    root = staging_root(tmp_path, UNIT.read_text(), {"50-pwm-root.conf": install.PWM_ROOT_DROPIN})
    code, output = analyze_verify(root)
    assert code == 0 and not [ln for ln in output.splitlines() if "patchwork" in ln], output


@needs_analyze
def test_systemd_analyze_catches_a_broken_unit(tmp_path):
    """Control: the check above really reads the directives (verify only warns on them)."""
    broken = UNIT.read_text().replace("Restart=always", "Restart=sometimes")
    code, output = analyze_verify(staging_root(tmp_path, broken))
    assert "sometimes" in output
    root = staging_root(tmp_path / "2", UNIT.read_text())
    stub = root / shlex.split(one(parse_unit(UNIT.read_text()), "Service", "ExecStart"))[0].lstrip("/")
    stub.unlink()
    code, output = analyze_verify(root)
    assert code != 0 and "not executable" in output


@needs_analyze
def test_sandbox_exposure_is_low(tmp_path):
    root = staging_root(tmp_path, UNIT.read_text())
    done = subprocess.run(
        ["systemd-analyze", "security", "--offline=yes", f"--root={root}", f"/etc/systemd/system/{UNIT.name}"],
        capture_output=True, text=True, timeout=120,
    )
    match = re.search(r"Overall exposure level for \S+: (\d+\.\d+)", done.stdout + done.stderr)
    if match is None:
        pytest.skip(f"no offline security analysis here: {(done.stdout + done.stderr).strip()[:200]}")
    assert float(match.group(1)) <= 2.0, done.stdout


@pytest.mark.skipif(shutil.which("systemd-sysusers") is None, reason="systemd-sysusers not installed")
def test_sysusers_file_creates_the_user_in_a_root(tmp_path):
    (tmp_path / "etc").mkdir()
    done = subprocess.run(["systemd-sysusers", f"--root={tmp_path}", "--dry-run", str(SYSUSERS)],
                          capture_output=True, text=True, timeout=60)
    if "unrecognized option" in done.stderr:
        pytest.skip("systemd-sysusers without --dry-run")
    assert done.returncode == 0, done.stderr
    assert "Creating user 'patchwork'" in done.stdout + done.stderr
    assert not (tmp_path / "etc/passwd").exists()


# ------------------------------------------------------------------ directives


def test_service_type_watchdog_and_restart(unit):
    assert one(unit, "Service", "Type") == "notify"
    assert one(unit, "Service", "NotifyAccess") == "main"
    watchdog = one(unit, "Service", "WatchdogSec")
    seconds = float(watchdog.removesuffix("s"))
    assert 5 <= seconds <= 60, watchdog
    assert one(unit, "Service", "Restart") == "always"
    assert one(unit, "Service", "KillSignal") == "SIGTERM"
    assert one(unit, "Install", "WantedBy") == "multi-user.target"


def test_a_bad_config_stops_the_restarts(unit):
    """``run``'s exit status for an unusable config is the one the unit does not restart."""
    from firmware_py.config import EXIT_CONFIG
    assert values(unit, "Service", "RestartPreventExitStatus") == [str(EXIT_CONFIG)]
    assert EXIT_CONFIG not in (0, 1, 2)          # not a crash, not a usage error


def test_exec_start_matches_the_installer(unit):
    argv = shlex.split(one(unit, "Service", "ExecStart"))
    assert argv == [str(install.VENV / "bin" / "patchwork-companion"), "run", "--config", str(install.CONFIG)]


def test_user_groups_and_state(unit):
    assert one(unit, "Service", "User") == install.USER
    groups = one(unit, "Service", "SupplementaryGroups").split()
    assert sorted(groups) == sorted(install.GROUPS) == ["dialout", "gpio", "i2c", "spi"]
    assert one(unit, "Service", "StateDirectory") == "patchwork-companion"
    assert one(unit, "Service", "WorkingDirectory") == str(install.STATE_DIR)
    env = dict(v.split("=", 1) for v in values(unit, "Service", "Environment"))
    assert env["LG_WD"] == "/run/patchwork-companion"  # lgpio's pipes: the RuntimeDirectory
    assert env["BLINKA_SKIP_DEPENDENCY_CHECK"] == "1"  # Blinka never pip-installs into the venv
    assert one(unit, "Service", "RuntimeDirectory") == "patchwork-companion"
    assert one(unit, "Service", "StandardOutput") == "journal"


def test_sandbox_directives(unit):
    expect = {
        "ProtectSystem": "strict", "ProtectHome": "yes", "PrivateTmp": "yes", "NoNewPrivileges": "yes",
        "RestrictAddressFamilies": "AF_UNIX", "DevicePolicy": "closed", "PrivateNetwork": "yes",
    }
    for key, value in expect.items():
        assert one(unit, "Service", key) == value, key
    allowed = {v.split()[0] for v in values(unit, "Service", "DeviceAllow")}
    assert {"char-gpiochip", "char-i2c", "char-spi", "char-ttyACM"} <= allowed
    assert not any("/dev/mem" in v for v in values(unit, "Service", "DeviceAllow"))
    # these would hide the hardware or the board identification
    assert values(unit, "Service", "PrivateDevices") in ([], ["no"])
    assert values(unit, "Service", "ProcSubset") in ([], ["all"])
    assert values(unit, "Service", "PrivateUsers") in ([], ["no"])


def test_sysusers_matches_the_unit(unit):
    rows = [shlex.split(ln) for ln in SYSUSERS.read_text().splitlines() if ln.strip() and not ln.startswith("#")]
    users = [r for r in rows if r[0] == "u"]
    home, shell = str(install.STATE_DIR), "/usr/sbin/nologin"
    assert users == [["u", "patchwork", "-", "Patchwork companion service", home, shell],
                     ["u", install.WEB_USER, "-", "Patchwork companion web page", home, shell],
                     ["u", "patchwork-club", "-", "Patchwork club scoreboard",
                      "/var/lib/patchwork-club", shell]]
    members = sorted(r[2] for r in rows if r[0] == "m" and r[1] == "patchwork")
    assert members == sorted(one(unit, "Service", "SupplementaryGroups").split())
    assert [r[2] for r in rows if r[0] == "m" and r[1] == install.WEB_USER] == ["patchwork"]


WEB_UNIT = SYSTEMD / "patchwork-companion-web.service"
CLUB_UNIT = SYSTEMD / "patchwork-club-serve.service"


def test_the_web_page_runs_as_its_own_user_that_cannot_touch_the_journal(unit):
    """Its own user in the group patchwork; the folders stay the game service's (a
    StateDirectory here would hand them over to this user); the state folder is sticky
    and the service's files private (UMask 0077), so the page can neither change nor
    rename nor remove the journal; open files are capped."""
    web = parse_unit(WEB_UNIT.read_text())
    assert one(web, "Service", "User") == install.WEB_USER != one(unit, "Service", "User")
    assert one(web, "Service", "Group") == install.USER
    assert values(web, "Service", "StateDirectory") == values(web, "Service", "RuntimeDirectory") == []
    assert one(web, "Service", "ReadWritePaths").split() == [
        f"-{install.STATE_DIR}", "-/run/patchwork-companion"]
    assert one(web, "Service", "UMask") == "0007"
    assert int(one(web, "Service", "LimitNOFILE")) >= 2 * 400
    mode = int(one(unit, "Service", "StateDirectoryMode"), 8)
    assert mode & 0o1000 and mode & 0o070 == 0o070 and not mode & 0o007   # sticky, group, no others
    assert one(unit, "Service", "UMask") == "0077"


def test_club_serve_has_its_own_sandboxed_unit():
    club = parse_unit(CLUB_UNIT.read_text())
    assert one(club, "Service", "User") == "patchwork-club"
    assert one(club, "Service", "StateDirectory") == "patchwork-club"
    assert "--results /var/lib/patchwork-club" in one(club, "Service", "ExecStart")
    for key, value in {"ProtectSystem": "strict", "ProtectHome": "yes", "PrivateDevices": "yes",
                       "NoNewPrivileges": "yes", "CapabilityBoundingSet": ""}.items():
        assert one(club, "Service", key) == value, key
    assert "/var/lib/patchwork-companion" in one(club, "Service", "InaccessiblePaths")


@needs_analyze
@pytest.mark.parametrize("path", [WEB_UNIT, CLUB_UNIT], ids=["web", "club-serve"])
def test_systemd_analyze_verifies_the_web_and_club_units(tmp_path, path):
    code, output = analyze_verify(staging_root(tmp_path, path.read_text(), name=path.name), path.name)
    assert code == 0 and not [ln for ln in output.splitlines() if "patchwork" in ln], output


# ------------------------------------------------------------------ udev rule


TOKEN = re.compile(r'\s*([A-Z_]+(?:\{[^}]*\})?)\s*(==|!=|\+=|-=|:=|=)\s*"((?:[^"\\]|\\.)*)"\s*(,|$)')


def parse_rules(text: str) -> list[list[tuple[str, str, str]]]:
    """Each rule line as [(key, operator, value), ...]; fails on anything that is not one."""
    rules = []
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        assert not line.endswith("\\"), f"line {number}: continuation lines not expected"
        pos, items = 0, []
        while pos < len(line):
            match = TOKEN.match(line, pos)
            assert match, f"line {number}: cannot parse at {line[pos:]!r}"
            items.append(match.groups()[:3])
            pos = match.end()
        rules.append(items)
    return rules


def udev_match(pattern: str, value: str) -> bool:
    return any(fnmatch.fnmatchcase(value, alt) for alt in pattern.split("|"))


def apply_rules(rules, device: dict[str, str]) -> dict:
    """A small udev evaluator for the keys this rule file uses."""
    props = dict(device)
    result = {"GROUP": None, "MODE": None, "SYMLINK": [], "OPTIONS": []}
    labels = {items[0][2]: i for i, items in enumerate(rules) if items[0][0] == "LABEL"}
    i = 0
    while i < len(rules):
        items = rules[i]
        i += 1
        matched = True
        for key, op, value in items:
            if op in ("==", "!="):
                have = props.get(key[4:-1], "") if key.startswith("ENV{") else props.get(key, "")
                if udev_match(value, have) != (op == "=="):
                    matched = False
                    break
        if not matched:
            continue
        for key, op, value in items:
            if op in ("==", "!="):
                continue
            if key == "GOTO":
                i = labels[value]
            elif key.startswith("ENV{"):
                props[key[4:-1]] = value
            elif key in ("SYMLINK", "OPTIONS"):
                result[key].extend(value.split())
            elif key in ("GROUP", "MODE"):
                result[key] = value
    result["ENV"] = props
    return result


def acm(vendor: str, model: str, interface: str = "00", kernel: str = "ttyACM0", action: str = "add") -> dict:
    return {"ACTION": action, "SUBSYSTEM": "tty", "KERNEL": kernel, "ID_VENDOR_ID": vendor,
            "ID_MODEL_ID": model, "ID_USB_INTERFACE_NUM": interface}


@pytest.fixture(scope="module")
def rules():
    return parse_rules(RULES.read_text())


def test_udev_rule_parses_into_the_expected_keys(rules):
    keys = {(k, op, v) for items in rules for k, op, v in items}
    assert ("ENV{ID_VENDOR_ID}", "==", "239a") in keys
    assert ("ENV{ID_VENDOR_ID}", "==", "2e8a") in keys
    assert ("GROUP", "=", "dialout") in keys
    assert ("MODE", "=", "0660") in keys
    assert ("ENV{ID_MM_DEVICE_IGNORE}", "=", "1") in keys
    assert ("SYMLINK", "+=", "patchwork-sensor") in keys
    assert ("IMPORT{builtin}", "=", "usb_id") in keys
    gotos = {v for items in rules for k, _, v in items if k == "GOTO"}
    labels = {v for items in rules for k, _, v in items if k == "LABEL"}
    assert gotos == labels == {"patchwork_sensor_end"}


def test_circuitpython_pico_data_port_gets_the_link(rules):
    data = apply_rules(rules, acm("239a", "80f4", "02", "ttyACM1"))
    assert "patchwork-sensor" in data["SYMLINK"]
    assert "link_priority=10" in data["OPTIONS"]
    assert (data["GROUP"], data["MODE"], data["ENV"]["ID_MM_DEVICE_IGNORE"]) == ("dialout", "0660", "1")
    console = apply_rules(rules, acm("239a", "80f4", "00", "ttyACM0"))
    assert console["SYMLINK"] == ["patchwork-sensor-console", "patchwork-sensor"]
    assert console["OPTIONS"] == []  # lower priority than the data port


@pytest.mark.parametrize(("vendor", "model"), [("239a", "8120"), ("239a", "8162"), ("2e8a", "000b"),
                                               ("2e8a", "0005"), ("2e8a", "000a")])
def test_other_pico_firmwares_are_accepted(rules, vendor, model):
    assert "patchwork-sensor" in apply_rules(rules, acm(vendor, model))["SYMLINK"]


@pytest.mark.parametrize("device", [
    acm("2e8a", "000c"),                      # Raspberry Pi Debug Probe: a serial port, not the sensor
    acm("239a", "80f2"),                      # another CircuitPython board
    acm("0403", "6001"),                      # an FTDI adapter
    {**acm("239a", "80f4"), "KERNEL": "ttyUSB0"},
    {**acm("239a", "80f4"), "SUBSYSTEM": "usb"},
    acm("239a", "80f4", action="remove"),
])
def test_other_devices_are_left_alone(rules, device):
    out = apply_rules(rules, device)
    assert out["SYMLINK"] == [] and out["GROUP"] is None and "ID_MM_DEVICE_IGNORE" not in out["ENV"]


@pytest.mark.skipif(shutil.which("udevadm") is None, reason="udevadm not installed")
def test_udevadm_verify(tmp_path):
    done = subprocess.run(["udevadm", "verify", str(RULES)], capture_output=True, text=True, timeout=60)
    if done.returncode != 0 and ("Unknown command" in done.stderr or "unrecognized" in done.stderr):
        pytest.skip("udevadm without the verify command (systemd < 254)")
    assert done.returncode == 0, done.stdout + done.stderr


# ------------------------------------------------------------------ DeviceAllow vs. Pi OS device names

PI_OS_DEVICES = Path(__file__).resolve().parents[1] / "data" / "pi-os-char-devices.txt"


def pi_os_devices() -> tuple[set[str], set[str]]:
    """(character device class names, device nodes allowed by path) of today's Pi OS."""
    classes, nodes = set(), set()
    for line in PI_OS_DEVICES.read_text().splitlines():
        fields = line.split()
        if not fields or fields[0].startswith("#"):
            continue
        (classes if fields[0] == "class" else nodes).add(fields[1])
    return classes, nodes


def device_allow_faults(lines: list[str]) -> list[str]:
    """Each DeviceAllow value that matches nothing on Pi OS, with why.

    systemd matches ``char-NAME`` against /proc/devices' class names with
    fnmatch globs; a path must be a node that exists there."""
    classes, nodes = pi_os_devices()
    faults = []
    for value in lines:
        spec = value.split()[0]
        if spec.startswith("char-"):
            if not fnmatch.filter(classes, spec[len("char-"):]):
                faults.append(f"{spec}: no character device class of that name on Pi OS")
        elif spec.startswith("/dev/"):
            if spec not in nodes:
                faults.append(f"{spec}: not a device node the companion is meant to open")
        else:
            faults.append(f"{spec}: neither char-CLASS nor a /dev path")
    return faults


def test_every_device_allow_line_matches_a_pi_os_device(unit):
    dropin = parse_unit(install.PWM_ROOT_DROPIN)
    lines = values(unit, "Service", "DeviceAllow") + values(dropin, "Service", "DeviceAllow")
    assert len(lines) >= 8
    assert device_allow_faults(lines) == []


def test_the_pwm_dropin_opens_vcio_and_mem_by_path():
    dropin = parse_unit(install.PWM_ROOT_DROPIN)
    allowed = [v.split() for v in values(dropin, "Service", "DeviceAllow")]
    assert ["/dev/vcio", "rw"] in allowed and ["/dev/mem", "rw"] in allowed


def test_the_device_check_rejects_a_class_that_pi_os_no_longer_has():
    """vcio became a misc device in 2021: char-vcio matches nothing."""
    assert device_allow_faults(["char-vcio rw"]) == [
        "char-vcio: no character device class of that name on Pi OS"]
    assert device_allow_faults(["char-*gpiomem* rw", "/dev/vcio rw"]) == []
    assert device_allow_faults(["/dev/null rw", "block-mmcblk r"]) != []
