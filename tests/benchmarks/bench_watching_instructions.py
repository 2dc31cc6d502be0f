"""Benchmark: what watching adds to a program's work to its first step, counted in instructions.

The wall-clock ratio (bench_program_overhead) is the budget's own measure, but on a shared
two-core machine a TensorFlow start spreads by ±15 % from run to run, and a median over a
dozen pairs is good to ±3-4 %: it cannot tell 0.5 % from 2 %. An instruction count does not
stretch with the machine's other work. Valgrind's callgrind counts every instruction the
program executes, per thread, from its exec to its exit; the program (tests/programs/fit_tfdata.py
with TRUTH_EXIT=1) ends as its second batch begins, so the count is its work to the first step
and through it. Three runs, the order alternated: plain, watched by tflaunch (the launch hook
and its observer, `--until exit`), plain again; the two plain runs' gap is the measure's own
noise (TensorFlow's thread pools spin for as long as the threads race).

Target: the main thread's count, watched / plain, at most 1.02 (watching's code runs in the
main thread); all threads' is reported beside it. Skipped, saying so, where valgrind is not
installed (Debian's valgrind). Slow: each run takes 5-7 minutes under callgrind.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from tflaunch.core.run.driver import run_sessions
from tflaunch.core.run.record import RunStatus
from tflaunch.core.run.session import ProbeSession
from tflaunch.core.settings.config import LaunchConfig

from .common import report

PROGRAMS = Path(__file__).resolve().parents[1] / "programs"
ARGS = ["fit_tfdata.py", "--steps", "3"]
TARGET = 1.02
ENV = {"TRUTH_EXIT": "1", "TF_CPP_MIN_LOG_LEVEL": "2"}


def callgrind(out: Path) -> list[str]:
    # One file per thread: the main thread's is "-01" (callgrind numbers threads from 1).
    return ["valgrind", "--tool=callgrind", "--separate-threads=yes", f"--callgrind-out-file={out}/cg.%p"]


def counts(out: Path) -> tuple[int, int]:
    """(the main thread's instructions, all threads') from callgrind's files."""
    per_thread: dict[int, int] = {}
    for file in out.iterdir():
        text = file.read_text(errors="replace")
        total = re.search(r"^(?:summary|totals):\s+(\d+)", text, re.M)
        thread = re.search(r"^thread:\s+(\d+)", text, re.M)
        if total is not None:
            per_thread[int(thread.group(1)) if thread else 1] = int(total.group(1))
    if 1 not in per_thread:
        raise SystemExit(f"callgrind wrote no count for the main thread in {out}")
    return per_thread[1], sum(per_thread.values())


def plain(out: Path) -> tuple[int, int]:
    done = subprocess.run([*callgrind(out), sys.executable, *ARGS], cwd=PROGRAMS, env={**os.environ, **ENV},
                          capture_output=True, text=True, timeout=3600)
    if done.returncode != 0:
        raise SystemExit(f"plain run under callgrind: exit {done.returncode}: {done.stderr[-600:]}")
    return counts(out)


def watched(out: Path) -> tuple[int, int]:
    config = LaunchConfig(program=(*callgrind(out), sys.executable, *ARGS), workdir=str(PROGRAMS), until="exit",
                          log_level=2, extra_env=dict(ENV), timeout=3600)
    record = run_sessions([ProbeSession(config)])[0]
    if record.status is not RunStatus.OK or "first_step" not in record.phases:
        raise SystemExit(f"watched run under callgrind: {record.headline}")
    return counts(out)


def main() -> int:
    if shutil.which("valgrind") is None:
        print("bench_watching_instructions: skipped: valgrind is not installed (Debian: apt install valgrind)")
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        runs = {}
        for name, arm in (("plain_1", plain), ("watched", watched), ("plain_2", plain)):
            out = Path(tmp) / name
            out.mkdir()
            runs[name] = arm(out)
            print(f"{name}: main thread {runs[name][0]:,} instructions, all threads {runs[name][1]:,}", flush=True)
    base_main = (runs["plain_1"][0] + runs["plain_2"][0]) / 2
    base_all = (runs["plain_1"][1] + runs["plain_2"][1]) / 2
    ratio = runs["watched"][0] / base_main
    report("watching_instructions", {
        "benchmark": "instructions to the first step (callgrind), watched by tflaunch / plain (the mean of two "
                     "plain runs around it): fit on tf.data, Keras 3",
        "runs": {name: {"main_thread": m, "all_threads": a} for name, (m, a) in runs.items()},
        "main_thread_ratio": round(ratio, 5),
        "all_threads_ratio": round(runs["watched"][1] / base_all, 5),
        "plain_gap_main_thread": round(abs(runs["plain_1"][0] - runs["plain_2"][0]) / base_main, 5),
        "plain_gap_all_threads": round(abs(runs["plain_1"][1] - runs["plain_2"][1]) / base_all, 5),
        "target": f"main-thread ratio <= {TARGET}", "met": ratio <= TARGET,
    })
    return 0


if __name__ == "__main__":
    sys.exit(main())
