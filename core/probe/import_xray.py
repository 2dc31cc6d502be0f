"""The import X-ray: what `import tensorflow` spent, module by module, and why.

While active, every first import of a module in the main thread is timed at the same place
CPython's `-X importtime` times it (``importlib._bootstrap._find_and_load``, which the
interpreter looks up on each import), so nesting gives self and cumulative time per module.
It is on for every run, so it must be cheap: measured on `import tensorflow` (3,300
imports) it costs a few milliseconds, within the noise of the import itself, where
`-X importtime` would also write every later import of the run to stderr.

Stdlib only: the probe runs in any interpreter with TensorFlow. The report carries facts
(times, counts, versions, bytes read); tflaunch turns them into advice
(tflaunch.core.report.imports).
"""

from __future__ import annotations

import os
import sys
import threading
import time
from typing import Any, Callable, Dict, List, Optional, Tuple

# Packages whose modules are checked for compiled bytecode (.pyc) files.
CHECKED_PACKAGES = ("tensorflow", "keras", "tf_keras")
# Folded to this many name parts, so a group means something: tensorflow.python.framework,
# keras.src.layers; other packages to their top level (google: the namespace is no package).
_DEPTH = {"tensorflow": 3, "keras": 3, "tf_keras": 3, "tensorboard": 2, "google": 2}
TOP = 15  # groups and packages reported
CHECKED_MODULES = 200  # per package, for compiled bytecode
_NATIVE_SUFFIXES = (".so", ".pyd")

# (module, the module whose import started it or None, self s, cumulative s)
Entry = Tuple[str, Optional[str], float, float]


def group_of(name: str) -> str:
    """The group a module's time is folded into."""
    parts = name.split(".")
    return ".".join(parts[:_DEPTH.get(parts[0], 1)])


