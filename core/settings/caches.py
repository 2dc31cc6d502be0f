"""The CUDA kernel cache and XLA's program cache as settings: where each lives, cold or warm.

A warm cache lives in the cache pack of one software and hardware stack (cache_pack.py):
the interpreter, its TensorFlow and build, the XLA flag set, the NVIDIA driver and the GPU
models and compute capabilities. The pack is named by that stack, so a sweep that measured
warm starts and the profile that launches the winner use the same folder (measured =
launched); one folder per profile would make every new profile's first launch cold again
and keep the same kernels many times over. Neither TensorFlow's nor XLA's own cache key
holds the version, the driver or the other flags, so a pack is never used for another key:
when the stack changes a new pack is filled, and the old one is named once (`tflaunch cache
prune` removes it; on a shared folder it may be another node type's).

A cold cache is an empty folder made for each run, so a trial pays the first start's
compilation exactly once, as on a new machine.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ..paths import cache_dir
from . import cache_pack

# CUDA's largest cache (CUDA_CACHE_MAXSIZE's documented maximum). The default, 256 MiB in
# older drivers and 1 GiB in newer ones, is smaller than TensorFlow's kernels for one card,
# so a too-small cache silently compiles again on every start.
CUDA_CACHE_BYTES = 4 * 1024 ** 3
XLA_CACHE_FLAG = "--tf_xla_persistent_cache_directory"
XLA_READ_ONLY_FLAG = "--tf_xla_persistent_cache_read_only=true"
# XLA's per-fusion autotune cache (GPU). The mode takes the enum's name: "update" aborts the
# process on TensorFlow 2.21 (checked), AUTOTUNE_CACHE_MODE_UPDATE does not.
AUTOTUNE_DIR_FLAG = "--xla_gpu_per_fusion_autotune_cache_dir"
AUTOTUNE_MODE_FLAG = "--xla_gpu_experimental_autotune_cache_mode"
# The flags that say where a cache is: not part of the flag set a pack is keyed by.
LOCATION_FLAGS = ("--tf_xla_persistent_cache", AUTOTUNE_DIR_FLAG, AUTOTUNE_MODE_FLAG)
# TensorFlow's log of each lookup in the persistent cache (checked on 2.21: "Try loading
# serialized cache entry", "Loading cached entry for", "Serializing and saving cache entry";
# device_compilation_cache, which older notes name, logs nothing there).
HIT_LOG_MODULE = "device_executable_persistor=1"
STAMP = cache_pack.META
KINDS = ("cuda", "xla", "autotune")


@dataclass(frozen=True)
class Stack:
    """What compiled kernels and XLA programs depend on."""

    python: str  # the interpreter's absolute path, links kept (a virtual environment's own)
    tensorflow: str | None
    driver: str | None
    gpus: tuple[str, ...]  # model names, in index order
    build: str | None = None  # TensorFlow's build: "cpu", or its CUDA and cuDNN
    capabilities: tuple[str, ...] = ()  # each GPU's compute capability, in index order
    xla_flags: tuple[str, ...] = ()  # TF_XLA_FLAGS and XLA_FLAGS, the cache locations left out

    def to_dict(self) -> dict[str, Any]:
        return {"python": self.python, "tensorflow": self.tensorflow, "driver": self.driver, "gpus": list(self.gpus),
                "build": self.build, "capabilities": list(self.capabilities), "xla_flags": list(self.xla_flags)}

    def with_flags(self, flags: tuple[str, ...]) -> Stack:
        return replace(self, xla_flags=tuple(f for f in flags if not f.startswith(LOCATION_FLAGS)))

    @property
    def has_gpu(self) -> bool:
        return bool(self.gpus)

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
        for name, label in (("build", "TensorFlow build"), ("capabilities", "compute capabilities"),
                            ("xla_flags", "XLA flags")):
            was, now = old.get(name), getattr(self, name)
            was, now = (" ".join(v) if isinstance(v, (list, tuple)) else v for v in (was, now))
            if (was or None) != (now or None):
                out.append(f"{label} {was or 'none'} → {now or 'none'}")
        return out


PACKS_ENV = "TFLAUNCH_PACKS_DIR"


def packs_root() -> Path:
    """Where the packs are: TFLAUNCH_PACKS_DIR (a cluster sweep's shared folder, the doctor's
    scratch folder), else the cache folder's packs/."""
    given = os.environ.get(PACKS_ENV)
    return Path(given) if given else cache_dir() / "packs"


def pack_folder(stack: Stack) -> Path:
    """The cache pack of `stack`: one folder per key."""
    return packs_root() / stack.key


def warm_folder(kind: str, stack: Stack) -> Path:
    return pack_folder(stack) / kind


def cold_folder(kind: str) -> Path:
    """This launcher's cold folder of `kind`, emptied before each cold run."""
    return cache_dir() / "cold" / f"{kind}-{os.getpid()}"


def uses_stack(cuda_cache: str | None, xla_cache: bool) -> bool:
    """Whether these settings keep a warm folder, which is named by the stack."""
    return cuda_cache == "warm" or xla_cache


