"""What NVML said of the machine's GPUs when a run was launched (gpu_notes.launch_facts).

The record copies the description into its environment as "nvml" once the probe describes
it, and the history keeps it there; its reader builds these facts back from that checked
stored dict (store/rows.py). They keep the description as it came, for writing back
unchanged, and give the figures tflaunch reads as typed attributes, each None (or empty)
where it is missing or not of its type: a row another program wrote is read, not trusted.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .. import read_as


@dataclass(frozen=True)
class LaunchGpu:
    """One GPU as NVML listed it at launch."""

    index: int | None = None
    name: str | None = None
    uuid: str | None = None
    compute_capability: tuple[int, int] | None = None  # (major, minor)
    memory_total: int | None = None  # bytes
    persistence_mode: bool | None = None

    @classmethod
    def of(cls, data: Mapping[str, Any]) -> LaunchGpu:
        mode = data.get("persistence_mode")
        return cls(read_as.count(data.get("index")), read_as.text(data.get("name")), read_as.text(data.get("uuid")),
                   read_as.capability(data.get("compute_capability")), read_as.count(data.get("memory_total")),
                   mode if isinstance(mode, bool) else None)


@dataclass(frozen=True)
class LaunchGpus:
    """NVML at launch; `described` is the description as launch_facts made it, written back unchanged."""

    described: Mapping[str, Any] = field(default_factory=dict)
    driver: str | None = field(init=False)
    cuda_driver: str | None = field(init=False)  # the newest CUDA the driver supports: "12.8"
    gpus: tuple[LaunchGpu, ...] = field(init=False)
    persistence_off: tuple[int, ...] = field(init=False)  # the GPUs whose driver loads again for every program

    def __post_init__(self) -> None:
        data = self.described
        gpus, off = data.get("gpus"), data.get("persistence_off")
        for name, value in (("driver", read_as.text(data.get("driver"))),
                            ("cuda_driver", read_as.text(data.get("cuda_driver"))),
                            ("gpus", tuple(LaunchGpu.of(g) for g in gpus if isinstance(g, Mapping))
                             if isinstance(gpus, list) else ()),
                            ("persistence_off", tuple(i for i in off if read_as.count(i) is not None)
                             if isinstance(off, list) else ())):
            object.__setattr__(self, name, value)

    def to_dict(self) -> dict[str, Any]:
        """As the environment and the history keep it: the description as it was made."""
        return dict(self.described)
