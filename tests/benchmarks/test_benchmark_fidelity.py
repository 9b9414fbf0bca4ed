"""The fidelity benchmark script runs and prints its figures (the numbers are not judged here)."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "fidelity.py"


def test_fidelity_benchmark_prints_each_figure():
    out = subprocess.run([sys.executable, str(SCRIPT), "--games", "4", "--rounds", "2"],
                         capture_output=True, text=True, timeout=300).stdout
    found = re.search(r"^table fidelity: (\d+)/4 games exact$", out, re.M)
    assert found and 0 <= int(found.group(1)) <= 4
    assert re.search(r"^questions asked: [\d.]+ per 100 moves", out, re.M)
    assert re.search(r"^questions shown: [\d.]+ per 100 moves", out, re.M)
    assert re.search(r"^games per second: median [\d.]+ over 2 rounds$", out, re.M)
