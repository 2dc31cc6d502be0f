"""NVTX ranges for the probe's phases, so Nsight Systems shows tflaunch's phases.

Loaded through ctypes from libnvToolsExt (the nvidia-nvtx-cu12 wheel puts it under
site-packages/nvidia/nvtx/lib; a CUDA toolkit under its lib64), so the probe needs no
package of its own. Nothing is loaded unless the run asked for ranges.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import glob
import os
import sys
from typing import Any, List, Optional

_NAMES = ("libnvToolsExt.so.1", "libnvToolsExt.so")


def _candidates() -> List[str]:
    found: List[str] = []
    for entry in sys.path:
        found += sorted(glob.glob(os.path.join(entry, "nvidia", "nvtx", "lib", "libnvToolsExt.so*")))
    for root in filter(None, (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda")):
        found += sorted(glob.glob(os.path.join(root, "lib64", "libnvToolsExt.so*")))
    system = ctypes.util.find_library("nvToolsExt")
    return found + ([system] if system else []) + list(_NAMES)


class Ranges:
    """push/pop of named ranges; without the library, both do nothing and `status` says why."""

    def __init__(self, enabled: bool) -> None:
        self._lib: Optional[Any] = None
        self.status = "off"
        if not enabled:
            return
        for name in _candidates():
            try:
                lib = ctypes.CDLL(name)
                lib.nvtxRangePushA.argtypes = [ctypes.c_char_p]
                lib.nvtxRangePop.argtypes = []
            except (OSError, AttributeError):
                continue
            self._lib, self.status = lib, f"on ({name})"
            return
        self.status = ("unavailable: libnvToolsExt was not found in this environment; install it with "
                       f"{sys.executable} -m pip install nvidia-nvtx-cu12")

    def push(self, name: str) -> None:
        if self._lib is not None:
            self._lib.nvtxRangePushA(f"tflaunch:{name}".encode())

    def pop(self) -> None:
        if self._lib is not None:
            self._lib.nvtxRangePop()
