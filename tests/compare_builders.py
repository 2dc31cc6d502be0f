"""Runs to compare, built from code: sides of a given number of runs with known medians
and ranges, without TensorFlow."""

from __future__ import annotations

from collections.abc import Sequence

from tflaunch.core.run.record import RunRecord

from .builders import finished_record


def side(ready_s: Sequence[float], intra: int = 0, first_id: int = 1, at: float = 1000.0,
         python: str | None = None) -> list[RunRecord]:
    """Runs of one setting (intra), stored as #first_id..., with these times to ready less
    the 20 ms of spawn (finished_record adds it)."""
    runs = []
    for k, seconds in enumerate(ready_s):
        record = finished_record(ready_s=seconds, intra=intra, at=at + k)
        if python is not None:
            record.config = record.config.replace(python=python)
        record.history_id = first_id + k
        runs.append(record)
    return runs


def sides(count: int, runs_each: int = 1, step_s: float = 1 / 3, jitter_s: float = 0.02,
          long_paths: bool = False) -> list[RunRecord]:
    """`count` settings (intra=0, 1, ...), `runs_each` runs of each, each setting a third
    of a second slower than the one before, its runs `jitter_s` apart; with `long_paths`
    each setting also has its own long interpreter path, as a lab's virtual environments do."""
    runs: list[RunRecord] = []
    for i in range(count):
        python = f"/home/researcher/projects/startup-study/envs/tensorflow-2.{15 + i}-cuda12/bin/python" \
            if long_paths else None
        runs += side([1.0 + i * step_s + k * jitter_s for k in range(runs_each)], intra=i, first_id=len(runs) + 1,
                     at=1000.0 + 60 * i, python=python)
    return runs
