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
