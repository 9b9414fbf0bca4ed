"""The installer's plan per model and LED route covers what the service really imports.

For each model and route, ``import_chain_probe.py`` runs the service's own LED
and button start-up code with Blinka's board detection pointed at that model,
and lists the modules it needs that this machine lacks. Every one of them, and
every third-party module the route reaches beyond the package's own
dependencies, must be supplied by the plan; and the plan's pins must agree with
what Blinka itself declares for the board.
"""
from __future__ import annotations

import functools
import importlib.metadata
import json
import subprocess
import sys
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet

from firmware_py.deploy import install
from firmware_py.deploy.plan import BLINKA, MODELS, ROUTES, make_plan, model_from_text

REPO = Path(__file__).resolve().parents[2]
PROBE = Path(__file__).resolve().parents[1] / "import_chain_probe.py"
BOARDS = {"pi3": ("RASPBERRY_PI_3B", "a02082"), "pi02": ("RASPBERRY_PI_ZERO_2_W", "902120"),
          "pi4": ("RASPBERRY_PI_4B", "c03114"), "pi5": ("RASPBERRY_PI_5", "c04170")}
NOT_THIRD_PARTY = {"firmware_py", "__main__", "_distutils_hack"}


def narrower(mine: SpecifierSet, theirs: SpecifierSet) -> bool:
    """True when every version ``mine`` allows (among those either names, and a few
    around them) is one ``theirs`` allows too."""
    from packaging.version import Version
    names = {Version(s.version) for s in (*mine, *theirs)}
    probes = names | {Version(f"{v.major}.{v.minor}.{v.micro + 1}") for v in names} \
        | {Version(f"{v.major + 1}.0") for v in names}
    return all(theirs.contains(v, prereleases=True) for v in probes if mine.contains(v, prereleases=True))


def _norm(name: str) -> str:
    return name.lower().replace("_", "-").replace(".", "-")


@functools.cache
def own_dependency_closure() -> frozenset[str]:
    """Distributions pip installs for the package itself (pyproject dependencies, recursively)."""
    import tomllib
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    todo, seen = list(project["dependencies"]), set()
    while todo:
        req = Requirement(todo.pop())
        if req.marker is not None and not req.marker.evaluate({"extra": ""}):
            continue
        name = _norm(req.name)
        if name in seen:
            continue
        seen.add(name)
        try:
            todo += importlib.metadata.requires(req.name) or []
        except importlib.metadata.PackageNotFoundError:
            pass
    return frozenset(seen)


def distributions_of(module: str) -> set[str]:
    return {_norm(d) for d in importlib.metadata.packages_distributions().get(module, [])}


@functools.cache
def probe(model: str, route: str) -> dict:
    board, revision = BOARDS[model]
    done = subprocess.run([sys.executable, str(PROBE), board, revision, route], cwd=REPO,
                          capture_output=True, text=True, timeout=120,
                          env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO)})
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_installed_blinka_is_the_one_the_plan_was_checked_against():
    version = importlib.metadata.version("adafruit-blinka")
    assert Requirement(BLINKA).specifier.contains(version), (
        f"Blinka {version} is installed but the plan pins {BLINKA}: re-check its import chain")


@pytest.mark.parametrize("route", ROUTES)
@pytest.mark.parametrize("model", MODELS)
def test_plan_covers_the_import_chain(model, route):
    seen = probe(model, route)
    plan = make_plan(model, route)
    provided = plan.provides()
    uncovered = [m for m in seen["missing"] if m not in provided]
    assert not uncovered, f"{model}/{route}: the service imports {uncovered}, the plan lacks them"
    own = own_dependency_closure()
    beyond = [m for m in seen["imported"] if m not in NOT_THIRD_PARTY and not m.startswith("__")
              and m not in seen["missing"] and not distributions_of(m) & own]
    assert not [m for m in beyond if m not in provided], \
        f"{model}/{route}: {beyond} come neither from the package's dependencies nor the plan"
    # what Blinka itself declares for this board: each needed one is in the plan with
    # the same pin; the others are never imported (e.g. its software PWM backend)
    pins = {Requirement(spec).name.lower(): Requirement(spec).specifier for spec in plan.pip}
    for module, spec in seen["declared"]:
        if module in seen["missing"]:
            declared = Requirement(spec)
            assert module in provided
            mine = pins.get(declared.name.lower().replace("_", "-")) or pins.get(declared.name.lower())
            if mine is not None and declared.specifier:
                assert narrower(SpecifierSet(str(mine)), declared.specifier), (module, mine, spec)
        else:
            assert module not in seen["imported"]


def test_the_plan_check_fails_when_a_route_library_is_left_out():
    """Removing rpi-ws281x from the Pi 4 PWM plan leaves _rpi_ws281x uncovered."""
    seen = probe("pi4", "neopixel")
    plan = make_plan("pi4", "neopixel")
    without = {m for n in plan.needs if not n.name.startswith("rpi-ws281x") for m in n.provides}
    assert "_rpi_ws281x" in seen["missing"] and "_rpi_ws281x" not in without


# ------------------------------------------------------------------ build tools


def test_build_tools_only_when_a_requirement_has_no_wheel():
    spi = make_plan("pi4", "neopixel_spi", "aarch64", (3, 11))
    assert "build-essential" not in spi.apt and not spi.builds
    pwm = make_plan("pi4", "neopixel", "aarch64", (3, 11))
    assert [n.name for n in pwm.builds] == ["rpi-ws281x>=4.3"]
    assert pwm.apt[-2:] == ("build-essential", "python3-dev")
    pio = make_plan("pi5", "neopixel", "aarch64", (3, 13))
    assert not pio.builds and "rpi-ws281x>=4.3" not in pio.pip
    assert make_plan("pi5", "neopixel", "aarch64", (3, 14)).builds     # no wheel for 3.14 yet
    arm = make_plan("pi3", "neopixel_spi", "armv7l", (3, 11))
    assert {"gpiod>=2.2.2,<3", "pillow>=10.0"} <= {n.name for n in arm.builds}
    venv_only = make_plan("pi4", "neopixel_spi", "aarch64", (3, 13), system_site_packages=False)
    assert "swig" in venv_only.apt and "python3-lgpio" not in venv_only.apt


