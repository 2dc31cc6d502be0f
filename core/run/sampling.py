"""Memory of a running child: RSS of its process tree and its GPU memory, per sample."""

from __future__ import annotations

import time

from .gpus.nvml import GpuMemorySampler
from .process_tree import TreeSampler
from .warm.warm_servers import is_warm_server


class ResourceSampler:
    """One child's memory, read the same way by every driver."""

    def __init__(self, pid: int, gpus: GpuMemorySampler | None = None) -> None:
        self.pid = pid
        # A warm launch that starts its server has the server as its child until it ends:
        # the server's import of TensorFlow is not the script's memory (the script, forked
        # from it, is followed as a root of its own).
        self._tree = TreeSampler(pid, apart=is_warm_server)
        self._gpus = gpus if gpus is not None and gpus.available else None

    def follow(self, pid: int) -> None:
        """Count `pid`'s tree as part of this child's (its warm-started script)."""
        self._tree.add_root(pid)

    def sample(self) -> tuple[int, dict[int, int]] | None:
        """(tree RSS in bytes, {gpu index: bytes}); None once the child is gone."""
        rss = self._tree.rss(time.monotonic())
        if rss is None:
            return None
        gpu = self._gpus.sample(self._tree.pids()) if self._gpus is not None else {}
        return rss, gpu
