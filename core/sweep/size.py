"""How big a sweep is before it runs: its settings and trials, counted once for the CLI,
the app and the sweep itself, and how long earlier runs of the model say it will take.

Settings are distinct configurations: the baseline counts once even when the grid holds
it too, and two values that mean the same setting (on and true) count once. Counting
needs no conversion: a model in another format stands in by name.
"""

from __future__ import annotations

import os
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..probe.model.model_files import model_format
from ..run.status import RunStatus
from ..store.history import History

NOTHING_TO_VARY = "choose at least one setting to vary"
RECENT_RUNS = 10  # the runs an estimate takes its median from: recent enough to match today's machine


@dataclass(frozen=True)
class PlanSize:
    settings: int  # distinct configurations, the baseline included, once
    warmup: int  # rounds run first and discarded
    repeat: int  # measured trials per setting

    @property
    def trials(self) -> int:
        """Every trial if racing stops nothing: each setting in each warm-up and measured round."""
        return self.settings * (self.warmup + self.repeat)


def format_stand_in(model: str) -> Callable[[str], str]:
    """A model path per format for counting: the model itself in its own format (as
    run.formats.in_formats gives it), a name of its own in any other."""
    source = None if model.startswith("sample:") else model_format(os.path.abspath(os.path.expanduser(model)))
    return lambda fmt: model if fmt == source else f"{model} as {fmt}"


def recent_ready_times(history: History | None, model: str, limit: int = RECENT_RUNS) -> list[float]:
    """Time to ready of the model's latest successful runs, newest first (HistoryError when
    the history cannot be read)."""
    if history is None:
        return []
    runs = history.list_runs(model=model, limit=5 * limit)  # failed runs are skipped, so look further back
    return [r.time_to_ready for r in runs
            if r.status == RunStatus.OK.value and r.time_to_ready is not None][:limit]


def estimate_seconds(size: PlanSize, ready_times: Sequence[float]) -> float | None:
    """About how long the plan takes if every trial runs: the median earlier time to ready
    per trial; None without earlier runs."""
    if not ready_times or not size.trials:
        return None
    return statistics.median(ready_times) * size.trials
