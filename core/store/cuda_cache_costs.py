"""What a cold CUDA kernel cache costs on a card, as measured, remembered per card,
interpreter, TensorFlow build and NVIDIA driver in one small JSON file.

Where TensorFlow has no native kernels for a card, the driver JIT-compiles its PTX at start
and the CUDA cache keeps the result. What that costs is not a constant of the verdict: on an
H200 with lazy module loading a cold cache cost 0.05-0.35 s, not the "minutes" older stacks
were known for. So a cost is said only as it was measured (a cold/warm pair of runs on that
card, with that interpreter and that driver), and "not measured" otherwise.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import statistics
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ..paths import data_dir
from ..run.gpus.nvml import Gpu, GpuInventory
from ..run.interpreters.build_info import BuildInfo
from ..units import format_bytes, format_duration
from .atomic import atomic_write

SCHEMA_VERSION = 1
MEASURE_COMMAND = "tflaunch devices --measure-cuda-cache"


@dataclass(frozen=True)
class CostKey:
    """What compiled kernels and their cost depend on."""

    card: str  # NVML's model name
    python: str  # the interpreter's real path
    tensorflow: str | None
    cuda_build: str | None  # the CUDA version TensorFlow was built with
    driver: str | None

    @property
    def id(self) -> str:
        return hashlib.sha1(json.dumps(asdict(self), sort_keys=True).encode()).hexdigest()[:16]


def cost_key(build: BuildInfo, gpus: GpuInventory, gpu: Gpu) -> CostKey:
    cuda = build.info.get("cuda_version")
    return CostKey(gpu.name, os.path.realpath(build.python), build.tensorflow, None if cuda is None else str(cuda),
                   gpus.driver)


@dataclass(frozen=True)
class CudaCacheCost:
    """Pairs of runs of one small model on one card: the CUDA cache empty, then kept."""

    key: CostKey
    gpu_index: int
    cold_s: tuple[float, ...]  # time to ready with an empty cache, one per pair
    warm_s: tuple[float, ...]  # time to ready with the cache the cold runs' kind fills
    cold_first_s: tuple[float, ...]  # the first call (where lazy loading compiles), cold
    warm_first_s: tuple[float, ...]
    cache_bytes: int  # what a cold run left in its empty cache
    measured_at: float
    model: str = "sample:mlp"

    @property
    def pairs(self) -> int:
        return min(len(self.cold_s), len(self.warm_s))

    @property
    def extra_s(self) -> float:
        """What the cold cache added to time to ready: the difference of the medians."""
        return statistics.median(self.cold_s) - statistics.median(self.warm_s)

    def sentence(self) -> str:
        """The cost in words, with the figures it comes from and how many pairs there were."""
        extra = self.extra_s
        cost = (f"a cold CUDA cache added {format_duration(extra)} to time to ready" if extra > 0 else
                "a cold CUDA cache added nothing measurable to time to ready")
        cold, warm = statistics.median(self.cold_s), statistics.median(self.warm_s)
        first = ""
        if self.cold_first_s and self.warm_first_s:
            first = (f"; first call {format_duration(statistics.median(self.cold_first_s))} cold vs "
                     f"{format_duration(statistics.median(self.warm_first_s))} warm")
        runs = "one pair of runs" if self.pairs == 1 else (
            f"medians of {self.pairs} pairs" if self.pairs >= 3 else f"{self.pairs} pairs, medians")
        when = time.strftime("%Y-%m-%d", time.localtime(self.measured_at))
        return (f"{cost} ({format_duration(cold)} cold vs {format_duration(warm)} warm{first}; {runs} of "
                f"{self.model} on GPU {self.gpu_index}, {when}; the cache held {format_bytes(self.cache_bytes)})")

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["extra_s"] = self.extra_s
        return data


def not_measured(gpu: Gpu) -> str:
    return (f"what a cold CUDA cache costs on this card is not measured yet: {MEASURE_COMMAND} measures it "
            f"(one cold and one warm run of sample:mlp on GPU {gpu.index})")


def _floats(value: Any, name: str) -> tuple[float, ...]:
    if not isinstance(value, list) or not value or not all(
            isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and 0 <= v < 1e6
            for v in value):
        raise ValueError(f"{name} is not a list of seconds")
    return tuple(float(v) for v in value)


def _from_dict(data: Any) -> CudaCacheCost:
    """One stored measurement, checked field by field (a damaged entry raises ValueError)."""
    if not isinstance(data, dict) or not isinstance(data.get("key"), dict):
        raise ValueError("not a measurement")
    raw = data["key"]
    card, python = raw.get("card"), raw.get("python")
    if not isinstance(card, str) or not card or not isinstance(python, str) or not python:
        raise ValueError("no card or interpreter")
    key = CostKey(card, python, *(None if raw.get(f) is None else str(raw[f]) for f in ("tensorflow", "cuda_build",
                                                                                          "driver")))
    index, size, when = data.get("gpu_index"), data.get("cache_bytes"), data.get("measured_at")
    if not isinstance(index, int) or not isinstance(size, int) or size < 0 or not isinstance(when, (int, float)):
        raise ValueError("gpu_index, cache_bytes or measured_at is damaged")
    cold_first, warm_first = (_floats(data[f], f) if data.get(f) else () for f in ("cold_first_s", "warm_first_s"))
    return CudaCacheCost(key, index, _floats(data.get("cold_s"), "cold_s"), _floats(data.get("warm_s"), "warm_s"),
                         cold_first, warm_first, size, float(when), str(data.get("model") or "sample:mlp"))


class CostStore:
    """The measurements, one per key: a new one replaces the old (a driver update is a new key)."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or data_dir() / "cuda-cache-costs.json"
        self.problem: str | None = None  # why the file could not be read (it is then left untouched)

    def _read(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            self.problem = f"{self.path} could not be read ({exc}); it is left as it is"
            return {}
        if not isinstance(data, dict) or data.get("schema_version") != SCHEMA_VERSION or not isinstance(
                data.get("costs"), dict):
            self.problem = f"{self.path} is not a file of CUDA cache costs this tflaunch writes; it is left as it is"
            return {}
        return dict(data["costs"])

    def get(self, key: CostKey) -> CudaCacheCost | None:
        entry = self._read().get(key.id)
        if entry is None:
            return None
        try:
            cost = _from_dict(entry)
        except ValueError as exc:
            self.problem = f"the measurement for {key.card} in {self.path} is damaged ({exc}); measure it again"
            return None
        return cost if cost.key == key else None

    def save(self, cost: CudaCacheCost) -> None:
        costs = self._read()
        if self.problem is not None:
            raise OSError(self.problem)
        costs[cost.key.id] = cost.to_dict()
        atomic_write(self.path, json.dumps({"schema_version": SCHEMA_VERSION, "costs": costs}, indent=2).encode())