def folders(cuda_cache: str | None, xla_cache: bool, stack: Stack | None) -> dict[str, Path]:
    """{kind: folder} for the caches these settings use; no files are touched. `stack` is
    needed when uses_stack() says so (run.environment.stack_for gives it). On a GPU the XLA
    cache comes with XLA's autotune cache: both keep the first step's compile work."""
    out: dict[str, Path] = {}
    if uses_stack(cuda_cache, xla_cache) and stack is None:
        raise ValueError("a warm cache needs the stack it belongs to")
    if cuda_cache == "cold":
        out["cuda"] = cold_folder("cuda")
    elif cuda_cache == "warm" and stack is not None:
        out["cuda"] = warm_folder("cuda", stack)
    if xla_cache and stack is not None:
        out["xla"] = warm_folder("xla", stack)
        if stack.has_gpu:
            out["autotune"] = warm_folder("autotune", stack)
    return out


def variables(cuda_cache: str | None, xla_cache: bool, stack: Stack | None) -> dict[str, str]:
    """The variables that point CUDA and XLA at their folders. TF_XLA_FLAGS, XLA_FLAGS and
    TF_CPP_VMODULE hold only the entries to add (settings.child joins them to the user's).
    A pack the guard leaves out (cache_pack.state) gets no XLA entry: the run goes on cold."""
    env: dict[str, str] = {}
    where = folders(cuda_cache, xla_cache, stack)
    if "cuda" in where:
        env["CUDA_CACHE_PATH"] = str(where["cuda"])
        env["CUDA_CACHE_MAXSIZE"] = str(CUDA_CACHE_BYTES)
        env["CUDA_CACHE_DISABLE"] = "0"
    if "xla" in where and stack is not None:
        pack = cache_pack.state(pack_folder(stack))
        if pack.usable:
            env["TF_XLA_FLAGS"] = " ".join([f"{XLA_CACHE_FLAG}={where['xla']}",
                                            *([XLA_READ_ONLY_FLAG] if pack.read_only else [])])
            env["TF_CPP_VMODULE"] = HIT_LOG_MODULE
            if "autotune" in where:
                mode = "AUTOTUNE_CACHE_MODE_READ" if pack.read_only else "AUTOTUNE_CACHE_MODE_UPDATE"
                env["XLA_FLAGS"] = f"{AUTOTUNE_DIR_FLAG}={where['autotune']} {AUTOTUNE_MODE_FLAG}={mode}"
    return env


def prepare(cuda_cache: str | None, xla_cache: bool, stack: Stack | None) -> list[str]:
    """Make the folders ready right before a child starts: a cold one empty, a pack made and
    checked (cache_pack.repair); other stacks' packs of this interpreter named once. What was
    done, and why."""
    notes: list[str] = []
    where = folders(cuda_cache, xla_cache, stack)
    if where.get("cuda") is not None and where["cuda"].parent.name == "cold":
        shutil.rmtree(where["cuda"], ignore_errors=True)
        where["cuda"].mkdir(parents=True, exist_ok=True)
        _remove_orphans(where["cuda"].parent)
    if stack is None or not uses_stack(cuda_cache, xla_cache):
        return notes
    pack = pack_folder(stack)
    notes += _other_stacks(stack)
    condition = cache_pack.state(pack)
    if not condition.usable:
        return [*notes, f"The cache pack is not used for this run, which starts cold: {condition.why}."]
    if condition.read_only:
        notes.append(f"The cache pack is read-only for this run: {condition.why}.")
    try:
        for folder in where.values():
            if folder.parent == pack:
                folder.mkdir(parents=True, exist_ok=True)
        if cache_pack.read_meta(pack) is None:
            cache_pack.write_meta(pack, cache_pack.new_meta(stack.to_dict()))
    except OSError as exc:
        if not condition.read_only:
            notes.append(f"The cache pack {pack} could not be made ({exc.strerror or exc}): this run starts cold.")
        return notes
    if not condition.read_only:
        notes += cache_pack.repair(pack)
    return notes


def size_of(folder: Path) -> int:
    """Bytes in a cache folder (0 when it is not there)."""
    return cache_pack.size_of(folder)


def _other_stacks(stack: Stack) -> list[str]:
    """Packs this interpreter filled for another key: never used for this one, named once."""
    notes = []
    root = packs_root()
    for folder in sorted(root.iterdir()) if root.is_dir() else ():
        if folder.name == stack.key:
            continue
        meta = cache_pack.read_meta(folder)
        old = (meta or {}).get("key")
        if not isinstance(old, dict) or old.get("python") != stack.python or meta is None:
            continue  # not ours, or another interpreter's: not ours to judge
        if stack.key in (meta.get("named_for") or []):
            continue
        meta["named_for"] = [*(meta.get("named_for") or []), stack.key][-20:]
        cache_pack.write_meta(folder, meta)
        changes = "; ".join(stack.changes_from(old)) or "another stack"
        notes.append(f"The cache pack {folder.name} of {stack.python} is not used: it was filled for another "
                     f"stack ({changes}), and a pack never crosses its key. The next start fills a new one; "
                     "`tflaunch cache prune --stale` removes the old.")
    return notes


def _remove_orphans(cold_root: Path) -> None:
    """Cold folders of launchers that have ended (a cold cache can hold gigabytes)."""
    import psutil  # here, not for the window's first frame, which only imports this module

    for folder in cold_root.glob("*-*"):
        pid = folder.name.rsplit("-", 1)[-1]
        if pid.isdigit() and int(pid) != os.getpid() and not psutil.pid_exists(int(pid)):
            shutil.rmtree(folder, ignore_errors=True)
