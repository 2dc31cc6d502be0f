"""What a run's GPUs mean for its start-up, in sentences: a card TensorFlow cannot use, and
a driver that loads again for every program.

Read from what the probe reported (TensorFlow's build capabilities, each GPU's compute
capability) and what NVML said at launch (driver, persistence mode). That kernels are
JIT-compiled from PTX on a card is said once, where it matters, with its measured cost
(`tflaunch devices`, the doctor: doctor.cuda_cache), not on every run.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .kernels import Verdict, predict
from .launch_gpus import LaunchGpus
from .nvml import GpuInventory

if TYPE_CHECKING:
    from ..environment_facts import EnvironmentFacts


def kernel_verdicts(environment: EnvironmentFacts) -> list[tuple[str, Verdict, str]]:
    """(GPU label, verdict, why) for each GPU the run saw."""
    caps = list(environment.capabilities) if environment.capabilities is not None else None
    out = []
    for gpu in environment.gpus or ():
        label = f"{(gpu.name or 'GPU').replace('/physical_device:', '')} ({gpu.model or 'unknown'})"
        prediction = predict(caps, gpu.compute_capability, environment.cuda_build is not False)
        out.append((label, prediction.verdict, prediction.message))
    return out


def gpu_notes(environment: EnvironmentFacts) -> list[str]:
    """A line per GPU this TensorFlow has no kernels for, and per driver fact that slows start-up."""
    notes = [f"{label}: {text}." for label, verdict, text in kernel_verdicts(environment)
             if verdict is Verdict.UNSUPPORTED]
    nvml = environment.nvml  # NVML at launch, as the record copied it there
    off = LaunchGpus(nvml).persistence_off if nvml is not None else ()
    if off:
        notes.append(f"Persistence mode is off on GPU {', '.join(str(i) for i in off)}: the "
                     "driver loads again for every program, which adds up to seconds to device discovery "
                     "(`sudo nvidia-smi -pm 1` keeps it loaded).")
    return notes


def launch_facts(gpus: GpuInventory) -> LaunchGpus | None:
    """NVML's view at launch, kept with the run: driver, CUDA driver version, persistence;
    None where NVML sees no GPU."""
    if not gpus.available:
        return None
    return LaunchGpus({"driver": gpus.driver, "cuda_driver": gpus.cuda_driver,
                       "gpus": [{"index": g.index, "name": g.name, "uuid": g.uuid,
                                 "compute_capability": list(g.compute_capability) if g.compute_capability else None,
                                 "memory_total": g.memory_total, "persistence_mode": g.persistence_mode}
                                for g in gpus.gpus],
                       "persistence_off": [g.index for g in gpus.gpus if g.persistence_mode is False]})


def warnings_before_run(gpus: GpuInventory, capabilities: list[str] | None, is_cuda_build: bool,
                        visible: tuple[int, ...] | None) -> list[str]:
    """Before anything runs: each visible GPU this TensorFlow has no kernels for (it will not
    use it). A card whose kernels are JIT-compiled is no warning: its cost is measured apart."""
    out = []
    for gpu in gpus.gpus:
        if visible is not None and gpu.index not in visible:
            continue
        prediction = predict(capabilities, gpu.compute_capability, is_cuda_build)
        if prediction.verdict is Verdict.UNSUPPORTED:
            out.append(f"GPU {gpu.index} ({gpu.name}): {prediction.message}.")
    return out
