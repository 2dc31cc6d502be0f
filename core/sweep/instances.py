"""Many instances on one card: for each count of copies of a model started together, how
soon the slowest is ready, how much GPU memory each process holds, and whether all fit.

Pure functions over a sweep's trial records, so the command line, the app and a test read
the same figures. On a GPU each TensorFlow process reserves nearly all of a card's memory
at start unless memory growth, a memory limit or TF_GPU_ALLOCATOR=cuda_malloc_async is
set: what decides how many copies a card holds.
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..grid import grid
from ..run.status import RunStatus
from ..units import MIB, format_bytes, format_duration

if TYPE_CHECKING:
    from ..run.record import RunRecord

MAX_INSTANCES = 64
INSTANCES_HELP = ("copies of the model started together per trial: 1, 2, 4, ... (on a GPU each copy reserves "
                  "nearly all free memory unless memory growth, a memory limit or cuda_malloc_async is set)")
# What TensorFlow, CUDA and the allocator say when a card's memory ran out.
_OUT_OF_MEMORY = re.compile(r"out of memory|resource[_ ]exhausted|\bOOM\b|CUDA_ERROR_OUT_OF_MEMORY", re.IGNORECASE)
FITS, DOES_NOT_FIT, FAILED, NOT_RUN = "yes", "no: out of memory", "failed", "–"


class InstanceCountError(ValueError):
    """Instance counts that cannot run; the message names the value and what to type."""


def parse_counts(text: str) -> list[int]:
    """"1,2,4" as [1, 2, 4]: each a whole number from 1 to MAX_INSTANCES, each once."""
    counts: list[int] = []
    for part in (p.strip() for p in text.split(",")):
        if not part.isdigit() or not 1 <= int(part) <= MAX_INSTANCES:
            raise InstanceCountError(f"instances: '{part}' is not a count of copies; use whole numbers from 1 to "
                                     f"{MAX_INSTANCES} separated by commas, such as 1,2,4")
        if int(part) not in counts:
            counts.append(int(part))
    return counts


def out_of_memory(record: RunRecord) -> bool:
    """The run failed because memory ran out, by its failure or the end of its output."""
    if record.status is RunStatus.OK:
        return False
    failure = record.failure
    text = "\n".join([failure.message, failure.detail] if failure else []) + "\n" + "\n".join(record.stderr_tail)
    return bool(_OUT_OF_MEMORY.search(text))


@dataclass(frozen=True)
class TrialFigures:
    """One trial's instances, started together."""

    instances: int
    warmup: bool
    ready: float | None  # the slowest instance's time to ready; None unless every one got ready
    gpu_per_process: tuple[dict[int, int], ...]  # each instance's peak GPU memory, bytes by GPU index
    rss_per_process: tuple[int | None, ...]  # each instance's peak RSS (process tree), bytes
    out_of_memory: bool  # an instance failed for lack of memory
    failure: str | None  # the first failed instance's headline
    readies: tuple[float | None, ...] = ()  # each instance's time to ready, in start order
    # Each instance's reads from storage by phase: (bytes, the phase's seconds).
    reads: tuple[dict[str, tuple[int, float | None]], ...] = ()


def trial_figures(records: Sequence[RunRecord], warmup: bool = False) -> TrialFigures:
    readies = [r.time_to_ready if r.status is RunStatus.OK else None for r in records]
    failed = next((r for r in records if r.status is not RunStatus.OK), None)
    return TrialFigures(
        len(records), warmup, None if any(v is None for v in readies) else max(v for v in readies if v is not None),
        tuple(r.gpu_peaks for r in records), tuple(r.peak_rss for r in records),
        any(out_of_memory(r) for r in records), None if failed is None else failed.headline, tuple(readies),
        tuple({name: (p.read_bytes, p.duration) for name, p in r.phases.items() if p.read_bytes is not None}
              for r in records))


def read_rate(reads: dict[str, tuple[int, float | None]]) -> float | None:
    """An instance's bytes from storage per second of the phases that read them (at least a
    MiB: less is the page cache's, not storage's)."""
    read = [(size, seconds) for size, seconds in reads.values() if size and seconds]
    total = sum(size for size, _ in read)
    return total / sum(s for _, s in read if s) if total >= MIB else None


@dataclass(frozen=True)
class InstancesRow:
    """One setting (an instance count, with the other varied settings) over its trials."""

    setting: str
    instances: int
    trials: int  # measured trials (warm-ups excluded)
    ready: float | None  # median over measured trials of the slowest instance's time to ready
    gpu_per_process: dict[int, int]  # the most one process held, by GPU
    gpu_total: dict[int, int]  # the most all instances of one trial held together (sum of their peaks), by GPU
    rss_per_process: int | None  # the most one process's tree held
    fit: str  # FITS, DOES_NOT_FIT, FAILED, or NOT_RUN
    failure: str | None = None
    # Per instance (start order), medians over measured trials: time to ready, read rate.
    each: tuple[tuple[float | None, float | None], ...] = ()


