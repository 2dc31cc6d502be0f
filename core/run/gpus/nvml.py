"""GPUs on this machine and the memory each process holds on them, through NVML.

NVML (nvidia-ml-py) answers without CUDA or TensorFlow, so the GUI can list devices and
sample per-process GPU memory without importing either. The NVML module is a parameter
so tests can stand a fake in at exactly this boundary.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from types import ModuleType
from typing import Any, cast

# NVML's return codes (nvml.h), stable across driver versions; read from the error's
# `value` so a fake NVML needs no constants.
_NO_PERMISSION = 4
_DRIVER_NOT_LOADED = 9
_LIBRARY_NOT_FOUND = 12


@dataclass(frozen=True)
class Gpu:
    index: int
    name: str
    memory_total: int  # bytes
    # What some GPUs or drivers do not report is None.
    uuid: str | None = None
    compute_capability: tuple[int, int] | None = None  # (major, minor): 9.0 on an H100
    memory_used: int | None = None  # bytes, by every process
    persistence_mode: bool | None = None  # on: the driver stays loaded between programs

    @property
    def sm(self) -> str | None:
        """The card's architecture as CUDA names it: sm_90."""
        cc = self.compute_capability
        return None if cc is None else f"sm_{cc[0]}{cc[1]}"


@dataclass(frozen=True)
class GpuInventory:
    gpus: tuple[Gpu, ...]
    driver: str | None
    reason: str | None  # why there are none, in words for a tooltip
    cuda_driver: str | None = None  # the newest CUDA the driver supports: "12.8"

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


def _why_no_nvml(exc: Exception) -> str:
    code = getattr(exc, "value", None)
    if code == _LIBRARY_NOT_FOUND:
        return ("No NVIDIA driver found: its library libnvidia-ml.so.1 is not installed here. Install the driver to "
                "use a GPU.")
    if code == _DRIVER_NOT_LOADED:
        return (f"The NVIDIA driver is installed but not loaded (NVML: {exc}). `nvidia-smi` says why; after "
                "installing or updating the driver, a reboot loads it.")
    if code == _NO_PERMISSION:
        return f"NVML may not read the GPUs as this user (NVML: {exc}). Check the permissions of /dev/nvidia*."
    return f"No NVIDIA driver found (NVML: {exc})."


def _cuda_version(number: int) -> str:
    """NVML's CUDA version number (12080) as CUDA writes it (12.8)."""
    return f"{number // 1000}.{number % 1000 // 10}"


def inventory(nvml: ModuleType | None = None) -> GpuInventory:
    nvml = nvml or _load_nvml()
    if nvml is None:
        return GpuInventory((), None, "nvidia-ml-py is not installed, so GPUs cannot be listed.")
    try:
        nvml.nvmlInit()
    except nvml.NVMLError as exc:
        return GpuInventory((), None, _why_no_nvml(exc))

    def optional(name: str, *args: Any) -> Any:
        # A figure one card or driver does not report (persistence mode on a laptop GPU, an
        # NVML too old for the call) is left out; the card is still listed.
        try:
            return getattr(nvml, name)(*args)
        except (nvml.NVMLError, AttributeError):
            return None

    try:
        driver = _text(nvml.nvmlSystemGetDriverVersion())
        cuda = optional("nvmlSystemGetCudaDriverVersion")
        gpus = []
        for i in range(nvml.nvmlDeviceGetCount()):
            handle = nvml.nvmlDeviceGetHandleByIndex(i)
            memory = nvml.nvmlDeviceGetMemoryInfo(handle)
            capability = optional("nvmlDeviceGetCudaComputeCapability", handle)
            persistence = optional("nvmlDeviceGetPersistenceMode", handle)
            uuid = optional("nvmlDeviceGetUUID", handle)
            gpus.append(Gpu(i, _text(nvml.nvmlDeviceGetName(handle)), memory.total,
                            None if uuid is None else _text(uuid),
                            None if capability is None else (int(capability[0]), int(capability[1])),
                            getattr(memory, "used", None), None if persistence is None else bool(persistence)))
    except nvml.NVMLError as exc:
        return GpuInventory((), None, f"NVML could not list the GPUs: {exc}.")
    finally:
        nvml.nvmlShutdown()
    return GpuInventory(tuple(gpus), driver, None if gpus else "The NVIDIA driver reports no GPU.",
                        None if cuda is None else _cuda_version(int(cuda)))


@functools.lru_cache(maxsize=1)
def machine_gpus() -> GpuInventory:
    """This machine's GPUs, asked once per process: what each run records at launch (the
    driver and the cards do not change under a running program)."""
    return inventory()


class GpuMemorySampler:
    """Per-GPU memory held by a set of processes; keeps NVML open between samples.

    One sampler serves every run's sampling thread at once; `close` may come from another
    thread while one samples, so NVML is shut down only between samples.
    """

    def __init__(self, nvml: ModuleType | None = None) -> None:
        self._nvml = nvml or _load_nvml()
        self._handles: list[Any] = []
        self._lock = threading.Lock()
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
        with self._lock:
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
        with self._lock:
            if self._handles and self._nvml is not None:
                self._handles = []
                self._nvml.nvmlShutdown()
