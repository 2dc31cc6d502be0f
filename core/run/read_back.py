"""What the child's TensorFlow said of the settings once it had imported: the `settings`
event's `applied` (threads, memory growth, XLA and oneDNN, the GPUs it sees, the cache folders
it was given), for a model and a program alike.

The history, the JSON and `history show` keep and list it as it came, every setting the child
named; ReadBack holds that for writing back, and what tflaunch itself reads of it as typed
attributes, each None where missing or not of its type (a child is parsed, not trusted).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from . import read_as
from .description import Description


@dataclass(frozen=True)
class ReadBack(Description):
    """The settings as read back in the child; `described` is what it sent, written back unchanged."""

    # The GPUs TensorFlow sees ("/physical_device:GPU:0", ...): how many contexts a first call made.
    gpus: tuple[str, ...] | None = field(init=False)
    cuda_cache: str | None = field(init=False)  # CUDA_CACHE_PATH as the child had it ("default" unset)
    xla_flags: str | None = field(init=False)  # TF_XLA_FLAGS as the child had it ("none" unset)

    def __post_init__(self) -> None:
        data = self.described
        gpus = data.get("gpus")
        object.__setattr__(self, "gpus", read_as.texts(gpus) if isinstance(gpus, list) else None)
        object.__setattr__(self, "cuda_cache", read_as.text(data.get("cuda_cache")))
        object.__setattr__(self, "xla_flags", read_as.text(data.get("xla_flags")))
