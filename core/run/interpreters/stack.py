"""The software and hardware stack of an interpreter on this machine, as cache packs key on it."""

from __future__ import annotations

import functools
import os
import shutil

from ...settings.caches import Stack
from ..gpus.nvml import inventory
from .build_info import build_info


@functools.lru_cache(maxsize=16)
def current_stack(python: str) -> Stack:
    """`python`'s TensorFlow and its build (CUDA, cuDNN), the NVIDIA driver, the GPU models and
    their compute capabilities, asked once per process
    (a child of that interpreter reads TensorFlow's build info: about 0.1 s)."""
    gpus = inventory()
    build = build_info(python, timeout=30)
    info = build.info
    kind = (f"cuda {info.get('cuda_version')} cudnn {info.get('cudnn_version')}" if build.is_cuda_build
            else "rocm" if info.get("is_rocm_build") else "cpu") if build.ok else None
    # The path as named, links kept: a virtual environment's python links to the base interpreter,
    # whose TensorFlow is another (or none).
    named = python if os.sep in python else shutil.which(python) or python
    return Stack(os.path.abspath(named), build.tensorflow, gpus.driver, tuple(g.name for g in gpus.gpus),
                 kind, tuple("" if g.compute_capability is None else "{}.{}".format(*g.compute_capability)
                             for g in gpus.gpus))
