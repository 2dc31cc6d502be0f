"""Benchmark: tflaunch's time to ready against an outside stopwatch on the same runs.

The stopwatch is this process's monotonic clock: started just before the run is handed
to the driver (so it includes starting the process) and stopped when the line saying
the first inference ended arrives on the pipe. tflaunch's figure comes from the run
record (the child's wall clock at that event minus the launch time). Three models of
different shapes of start-up; target: every run within 1 % or 10 ms of the stopwatch.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

from tflaunch.core.run import events as ev
from tflaunch.core.run.driver import run_sessions
from tflaunch.core.run.record import RunRecord, RunStatus
from tflaunch.core.run.session import ProbeSession
from tflaunch.core.run.watcher import Output, Watcher
from tflaunch.core.settings.config import LaunchConfig

from .common import report, save_sample

RUNS_PER_MODEL = 3
TOLERANCE_FRACTION, TOLERANCE_S = 0.01, 0.010


class Stopwatch(Watcher):
    def __init__(self) -> None:
        self.start = time.monotonic()
        self.ready: float | None = None

    def changed(self, record: RunRecord, output: Output | None) -> None:
        if output and self.ready is None and any(
                isinstance(e, ev.PhaseEnd) and e.phase == "first" for e in output.events):
            self.ready = time.monotonic() - self.start


def measure(model: str) -> tuple[float, float]:
    watch = Stopwatch()
    record = run_sessions([ProbeSession(LaunchConfig(model=model, steady=2))], watch)[0]
    if record.status is not RunStatus.OK or record.time_to_ready is None or watch.ready is None:
        raise SystemExit(f"{model}: {record.headline}")
    return record.time_to_ready, watch.ready


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        models = {"sample:mlp (built from code)": "sample:mlp",
                  "cnn .keras (MobileNetV2)": str(save_sample("cnn", "keras", Path(tmp))),
                  "wide SavedModel (130 MB)": str(save_sample("wide", "savedmodel", Path(tmp)))}
        rows = []
        for label, model in models.items():
            for i in range(RUNS_PER_MODEL):
                ours, outside = measure(model)
                error = ours - outside
                allowed = max(TOLERANCE_FRACTION * outside, TOLERANCE_S)
                rows.append({"model": label, "run": i + 1, "tflaunch_s": round(ours, 4),
                             "stopwatch_s": round(outside, 4), "error_ms": round(error * 1000, 2),
                             "within": abs(error) <= allowed})
                print(f"{label} run {i + 1}: tflaunch {ours:.3f} s, stopwatch {outside:.3f} s, "
                      f"error {error * 1000:+.1f} ms", file=sys.stderr)
    worst = max(rows, key=lambda r: abs(r["error_ms"]))
    ok = all(r["within"] for r in rows)
    report("time_to_ready_truth", {"target": "every run within 1 % or 10 ms of the stopwatch", "met": ok,
                                   "worst_error_ms": worst["error_ms"], "runs": rows})
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
