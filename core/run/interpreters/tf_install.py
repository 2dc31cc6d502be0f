"""Where an interpreter's TensorFlow and Keras are installed, asked without importing them.

A cold start evicts these folders' files too: `import tensorflow` reads hundreds of MB of
shared libraries, which after a reboot come from storage. The interpreter is asked once
per launcher (find_spec reads no package code), the answer kept by its real path.
"""

from __future__ import annotations

import functools
import os

from .interpreter import answer_of, ask

# The packages `import tensorflow` and `import keras` read most of (nvidia: the CUDA wheels
# TensorFlow's GPU build loads at import).
PACKAGES = ("tensorflow", "keras", "tf_keras", "nvidia", "tensorflow_io_gcs_filesystem", "ml_dtypes", "h5py")
LOCATE_CODE = "PACKAGES = " + repr(PACKAGES) + r"""
import importlib.util, json
out = {}
for name in PACKAGES:
    try:
        spec = importlib.util.find_spec(name)
    except Exception:
        spec = None
    if spec is not None:
        out[name] = list(spec.submodule_search_locations or [])
print(json.dumps({"folders": out}))
"""


def installation(python: str) -> dict[str, list[str]] | str:
    """{package: its folders} of `python`'s TensorFlow and Keras, or why it cannot be said."""
    # abspath, never realpath: a venv's python is a link to the base interpreter, which has other packages.
    return _installation(os.path.abspath(python) if os.sep in python else python)


@functools.lru_cache(maxsize=16)
def _installation(python: str) -> dict[str, list[str]] | str:
    asked = ask(python, LOCATE_CODE, timeout=30)
    if isinstance(asked, str):
        return asked
    data = answer_of(python, asked.exit_code, asked.stdout, asked.stderr)
    if isinstance(data, str):
        return data
    folders = data.get("folders")
    if not isinstance(folders, dict):
        return f"{python} gave an unexpected answer about where TensorFlow is installed."
    return {str(name): [str(f) for f in paths if isinstance(f, str) and os.path.isdir(f)]
            for name, paths in folders.items() if isinstance(paths, list)}


def files_under(folders: list[str]) -> list[str]:
    """Every regular file under the folders (links not followed: an installation's own files)."""
    out = []
    for folder in folders:
        for root, _, names in os.walk(folder):
            for name in names:
                path = os.path.join(root, name)
                if os.path.isfile(path) and not os.path.islink(path):
                    out.append(path)
    return out