def _read_bytes() -> Optional[int]:
    """Bytes this process has had read from storage (page cache misses), where known."""
    try:
        with open("/proc/self/io") as f:
            for line in f:
                if line.startswith("read_bytes:"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return None


class ImportXray:
    """A context that times the imports made inside it; `report()` folds them."""

    def __init__(self, packages: Tuple[str, ...] = CHECKED_PACKAGES) -> None:
        self.packages = packages
        self.entries: List[Entry] = []
        self.total = 0.0
        self.method: Optional[str] = None
        self._bootstrap: Any = None
        self._original: Optional[Callable[..., Any]] = None
        self._started_wall = 0.0
        self._read_before: Optional[int] = None
        self._read_after: Optional[int] = None
        self._inner = [0.0]  # time in nested imports, per level; [0]: all top-level imports

    def __enter__(self) -> ImportXray:
        self._started_wall = time.time()
        self._read_before = _read_bytes()
        bootstrap = sys.modules.get("_frozen_importlib")
        original = getattr(bootstrap, "_find_and_load", None)
        if original is None:  # another implementation: no X-ray, the run goes on
            return self
        main, get_ident, clock = threading.get_ident(), threading.get_ident, time.perf_counter
        entries, inner = self.entries, self._inner
        names: List[Optional[str]] = [None]  # the import in progress, outermost first

        def _find_and_load(name: str, *args: Any, **kwargs: Any) -> Any:
            if get_ident() != main:  # another thread's import would break the nesting
                return original(name, *args, **kwargs)
            parent = names[-1]
            names.append(name)
            inner.append(0.0)
            start = clock()
            try:
                return original(name, *args, **kwargs)
            finally:
                took = clock() - start
                names.pop()
                nested = inner.pop()
                inner[-1] += took
                entries.append((name, parent, took - nested, took))

        self._bootstrap, self._original = bootstrap, original
        setattr(bootstrap, "_find_and_load", _find_and_load)  # noqa: B010 (a module mypy sees as optional)
        self.method = "find_and_load"
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._original is not None:
            self._bootstrap._find_and_load = self._original
            self.total = self._inner[0]
        self._read_after = _read_bytes()

    # -- folding -------------------------------------------------------------------------
    def report(self) -> Dict[str, Any]:
        """What the imports spent, folded (the protocol's ``imports`` event)."""
        groups: Dict[str, List[float]] = {}  # name: [self, cumulative, modules]
        packages: Dict[str, List[float]] = {}  # top-level name: [self, modules]
        native = 0.0
        for name, parent, own, cumulative in self.entries:
            group = group_of(name)
            row = groups.setdefault(group, [0.0, 0.0, 0])
            row[0] += own
            row[2] += 1
            # A group's cumulative time runs from entering it to leaving it: nested imports
            # of its own modules are inside that span already.
            if parent is None or group_of(parent) != group:
                row[1] += cumulative
            package = packages.setdefault(name.split(".")[0], [0.0, 0])
            package[0] += own
            package[1] += 1
            if _is_native(sys.modules.get(name)):
                native += own
        by_cumulative = sorted(groups, key=lambda g: -groups[g][1])[:TOP]
        by_self = sorted(groups, key=lambda g: -groups[g][0])[:TOP]
        chosen = sorted(set(by_cumulative) | set(by_self), key=lambda g: -groups[g][1])
        total = self.total
        read = None if self._read_before is None or self._read_after is None \
            else max(self._read_after - self._read_before, 0)
        return {
            "method": self.method,
            "total": total,
            "modules": len(self.entries),
            "native": native,
            "native_share": min(native / total, 1.0) if total > 0 else 0.0,
            "groups": [{"name": g, "self": groups[g][0], "cumulative": groups[g][1], "modules": int(groups[g][2])}
                       for g in chosen],
            "packages": [{"name": p, "self": v[0], "modules": int(v[1])}
                         for p, v in sorted(packages.items(), key=lambda kv: -kv[1][0])[:TOP]],
            "compiled": {p: c for p in self.packages for c in [self.compiled(p)] if c["modules"]},
            "read_bytes": read,
            "onednn": os.environ.get("TF_ENABLE_ONEDNN_OPTS"),
            "keras": {"keras": _version("keras"), "tf_keras": _version("tf_keras")},
        }

    def compiled(self, package: str) -> Dict[str, Any]:
        """Of `package`'s modules imported here, how many had to be compiled from source:
        `written` were cached by this import (the first run after an install that skipped
        it), `uncached` were compiled and not saved (no write access,
        PYTHONDONTWRITEBYTECODE), so every run pays again. At most CHECKED_MODULES, spread
        over the package, are looked at (`checked`): stat-ing all 2,000 of TensorFlow's
        would add 40 ms to every run, and the share is what matters."""
        from importlib.util import cache_from_source

        sources = {}  # name: source file
        folder = ""
        for name, *_ in self.entries:
            if name != package and not name.startswith(package + "."):
                continue
            spec = getattr(sys.modules.get(name), "__spec__", None)
            origin = getattr(spec, "origin", None)
            if isinstance(origin, str) and origin.endswith(".py"):  # not built in, native or .pyc-only
                sources[name] = origin
                if name == package:
                    folder = os.path.dirname(origin)
        names = sorted(sources)
        sample = names[::max(1, -(-len(names) // CHECKED_MODULES))]
        written = uncached = 0
        for name in sample:
            try:
                source = os.stat(sources[name]).st_mtime
                cached = os.stat(cache_from_source(sources[name])).st_mtime
            except (OSError, NotImplementedError, ValueError):
                uncached += 1
                continue
            if cached >= self._started_wall:
                written += 1
            elif cached < source:
                uncached += 1  # stale and not rewritten: compiled again on every import
        return {"modules": len(names), "checked": len(sample), "written": written, "uncached": uncached,
                "folder": folder}


def _is_native(module: Any) -> bool:
    path = getattr(module, "__file__", None)
    return isinstance(path, str) and path.endswith(_NATIVE_SUFFIXES)


def _version(name: str) -> Optional[str]:
    module = sys.modules.get(name)
    version = getattr(module, "__version__", None) if module is not None else None
    return str(version) if version is not None else None
