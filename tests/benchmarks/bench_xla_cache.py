"""The XLA program cache, kept between runs (xla_cache=on) against none, on this machine.

A model compiled with XLA (jit_compile) pays its compilation in `trace`/`first` at every
start; with the persistent cache a later start reads the compiled program back. Both arms
run the same settings through `tflaunch bench` in fresh processes, alternated; the cache's
first fill is the warm-up round. Reported: median ratio of the compile-bearing phases
(trace + first) and of time to ready, cached / uncached, for sample:cnn (convolutions: XLA
compiles for a while; a stack of Dense layers compiles in milliseconds). The GPU tier measures the CUDA
kernel cache the same way where kernels are JIT-compiled from PTX.
Target: the cached compile phases take at most 0.8x the uncached ones.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile

from tests.benchmarks.common import alternated_pairs, report

PAIRS = 5
MODEL = "sample:cnn"


def run(xla_cache: bool, data: str) -> dict:
    flags = ["--xla-cache"] if xla_cache else []
    done = subprocess.run([sys.executable, "-m", "tflaunch.gui.main", "bench", "--model", MODEL,
                           "--jit-compile", "--steady", "3", "--json", "--no-history", *flags],
                          capture_output=True, text=True, check=True, env={**os.environ, "TFLAUNCH_DATA_DIR": data})
    return json.loads(done.stdout)["runs"][0]


def main() -> None:
    data = tempfile.mkdtemp(prefix="tflaunch-xla-cache-")
    runs: dict[bool, list[dict]] = {True: [], False: []}

    def measure(cached: bool) -> float:
        record = run(cached, data)
        runs[cached].append(record)
        return record["phases"]["trace"]["duration"] + record["phases"]["first"]["duration"]

    pairs = alternated_pairs(lambda: measure(True), lambda: measure(False), PAIRS, "xla cache")
    ratio = statistics.median(a / b for a, b in pairs)
    ready = statistics.median(r["time_to_ready"] for r in runs[True][1:]) / statistics.median(
        r["time_to_ready"] for r in runs[False][1:])
    report("xla_cache", {
        "benchmark": "trace + first of " + MODEL + " with jit_compile: XLA cache kept (on) / none (off)",
        "pairs_s": [{"cached": a, "uncached": b} for a, b in pairs],
        "median_ratio_compile_phases": ratio, "median_ratio_time_to_ready": ready,
        "target": 0.8, "met": ratio <= 0.8,
    })


if __name__ == "__main__":
    main()
