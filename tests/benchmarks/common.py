"""Helpers shared by the benchmarks: sample files, result files, ratios."""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "bench-results"


def save_sample(name: str, fmt: str, out: Path) -> Path:
    from tflaunch.core.config import PROBE_PATH

    done = subprocess.run([sys.executable, str(PROBE_PATH), "--save-sample", name, "--format", fmt,
                           "--out", str(out)], capture_output=True, text=True, check=True)
    return Path(json.loads(done.stdout.splitlines()[-1])["path"])


def report(name: str, data: dict) -> None:
    """Print the figures and keep them in bench-results/NAME.json."""
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"{name}.json").write_text(json.dumps(data, indent=2))
    print(json.dumps(data, indent=2))


def median_ratio(pairs: list[tuple[float, float]]) -> float:
    return statistics.median(a / b for a, b in pairs)