def test_model_text():
    assert model_from_text("Raspberry Pi 5 Model B Rev 1.0") == "pi5"
    assert model_from_text("Raspberry Pi 4 Model B Rev 1.5") == "pi4"
    assert model_from_text("Raspberry Pi 3 Model B Plus Rev 1.3") == "pi3"
    assert model_from_text("Raspberry Pi Zero 2 W Rev 1.0") == "pi02"
    assert model_from_text("Raspberry Pi Zero W Rev 1.1") == "unknown"


# ------------------------------------------------------------------ dry runs


def dry_run(tmp_path, model_text: str, *args: str) -> str:
    import contextlib
    import io
    root = tmp_path / "root"
    (root / "boot/firmware").mkdir(parents=True)
    (root / "boot/firmware/config.txt").write_text("dtparam=audio=on\n")
    (root / "proc/device-tree").mkdir(parents=True)
    (root / "proc/device-tree/model").write_bytes(model_text.encode() + b"\0")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert install.main(["--root", str(root), "--source", str(REPO), "--dry-run", *args]) == 0
    return out.getvalue()


@pytest.mark.parametrize("model_text, route, apt, pip, build", [
    ("Raspberry Pi 3 Model B Rev 1.2", "neopixel_spi", "python3-venv i2c-tools python3-lgpio",
     "adafruit-circuitpython-neopixel-spi>=1.0", None),
    ("Raspberry Pi Zero 2 W Rev 1.0", "neopixel", "python3-lgpio build-essential python3-dev",
     "rpi-ws281x>=4.3", "rpi-ws281x>=4.3"),
    ("Raspberry Pi 4 Model B Rev 1.5", "neopixel", "python3-lgpio build-essential python3-dev",
     "rpi-ws281x>=4.3", "rpi-ws281x>=4.3"),
    ("Raspberry Pi 5 Model B Rev 1.0", "neopixel", "python3-venv i2c-tools python3-lgpio",
     "adafruit-blinka-raspberry-pi5-neopixel>=1.0.0rc2", None),
    ("Raspberry Pi 5 Model B Rev 1.0", "neopixel_spi", "python3-venv i2c-tools python3-lgpio",
     "adafruit-circuitpython-neopixel-spi>=1.0", None),
])
def test_dry_run_lists_the_plan_per_model_and_route(tmp_path, model_text, route, apt, pip, build):
    out = dry_run(tmp_path, model_text, "--leds-driver", route, "--arch", "aarch64",
                  "--python-version", "3.11")
    apt_line = next(line for line in out.splitlines() if "apt-get install" in line)
    assert f"apt-get install -y --no-install-recommends {' '.join(make_plan(model_from_text(model_text), route).apt)}" \
        in apt_line and apt in apt_line
    pip_line = next(line for line in out.splitlines() if "pip install" in line)
    assert pip in pip_line and "'adafruit-blinka>=10,<11'" in pip_line and "'gpiod>=2.2.2,<3'" in pip_line
    if build:
        assert f"build tools build-essential python3-dev: no wheel for {build}" in out
    else:
        assert "build tools: none" in out and "build-essential" not in apt_line


def test_pi5_checks_pio0_and_gpiochip_and_writes_the_pio_rule(tmp_path):
    import os
    root = tmp_path / "root"
    (root / "boot/firmware").mkdir(parents=True)
    (root / "boot/firmware/config.txt").write_text("")
    (root / "proc/device-tree").mkdir(parents=True)
    (root / "proc/device-tree/model").write_bytes(b"Raspberry Pi 5 Model B Rev 1.0\0")
    (root / "dev").mkdir()
    (root / "etc").mkdir()
    (root / "etc/group").write_text("root:x:0:\ngpio:x:997:patchwork\n")
    (root / "dev/pio0").write_text("")
    os.chown(root / "dev/pio0", 0, 0)
    lines: list[str] = []
    installer = install.Installer(install.Options(root=root, source=REPO), out=lines.append)
    installer.run()
    check = next(r for r in installer.results if r.name == "pi5 devices")
    assert check.status == "warning"
    assert "no /dev/gpiochip0" in check.detail and "group root" in check.detail
    rule = (root / "etc/udev/rules.d/99-patchwork-pio.rules").read_text()
    assert 'SUBSYSTEM=="*-pio", GROUP="gpio", MODE="0660"' in rule
    # once the rule applied and the kernel has gpiochip0 (no gpiochip4 link), all is well
    os.chown(root / "dev/pio0", 0, 997)
    (root / "dev/pio0").chmod(0o660)
    (root / "dev/gpiochip0").write_text("")
    installer = install.Installer(install.Options(root=root, source=REPO), out=lines.append)
    installer.run()
    check = next(r for r in installer.results if r.name == "pi5 devices")
    assert check.status == "ok", check.detail


def test_other_models_get_no_pio_rule_and_no_pi5_check(tmp_path):
    out = dry_run(tmp_path, "Raspberry Pi 4 Model B Rev 1.5", "--leds-driver", "neopixel")
    assert "pi5 devices    not a Pi 5" in out
    assert "99-patchwork-pio.rules not needed" in out
