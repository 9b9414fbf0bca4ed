"""The service benchmark runs and prints every figure under its fixed label
(its numbers are not judged here: the tests check behaviour, not speed)."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "service.py"
LABELS = ("oled bytes per turn update:", "oled bytes per cursor move:", "oled cpu per frame p50/p99:",
          "first light p50/p99:", "turn accepted p50/p99:", "idle cpu pulsing:", "idle cpu still:",
          "ready:", "ready, empty box:", "ready with 20 games:",
          "led first frame of a change p50/p99:", "led pulse prepared p50/p99:", "idle floor:",
          "idle still vs floor:", "first OLED frame:", "READY:")


@pytest.mark.slow
def test_service_benchmark_prints_each_labelled_figure():
    out = subprocess.run([sys.executable, str(SCRIPT), "--rounds", "1", "--events", "5",
                          "--idle-seconds", "0.5", "--history-games", "20"], capture_output=True, text=True, check=True,
                         timeout=600).stdout
    lines = out.splitlines()
    for label in LABELS:
        found = [line for line in lines if line.startswith(label)]
        assert len(found) == 1, label
        assert re.search(r"\d+(\.\d+)?", found[0][len(label):]), found[0]
    turn = next(line for line in lines if line.startswith(LABELS[0]))
    full = int(re.search(r"of a full frame \((\d+) B\)", turn).group(1))
    assert full == 1024 + 6                          # SSD1306: one window, the whole RAM
