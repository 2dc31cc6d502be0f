"""What the child said of the environment it ran in: its result's `environment` (the probe's
TensorFlow, Keras, Python, CPU, GPUs and CUDA build; a program's launch hook sends only the
versions it saw), with NVML's view at launch, which the record adds to it as "nvml".

Not run/environment.py, which makes the variables a child is launched with: this is what the
child reported back. The history and the JSON keep the description as it came (a newer probe
may add keys nobody reads yet): EnvironmentFacts holds it for writing back, and the figures
tflaunch reads as typed attributes, each None (or empty) where it is missing or not of its
type. A child's result is parsed, not checked (events._mapping caps it), so a child that sends
`"gpus": 7` or a list for a version gets no figure, not a report that raises. The event parser
builds it (events.py), the history's reader from the stored dict (store/rows.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from . import read_as
from .description import Description


@dataclass(frozen=True)
class ReportedGpu:
    """One GPU as TensorFlow listed it: its device ("/physical_device:GPU:0"), the card's model,
    its compute capability (major, minor) and TensorFlow's allocator peak on it (bytes)."""

    name: str | None = None
    model: str | None = None
    compute_capability: tuple[int, int] | None = None
    allocator_peak: int | None = None

    @classmethod
    def of(cls, data: Mapping[str, Any]) -> ReportedGpu:
        return cls(read_as.text(data.get("name")), read_as.text(data.get("model")),
                   read_as.capability(data.get("compute_capability")), read_as.count(data.get("allocator_peak")))


@dataclass(frozen=True)
class EnvironmentFacts(Description):
    """The environment's description; `described` is what the child sent (and the record added),
    written back unchanged."""

    tensorflow: str | None = field(init=False)
    keras: str | None = field(init=False)
    python: str | None = field(init=False)
    platform: str | None = field(init=False)
    cpu: str | None = field(init=False)
    cores: int | None = field(init=False)
    driver: str | None = field(init=False)  # the NVIDIA kernel module's version line
    cuda: str | None = field(init=False)  # the CUDA and cuDNN TensorFlow was built with
    cudnn: str | None = field(init=False)
    cuda_build: bool | None = field(init=False)
    # The compute capabilities the build carries kernels for; None where it did not say.
    capabilities: tuple[str, ...] | None = field(init=False)
    # None where the child listed no GPUs at all (a program's launch hook says only versions),
    # () where TensorFlow saw none: the first says nothing of the machine, the second does.
    gpus: tuple[ReportedGpu, ...] | None = field(init=False)
    # NVML at launch, as the record copied it here: gpus/launch_gpus.LaunchGpus reads it (a
    # layer above this module, which the event parser below it cannot import).
    nvml: Mapping[str, Any] | None = field(init=False)

    def __post_init__(self) -> None:
        data = self.described
        gpus, capabilities, nvml = data.get("gpus"), data.get("capabilities"), data.get("nvml")
        for name in ("tensorflow", "keras", "python", "platform", "cpu", "driver", "cuda", "cudnn"):
            object.__setattr__(self, name, read_as.text(data.get(name)))
        for name, value in (("cores", read_as.count(data.get("cores"))),
                            ("cuda_build", read_as.flag(data.get("cuda_build"))),
                            ("capabilities", read_as.texts(capabilities) if isinstance(capabilities, list) else None),
                            ("gpus", tuple(ReportedGpu.of(g) for g in gpus if isinstance(g, Mapping))
                             if isinstance(gpus, list) else None),
                            ("nvml", nvml if isinstance(nvml, Mapping) else None)):
            object.__setattr__(self, name, value)
