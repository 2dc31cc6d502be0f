"""The JIT verdict of a card with what it costs there: the cost measured as pairs of runs of a
small model with the CUDA kernel cache empty (cold) and kept (warm), on that card and
interpreter, and remembered (store.cuda_cache_costs) for the doctor and `tflaunch devices`.

The runs are ordinary measured runs (run_probe: the same engine, the same cache folders as
a sweep's cuda_cache=cold|warm), so the warm folder a profile later uses is the one measured.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from ..phases import FIRST
from ..run.driver import run_probe
from ..run.gpus.kernels import Verdict, predict
from ..run.gpus.nvml import Gpu, GpuInventory
from ..run.interpreters.build_info import BuildInfo
from ..run.record import RunRecord, RunStatus
from ..settings import caches
from ..settings.config import LaunchConfig
from ..store.cuda_cache_costs import CostStore, CudaCacheCost, cost_key, not_measured

MODEL = "sample:mlp"
Say = Callable[[str], None]
Run = Callable[[LaunchConfig], RunRecord]


class MeasureError(Exception):
    """A run of the pair failed: nothing is remembered; the message says which and why."""


def _config(python: str, gpu: Gpu, cache: str) -> LaunchConfig:
    return LaunchConfig(python=python, model=MODEL, steady=3, cuda_cache=cache, visible_gpus=(gpu.index,),
                        timeout=3600)


def _ready(record: RunRecord, what: str) -> float:
    if record.status is not RunStatus.OK or record.time_to_ready is None:
        raise MeasureError(f"the {what} run on the GPU failed: {record.headline}")
    return record.time_to_ready


def _first(record: RunRecord) -> float | None:
    phase = record.phases.get(FIRST)
    return None if phase is None else phase.duration


def measure(build: BuildInfo, gpus: GpuInventory, gpu: Gpu, pairs: int = 1, say: Say = lambda _: None,
            store: CostStore | None = None, run: Run | None = None) -> CudaCacheCost:
    """`pairs` cold/warm pairs (which goes first alternates) after one unrecorded warm run
    that fills the warm folder; remembered in `store`. `run`: run_probe (a test stands in
    the GPU's runs there)."""
    run = run or run_probe
    say(f"measuring the CUDA cache on GPU {gpu.index} ({gpu.name}) with {build.python}: one warm run to fill "
        f"the cache, then {pairs} cold and {pairs} warm run{'s' if pairs > 1 else ''} of {MODEL}")
    _ready(run(_config(build.python, gpu, "warm")), "first warm")
    cold: list[float] = []
    warm: list[float] = []
    cold_first: list[float] = []
    warm_first: list[float] = []
    size = 0
    for i in range(pairs):
        for cache in ("cold", "warm") if i % 2 == 0 else ("warm", "cold"):
            record = run(_config(build.python, gpu, cache))
            (cold if cache == "cold" else warm).append(_ready(record, cache))
            first = _first(record)
            if first is not None:
                (cold_first if cache == "cold" else warm_first).append(first)
            if cache == "cold":
                folder = record.settings.cuda_cache
                size = max(size, caches.size_of(Path(folder)) if folder is not None else 0)
    cost = CudaCacheCost(cost_key(build, gpus, gpu), gpu.index, tuple(cold), tuple(warm),
                         tuple(cold_first) if len(cold_first) == len(cold) else (),
                         tuple(warm_first) if len(warm_first) == len(warm) else (), size, time.time(), MODEL)
    (store or CostStore()).save(cost)
    return cost


def jit_cards(build: BuildInfo, gpus: GpuInventory) -> list[Gpu]:
    """The first GPU of each model this build has no native kernels for (one measurement a model)."""
    seen: set[str] = set()
    out = []
    for gpu in gpus.gpus:
        if gpu.name in seen or predict(build.capabilities, gpu.compute_capability,
                                       build.is_cuda_build).verdict is not Verdict.JIT:
            continue
        seen.add(gpu.name)
        out.append(gpu)
    return out


def cost_sentence(build: BuildInfo, gpus: GpuInventory, gpu: Gpu, store: CostStore | None = None) -> str:
    """The measured cost of a cold cache on this card, or that it is not measured (never a guess)."""
    store = store or CostStore()
    cost = store.get(cost_key(build, gpus, gpu))
    if cost is None:
        return not_measured(gpu) + (f" ({store.problem})" if store.problem else "")
    return f"measured here: {cost.sentence()}"