def summarize(setting: str, instances: int, trials: Sequence[TrialFigures]) -> InstancesRow:
    """A setting's row from its trials (warm-ups count for memory and fit, not for time)."""
    readies = [t.ready for t in trials if not t.warmup and t.ready is not None]
    per_process: dict[int, int] = {}
    total: dict[int, int] = {}
    for trial in trials:
        together: dict[int, int] = {}
        for peaks in trial.gpu_per_process:
            for gpu, size in peaks.items():
                per_process[gpu] = max(per_process.get(gpu, 0), size)
                together[gpu] = together.get(gpu, 0) + size
        for gpu, size in together.items():
            total[gpu] = max(total.get(gpu, 0), size)
    rss = [v for t in trials for v in t.rss_per_process if v is not None]
    failure = next((t.failure for t in trials if t.failure), None)
    if not trials:
        fit = NOT_RUN
    elif any(t.out_of_memory for t in trials):
        fit = DOES_NOT_FIT
    elif all(t.ready is not None for t in trials):
        fit = FITS
    else:
        fit = FAILED
    return InstancesRow(setting, instances, sum(not t.warmup for t in trials),
                        statistics.median(readies) if readies else None, per_process, total,
                        max(rss) if rss else None, fit, failure, _each(trials, instances))


def _each(trials: Sequence[TrialFigures], instances: int) -> tuple[tuple[float | None, float | None], ...]:
    measured = [t for t in trials if not t.warmup and len(t.readies) == instances]
    if instances < 2 or not measured:
        return ()
    out = []
    for i in range(instances):
        readies = [ready for t in measured if (ready := t.readies[i]) is not None]
        rates = [rate for t in measured if i < len(t.reads) and (rate := read_rate(t.reads[i])) is not None]
        out.append((statistics.median(readies) if readies else None, statistics.median(rates) if rates else None))
    return tuple(out)


def each_text(row: InstancesRow) -> str:
    """"#1 2.31 s, 290.0 MiB/s; #2 2.95 s, 210.0 MiB/s": how each copy started (start order)."""
    if not row.each:
        return "–"
    return "; ".join(f"#{i} {format_duration(ready)}" + (f", {format_bytes(rate)}/s" if rate is not None else "")
                     for i, (ready, rate) in enumerate(row.each, start=1))


def _per_gpu(sizes: dict[int, int]) -> str:
    if not sizes:
        return "no GPU"
    if len(sizes) == 1:
        (gpu, size), = sizes.items()
        return f"{format_bytes(size)} (GPU {gpu})"
    return ", ".join(f"GPU {gpu} {format_bytes(size)}" for gpu, size in sorted(sizes.items()))


HEADER = ["Setting", "Instances", "Ready (slowest, median)", "GPU memory per process", "Total per GPU",
          "RSS per process", "Each: ready, read rate", "Fit"]


def instances_rows(rows: Sequence[InstancesRow]) -> tuple[list[str], list[list[str]]]:
    """(header, cells): the one table the terminal and the app show, figures with units."""
    return HEADER, [[r.setting, str(r.instances), format_duration(r.ready), _per_gpu(r.gpu_per_process),
                     _per_gpu(r.gpu_total), format_bytes(r.rss_per_process), each_text(r), r.fit] for r in rows]


def instances_table(rows: Sequence[InstancesRow]) -> str:
    """The table as text, with a line per setting that did not fit or failed saying why."""
    lines = [grid(*instances_rows(rows))]
    lines += [f"{r.setting}: {r.instances} at once {'did not fit' if r.fit == DOES_NOT_FIT else 'failed'}: "
              f"{r.failure}" for r in rows if r.fit in (DOES_NOT_FIT, FAILED) and r.failure]
    if any(r.each for r in rows):
        lines.append("Each: every copy's median time to ready, in start order, and the rate it read from storage "
                     "(bytes read over the phases that read them; none shown where the page cache served it). With "
                     "page_cache=cold the files are evicted once before all copies start, so they contend for one "
                     "storage.")
    if any(r.gpu_per_process for r in rows):
        lines.append("GPU memory is what NVML saw each process tree hold at its peak; the total is the instances' "
                     "peaks added up. Without memory growth, a limit or cuda_malloc_async each instance reserves "
                     "nearly all of a card's free memory.")
    return "\n".join(lines)
