"""P9: what Slurm adds to a sweep, against the same sweep run locally, in the same run.

Ten trials of 3 s each (a probe that speaks the protocol after sleeping 3 s: the trial's
own work, not TensorFlow's, so the ratio is Slurm's share alone), `tflaunch sweep` here
against `tflaunch sweep --on slurm --max-parallel 1` on the tests' single-node Slurm
(core/cluster/sandbox.py), wall time from the command's start until every trial has its
result; alternated pairs. Slurm's cost is mostly fixed per array task (about a second to
start one), so the trials run several to a task: `--trial-seconds 3` lets tflaunch choose
(tasks of about 30 s). One run with a task per trial is measured too, for the record.
Target: median ratio <= 1.3.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tests.benchmarks.common import alternated_pairs, median_ratio, report
from tests.builders import fake_python
from tests.fake_child import CHILD_ENV
from tflaunch.core.cluster.folder import load
from tflaunch.core.cluster.sandbox import Cluster, missing
from tflaunch.core.cluster.status import trial_states

TFLAUNCH = [sys.executable, "-m", "tflaunch.core.cli.main"]
TRIAL_S = 3
PAIRS = 3


def _sweep_args(python: Path) -> list[str]:
    # Two settings (intra 0 and 1), five trials each, every one sleeping TRIAL_S before a fake probe's answer.
    return ["--model", "sample:mlp", "--python", str(python), "--env", f"{CHILD_ENV}=ok", "--env",
            f"DELAY={TRIAL_S}", "--vary", "intra=1", "--repeat", "5", "--warmup", "0", "--timeout", "60"]


def local(python: Path, cwd: Path) -> float:
    started = time.monotonic()
    subprocess.run([*TFLAUNCH, "sweep", *_sweep_args(python), "--no-racing"], cwd=cwd, check=True,
                   capture_output=True)
    return time.monotonic() - started


def on_slurm(python: Path, cwd: Path, shared: Path, *per_task: str) -> float:
    started = time.monotonic()
    done = subprocess.run([*TFLAUNCH, "sweep", "--on", "slurm", *_sweep_args(python), "--max-parallel", "1",
                           "--shared-dir", str(shared), *per_task], cwd=cwd, check=True, capture_output=True,
                          text=True)
    folder = load(Path(done.stdout.strip().splitlines()[-1]))
    while True:
        states = trial_states(folder)
        if all(s.state in ("done", "failed") for s in states):
            assert all(s.state == "done" for s in states), [s.detail for s in states if s.state != "done"]
            return time.monotonic() - started
        if time.monotonic() - started > 600:
            raise RuntimeError(f"the Slurm sweep did not end: {[s.state for s in states]}")
        time.sleep(0.25)


def main() -> None:
    why = missing()
    if why:
        report("cluster_overhead", {"benchmark": "P9", "skipped": why})
        return
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # a stopped bench stops its Slurm too (finally)
    with tempfile.TemporaryDirectory(prefix="tflaunch-bench-slurm-") as temp:
        root = Path(temp)
        os.environ["TFLAUNCH_DATA_DIR"] = str(root / "data")  # the sweeps' history: not the user's
        slow = root / "slow-fake-python"
        slow.write_text(f'#!/bin/sh\nsleep "${{DELAY:-0}}"\nexec {fake_python(root)} "$@"\n')
        slow.chmod(0o755)
        cluster = Cluster(root / "slurm")
        (root / "slurm").mkdir()
        cluster.start()
        os.environ["SLURM_CONF"] = str(cluster.conf)
        try:
            pairs = alternated_pairs(lambda: on_slurm(slow, root, cluster.shared, "--trial-seconds", str(TRIAL_S)),
                                     lambda: local(slow, root), PAIRS, "slurm (auto trials per task) vs local")
            one_per_task = on_slurm(slow, root, cluster.shared)
        finally:
            cluster.stop()
    ratio = median_ratio(pairs)
    report("cluster_overhead", {
        "benchmark": f"P9: 10 trials of {TRIAL_S} s, tflaunch sweep --on slurm --max-parallel 1 "
                     "--trial-seconds 3 (the tests' single-node Slurm) vs the same sweep locally",
        "pairs_s": [[round(a, 2), round(b, 2)] for a, b in pairs], "median_ratio": round(ratio, 3),
        "one_trial_per_task_s": round(one_per_task, 2),
        "one_trial_per_task_ratio": round(one_per_task / sorted(b for _, b in pairs)[len(pairs) // 2], 3),
        "target": "median ratio <= 1.3", "met": ratio <= 1.3,
    })


if __name__ == "__main__":
    main()
