"""Which TF_XLA_FLAGS and XLA_FLAGS entries the installed TensorFlow knows, found without importing it.

TensorFlow kills the whole process on an unknown entry in TF_XLA_FLAGS ("Unknown flags
in TF_XLA_FLAGS") or XLA_FLAGS ("Unknown flag in XLA_FLAGS"), so flags are checked before a
launch. The flag names are string
constants in TensorFlow's shared libraries; scanning them takes seconds for a 1 GB
library, so the answer is cached under the libraries' paths, sizes and times.
"""

from __future__ import annotations

import glob
import importlib.util
import json
import os
import re
from typing import Optional

# tf_xla_* (TF_XLA_FLAGS) and xla_* (XLA_FLAGS, such as the GPU autotune cache's). Two patterns
# that start with a literal: one with an optional "tf_" in front made re give up its fast
# literal search and took 20 s over TensorFlow's libraries instead of 1 s (measured, TF 2.21).
_TF_FLAG = re.compile(rb"tf_xla_[a-z0-9_]+")
_XLA_FLAG = re.compile(rb"xla_[a-z0-9_]+")
_KEY_VERSION = "2"  # the names found: tf_xla_ alone before
_CHUNK = 1 << 24


def _libraries() -> list[str]:
    spec = importlib.util.find_spec("tensorflow")
    if spec is None or not spec.submodule_search_locations:
        return []
    folder = list(spec.submodule_search_locations)[0]
    return sorted(glob.glob(os.path.join(folder, "libtensorflow*.so*")))


def _scan(path: str) -> set[str]:
    found: set[str] = set()
    with open(path, "rb") as f:
        tail = b""
        while chunk := f.read(_CHUNK):
            data = tail + chunk
            found.update(m.decode() for m in _TF_FLAG.findall(data))
            # An xla_ name that is the end of a tf_xla_ one is not an XLA_FLAGS name.
            found.update(m.group().decode() for m in _XLA_FLAG.finditer(data)
                         if data[max(0, m.start() - 3):m.start()] != b"tf_")
            tail = data[-64:]
    return found


def known_flags(cache_file: Optional[str] = None) -> Optional[list[str]]:
    """Sorted flag names of the installed TensorFlow; None where its libraries are not found."""
    libraries = _libraries()
    if not libraries:
        return None
    key = json.dumps([_KEY_VERSION, *[(p, os.path.getsize(p), os.path.getmtime(p)) for p in libraries]])
    cached: dict[str, list[str]] = {}
    if cache_file:
        try:
            with open(cache_file, encoding="utf-8") as f:
                cached = json.load(f)
        except (OSError, ValueError):
            cached = {}
        if isinstance(cached, dict) and isinstance(cached.get(key), list):
            return cached[key]
    flags: set[str] = set()
    for path in libraries:
        flags |= _scan(path)
    result = sorted(flags)
    if cache_file:
        try:
            os.makedirs(os.path.dirname(cache_file), exist_ok=True)
            tmp = f"{cache_file}.{os.getpid()}.tmp"
            with open(tmp, "w", encoding="utf-8") as f:
                json.dump({key: result}, f)
            os.replace(tmp, cache_file)
        except OSError:
            pass  # a cache that cannot be written only costs the next scan
    return result
