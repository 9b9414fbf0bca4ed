"""The engine benchmark script runs and prints every figure (its numbers are not judged here)."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "engine.py"


def test_engine_benchmark_prints_each_figure():
    out = subprocess.run([sys.executable, str(SCRIPT), "--seconds", "0.05", "--rounds", "2",
                          "--pairs", "200"], capture_output=True, text=True, check=True,
                         timeout=120).stdout
    rates = re.findall(r"^(patchwork(?:-express)?)\s+(untracked|tracked)\s+(\d+) /\s+(\d+) games/s",
                       out, re.M)
    assert [(g, t) for g, t, _, _ in rates] == [
        ("patchwork", "untracked"), ("patchwork", "tracked"),
        ("patchwork-express", "untracked"), ("patchwork-express", "tracked")]
    assert all(int(best) >= int(median) > 0 for _, _, best, median in rates)
    pairs = re.findall(r"legal_actions\(\)\+apply\(\): median ([\d.]+) us", out)
    assert len(pairs) == 2 and all(float(us) > 0 for us in pairs)
