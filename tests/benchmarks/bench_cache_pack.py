"""The cache pack on this CPU: a jit_compile=True training program's time to its first step
and its steady step, with the pack (filled) against without.

The program is a small CNN trained with Keras fit and model.compile(jit_compile=True), so its
first step carries XLA's compile of the whole train step; the pack keeps that compiled
program. Both arms are the same program launched through tflaunch's engine (the launch hook
observes it to its first step, then STEADY steps), alternated; the first pack run, with the
pack empty, is the cold fill, reported apart with what it wrote. Reported: median of time to
first step with the pack / without, of the steady step with / without, the fill's time to first
step / the median without, and the pack's size.
Target: time to first step with the pack at most 0.9x without, the steady step within 5 %.
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
from pathlib import Path

from tests.benchmarks.common import alternated_pairs, report
from tflaunch.core.run.driver import run_sessions
from tflaunch.core.run.record import RunRecord, RunStatus
from tflaunch.core.run.session import ProbeSession
from tflaunch.core.settings.config import LaunchConfig

PAIRS = 5
STEADY = 10
PROGRAM = """
import keras
import numpy as np
inputs = keras.Input(shape=(32, 32, 3))
h = keras.layers.Conv2D(32, 3, activation="relu")(inputs)
h = keras.layers.Conv2D(32, 3, activation="relu")(h)
h = keras.layers.MaxPooling2D()(h)
h = keras.layers.Conv2D(64, 3, activation="relu")(h)
h = keras.layers.GlobalAveragePooling2D()(h)
outputs = keras.layers.Dense(10)(h)
model = keras.Model(inputs, outputs)
model.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True), jit_compile=True)
rng = np.random.default_rng(0)
x = rng.normal(size=(32 * 40, 32, 32, 3)).astype("float32")
y = rng.integers(0, 10, size=(32 * 40,))
model.fit(x, y, batch_size=32, epochs=1, verbose=0)
"""


def measure(script: Path, pack: bool, runs: list[RunRecord]) -> float:
    config = LaunchConfig(python=sys.executable, program=("python", str(script)), until="first_step",
                          steady=STEADY, timeout=300, xla_cache=pack)
    record = run_sessions([ProbeSession(config)])[0]
    if record.status is not RunStatus.OK or record.time_to_ready is None:
        raise SystemExit(f"bench_cache_pack: a run failed: {record.headline}")
    runs.append(record)
    return record.time_to_ready


def steady(record: RunRecord) -> float:
    return float(record.latency["median"])


def phase(record: RunRecord) -> float:
    """The first_step phase alone (where XLA compiles), without the start before it."""
    return float(record.phases["first_step"].duration or 0.0)


def main() -> None:
    work = Path(tempfile.mkdtemp(prefix="tflaunch-bench-pack-"))
    os.environ["TFLAUNCH_CACHE_DIR"] = str(work / "cache")  # an empty pack: the first pack run is the fill
    script = work / "train_cnn_jit.py"
    script.write_text(PROGRAM, encoding="utf-8")
    packed: list[RunRecord] = []
    plain: list[RunRecord] = []
    pairs = alternated_pairs(lambda: measure(script, True, packed), lambda: measure(script, False, plain), PAIRS,
                             "pack vs none, time to first step")
    fill, warm, cold = packed[0], packed[1:], plain[1:]
    facts = fill.cache_pack
    hits = [r.cache_pack.hits if r.cache_pack is not None else None for r in warm]
    first_ratio = statistics.median(a / b for a, b in pairs)
    steady_ratio = statistics.median(steady(r) for r in warm) / statistics.median(steady(r) for r in cold)
    report("cache_pack", {
        "benchmark": "time to first step and steady step of a jit_compile=True Keras CNN fit: pack / none",
        "program": PROGRAM.strip(), "pairs": PAIRS, "steady_steps_each": STEADY,
        "pairs_s": [{"pack": a, "none": b, "pack_steady": steady(w), "none_steady": steady(c)}
                    for (a, b), w, c in zip(pairs, warm, cold, strict=True)],
        "median_first_step_with_pack_s": statistics.median(a for a, _ in pairs),
        "median_first_step_without_s": statistics.median(b for _, b in pairs),
        "median_ratio_time_to_first_step": first_ratio,
        "median_steady_step_with_pack_s": statistics.median(steady(r) for r in warm),
        "median_steady_step_without_s": statistics.median(steady(r) for r in cold),
        "steady_step_ratio": steady_ratio,
        "fill_time_to_first_step_s": fill.time_to_ready,
        "fill_ratio_to_median_without": fill.time_to_ready / statistics.median(b for _, b in pairs),
        "median_first_step_phase_with_pack_s": statistics.median(phase(r) for r in warm),
        "median_first_step_phase_without_s": statistics.median(phase(r) for r in cold),
        "fill_first_step_phase_s": phase(fill),
        "pack_entries": facts.after.entries if facts is not None else None,
        "pack_bytes": facts.after.size if facts is not None else None,
        "hits_per_warm_run": hits,
        "target": {"first_step_ratio": 0.9, "steady_ratio_within": 0.05},
        "met": first_ratio <= 0.9 and abs(steady_ratio - 1) <= 0.05,
    })


if __name__ == "__main__":
    main()
