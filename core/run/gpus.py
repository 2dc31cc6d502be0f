"""GPUs on this machine and the memory each process holds on them, through NVML.

NVML (nvidia-ml-py) answers without CUDA or TensorFlow, so the GUI can list devices and
sample per-process GPU memory without importing either. The NVML module is a parameter
so tests can stand a fake in at exactly this boundary.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from types import ModuleType
from typing import Any, cast


@dataclass(frozen=True)
class Gpu:
    index: int
    name: str
    memory_total: int  # bytes


@dataclass(frozen=True)
class GpuInventory:
    gpus: tuple[Gpu, ...]
    driver: str | None
    reason: str | None  # why there are none, in words for a tooltip

    @property
    def available(self) -> bool:
        return bool(self.gpus)


def _load_nvml() -> ModuleType | None:
    try:
        import pynvml
    except ImportError:
        return None
    return cast(ModuleType, pynvml)  # an untyped package: Any to mypy


def _text(value: str | bytes) -> str:
    return value.decode() if isinstance(value, bytes) else value


def inventory(nvml: ModuleType | None = None) -> GpuInventory:
    nvml = nvml or _load_nvml()
    if nvml is None:
        return GpuInventory((), None, "nvidia-ml-py is not installed, so GPUs cannot be listed.")
    try:
        nvml.nvmlInit()
    except nvml.NVMLError as exc:
        return GpuInventory((), None, f"No NVIDIA driver found (NVML: {exc}).")
    try:
        driver = _text(nvml.nvmlSystemGetDriverVersion())
        gpus = []
        for i in range(nvml.nvmlDeviceGetCount()):
            handle = nvml.nvmlDeviceGetHandleByIndex(i)
            gpus.append(Gpu(i, _text(nvml.nvmlDeviceGetName(handle)), nvml.nvmlDeviceGetMemoryInfo(handle).total))
    except nvml.NVMLError as exc:
        return GpuInventory((), None, f"NVML could not list the GPUs: {exc}.")
    finally:
        nvml.nvmlShutdown()
    return GpuInventory(tuple(gpus), driver, None if gpus else "The NVIDIA driver reports no GPU.")


class GpuMemorySampler:
    """Per-GPU memory held by a set of processes; keeps NVML open between samples."""

    def __init__(self, nvml: ModuleType | None = None) -> None:
        self._nvml = nvml or _load_nvml()
        self._handles: list[Any] = []
        if self._nvml is None:
            return
        try:
            self._nvml.nvmlInit()
            self._handles = [self._nvml.nvmlDeviceGetHandleByIndex(i)
                             for i in range(self._nvml.nvmlDeviceGetCount())]
        except self._nvml.NVMLError:
            self._handles = []

    @property
    def available(self) -> bool:
        return bool(self._handles)

    def sample(self, pids: Iterable[int]) -> dict[int, int]:
        """{gpu index: bytes used by these processes}; GPUs they do not use are left out."""
        wanted = set(pids)
        used: dict[int, int] = {}
        if self._nvml is None:  # then there are no handles either
            return used
        for index, handle in enumerate(self._handles):
            try:
                procs = self._nvml.nvmlDeviceGetComputeRunningProcesses(handle)
            except self._nvml.NVMLError:
                continue
            total = sum(p.usedGpuMemory or 0 for p in procs if p.pid in wanted)
            if any(p.pid in wanted for p in procs):
                used[index] = total
        return used

    def close(self) -> None:
        if self._handles and self._nvml is not None:
            self._handles = []
            self._nvml.nvmlShutdown()
