"""The CUDA kernel cache and XLA's program cache as settings: where each lives, cold or warm.

A warm cache is a folder tflaunch keeps for one software and hardware stack: the
interpreter, its TensorFlow, the NVIDIA driver and the GPU models. The folder is named by
that stack, so a sweep that measured warm starts and the profile that launches the winner
use the same folder (measured = launched); one folder per profile would make every new
profile's first launch cold again and keep the same kernels many times over. When the
driver, TensorFlow or the GPUs change, compiled kernels and programs no longer match:
`prepare` removes the folders of that interpreter's older stacks and says why.

A cold cache is an empty folder made for each run, so a trial pays the first start's
compilation exactly once, as on a new machine.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..paths import cache_dir

# CUDA's largest cache (CUDA_CACHE_MAXSIZE's documented maximum). The default, 256 MiB in
# older drivers and 1 GiB in newer ones, is smaller than TensorFlow's kernels for one card,
# so a too-small cache silently compiles again on every start.
CUDA_CACHE_BYTES = 4 * 1024 ** 3
XLA_CACHE_FLAG = "--tf_xla_persistent_cache_directory"
STAMP = "stamp.json"
KINDS = ("cuda", "xla")


@dataclass(frozen=True)
class Stack:
    """What compiled kernels and XLA programs depend on."""

    python: str  # the interpreter's real path
    tensorflow: str | None
    driver: str | None
    gpus: tuple[str, ...]  # model names, in index order

    def to_dict(self) -> dict[str, Any]:
        return {"python": self.python, "tensorflow": self.tensorflow, "driver": self.driver, "gpus": list(self.gpus)}

    @property
    def key(self) -> str:
        return hashlib.sha1(json.dumps(self.to_dict(), sort_keys=True).encode()).hexdigest()[:16]

    def changes_from(self, old: dict[str, Any]) -> list[str]:
        """What changed since `old` (a stored stamp), in words."""
        out = []
        for name, label in (("tensorflow", "TensorFlow"), ("driver", "NVIDIA driver")):
            if old.get(name) != getattr(self, name):
                out.append(f"{label} {old.get(name) or 'none'} → {getattr(self, name) or 'none'}")
        if list(old.get("gpus") or []) != list(self.gpus):
            out.append(f"GPUs {', '.join(old.get('gpus') or []) or 'none'} → {', '.join(self.gpus) or 'none'}")
        return out


def warm_folder(kind: str, stack: Stack) -> Path:
    return cache_dir() / kind / stack.key


def cold_folder(kind: str) -> Path:
    """This launcher's cold folder of `kind`, emptied before each cold run."""
    return cache_dir() / "cold" / f"{kind}-{os.getpid()}"


def uses_stack(cuda_cache: str | None, xla_cache: bool) -> bool:
    """Whether these settings keep a warm folder, which is named by the stack."""
    return cuda_cache == "warm" or xla_cache


def folders(cuda_cache: str | None, xla_cache: bool, stack: Stack | None) -> dict[str, Path]:
    """{kind: folder} for the caches these settings use; no files are touched. `stack` is
    needed when uses_stack() says so (run.interpreters.stack.current_stack gives it)."""
    out: dict[str, Path] = {}
    if uses_stack(cuda_cache, xla_cache) and stack is None:
        raise ValueError("a warm cache needs the stack it belongs to")
    if cuda_cache == "cold":
        out["cuda"] = cold_folder("cuda")
    elif cuda_cache == "warm" and stack is not None:
        out["cuda"] = warm_folder("cuda", stack)
    if xla_cache and stack is not None:
        out["xla"] = warm_folder("xla", stack)
    return out


def variables(cuda_cache: str | None, xla_cache: bool, stack: Stack | None) -> dict[str, str]:
    """The variables that point CUDA and XLA at their folders (TF_XLA_FLAGS' entry alone)."""
    env: dict[str, str] = {}
    where = folders(cuda_cache, xla_cache, stack)
    if "cuda" in where:
        env["CUDA_CACHE_PATH"] = str(where["cuda"])
        env["CUDA_CACHE_MAXSIZE"] = str(CUDA_CACHE_BYTES)
        env["CUDA_CACHE_DISABLE"] = "0"
    if "xla" in where:
        env["TF_XLA_FLAGS"] = f"{XLA_CACHE_FLAG}={where['xla']}"
    return env


def prepare(cuda_cache: str | None, xla_cache: bool, stack: Stack | None) -> list[str]:
    """Make the folders ready right before a child starts: a cold one empty, a warm one
    stamped; older stacks' folders of this interpreter removed. What was removed, and why."""
    notes: list[str] = []
    for kind, folder in folders(cuda_cache, xla_cache, stack).items():
        if folder.parent.name == "cold":
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir(parents=True, exist_ok=True)
            _remove_orphans(folder.parent)
            continue
        assert stack is not None  # folders() refused a warm folder without one
        notes += _remove_stale(kind, stack)
        folder.mkdir(parents=True, exist_ok=True)
        stamp = folder / STAMP
        if not stamp.exists():
            stamp.write_text(json.dumps(stack.to_dict(), indent=2), encoding="utf-8")
    return notes


def size_of(folder: Path) -> int:
    """Bytes in a cache folder (0 when it is not there)."""
    total = 0
    for root, _dirs, files in os.walk(folder):
        for name in files:
            try:
                total += os.path.getsize(os.path.join(root, name))
            except OSError:
                pass
    return total


def _remove_stale(kind: str, stack: Stack) -> list[str]:
    notes = []
    parent = cache_dir() / kind
    for folder in parent.glob("*") if parent.is_dir() else ():
        if folder.name == stack.key:
            continue
        try:
            old = json.loads((folder / STAMP).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue  # not a folder of ours: left alone
        if not isinstance(old, dict) or old.get("python") != stack.python:
            continue
        shutil.rmtree(folder, ignore_errors=True)
        label = "CUDA kernel cache" if kind == "cuda" else "XLA program cache"
        notes.append(f"The {label} for {stack.python} was emptied: {'; '.join(stack.changes_from(old))}. "
                     "The next start compiles again.")
    return notes


def _remove_orphans(cold_root: Path) -> None:
    """Cold folders of launchers that have ended (a cold cache can hold gigabytes)."""
    for folder in cold_root.glob("*-*"):
        pid = folder.name.rsplit("-", 1)[-1]
        if pid.isdigit() and int(pid) != os.getpid() and not _alive(int(pid)):
            shutil.rmtree(folder, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
