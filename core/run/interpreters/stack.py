"""The software and hardware stack of an interpreter on this machine, as caches key on it."""

from __future__ import annotations

import functools
import os

from ...settings.caches import Stack
from ..gpus.nvml import inventory
from .build_info import build_info


@functools.lru_cache(maxsize=16)
def current_stack(python: str) -> Stack:
    """`python`'s TensorFlow, the NVIDIA driver and the GPU models, asked once per process
    (a child of that interpreter reads TensorFlow's build info: about 0.1 s)."""
    gpus = inventory()
    return Stack(os.path.realpath(python), build_info(python, timeout=30).tensorflow, gpus.driver,
                 tuple(g.name for g in gpus.gpus))
