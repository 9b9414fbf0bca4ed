"""Shared fixtures: the 100 golden self-play games."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data"
GOLDEN = [json.loads(line) for line in (DATA / "engine-selfplay.jsonl").read_text().splitlines()
          if line.strip()]


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
