"""Shared fixtures: the 100 golden self-play games.

The tests mirror the package's rooms (``tests/rules/`` for ``firmware_py/rules/``
and so on; ``tests/benchmarks/`` for the benchmark scripts). Test files import
shared helpers from each other by module name (``from test_faults_rig import
...``), so every room's folder is put on the import path here; test file names
stay unique across the folders.
"""
from __future__ import annotations

import json
import logging
import shutil
import sys
from pathlib import Path

import pytest

for _room in sorted(Path(__file__).resolve().parent.iterdir()):
    if _room.is_dir() and any(_room.glob("test_*.py")) and str(_room) not in sys.path:
        sys.path.append(str(_room))

#: the system packages some tests drive for real: (programs on PATH, Debian package names)
SYSTEM_PACKAGES = {
    "chromium": (("chromium", "chromedriver"), "chromium chromium-driver"),
    "mosquitto": (("mosquitto", "mosquitto_passwd"), "mosquitto"),
    "tmux": (("tmux",), "tmux"),
}
MISSING = "system package missing"


def missing_reason(package: str) -> str:
    """Why a test of ``package`` cannot run here ("" when its programs are all on PATH)."""
    programs, apt = SYSTEM_PACKAGES[package]
    absent = [p for p in programs if shutil.which(p) is None]
    if not absent:
        return ""
    return f"{MISSING}: {package} (no {', '.join(absent)}; sudo apt install {apt})"


def needs(package: str):
    """A skip mark for tests that drive ``package`` (a key of :data:`SYSTEM_PACKAGES`)."""
    reason = missing_reason(package)
    return pytest.mark.skipif(bool(reason), reason=reason or "present")


def pytest_terminal_summary(terminalreporter):
    """One line per missing system package at the end of the run, with the tests it skipped."""
    counts: dict[str, int] = {}
    for report in terminalreporter.stats.get("skipped", []):
        longrepr = report.longrepr
        reason = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
        reason = reason.removeprefix("Skipped: ")
        if reason.startswith(MISSING):
            counts[reason] = counts.get(reason, 0) + 1
    for reason, count in counts.items():
        terminalreporter.write_line(f"SKIPPED {count} test{'s' if count != 1 else ''}: {reason}")


DATA = Path(__file__).parent / "data"
GOLDEN = [json.loads(line) for line in (DATA / "engine-selfplay.jsonl").read_text().splitlines()
          if line.strip()]


@pytest.fixture(autouse=True)
def _logging_as_it_was():
    """A command run in a test (``cli.main``) sets up logging for the whole process:
    put the root logger's handlers and the package loggers' levels back afterwards,
    so no later test logs to a closed stream or at another level."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    levels = {name: lg.level for name, lg in logging.root.manager.loggerDict.items()
              if isinstance(lg, logging.Logger) and name.startswith("firmware_py")}
    yield
    for handler in list(root.handlers):
        if handler not in handlers:
            root.removeHandler(handler)
    for handler in handlers:
        if handler not in root.handlers:
            root.addHandler(handler)
    root.setLevel(level)
    for name, lg in list(logging.root.manager.loggerDict.items()):
        if isinstance(lg, logging.Logger) and name.startswith("firmware_py"):
            lg.setLevel(levels.get(name, logging.NOTSET))


@pytest.fixture(autouse=True)
def _no_installed_config(monkeypatch, tmp_path_factory):
    """Commands find their config by themselves; tests must never pick up one
    installed on this machine (/etc, ~/.config, $PATCHWORK_COMPANION_CONFIG)."""
    from firmware_py import config
    home = tmp_path_factory.getbasetemp() / "no-installed-config"
    monkeypatch.delenv(config.ENV_VAR, raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / "xdg"))
    monkeypatch.setattr(config, "SYSTEM_CONFIG", home / "etc" / "config.toml")


@pytest.fixture
def golden_games() -> list[dict]:
    """The 100 self-play records as JSON objects (fresh copies)."""
    return json.loads(json.dumps(GOLDEN))


@pytest.fixture
def table(tmp_path):
    """Fault tests: start companions on the first golden game on demand (set up,
    sensor online); close them after."""
    from test_faults_rig import GOLDEN_RECORDS, start_table, wait_until
    companions = []

    def start(**kwargs):
        companion = start_table(tmp_path, GOLDEN_RECORDS[0], **kwargs)
        companions.append(companion)
        wait_until(lambda: "sensor" not in companion.service.status.screen.warning,
                   "the sensor to come online")
        return companion
    yield start
    for companion in companions:
        companion.close()
