"""Shared fixtures: the 100 golden self-play games."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data"
GOLDEN = [json.loads(line) for line in (DATA / "engine-selfplay.jsonl").read_text().splitlines()
          if line.strip()]


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
