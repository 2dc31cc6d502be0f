"""The user's own code, run only when they ask: modules imported before load (--import, so
registered custom layers can be found) and a model built by a function (--model FILE.py:FN).
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from typing import Any, List, Tuple

from ..failure import ProbeFailure, first_line


def is_file(target: str) -> bool:
    return target.endswith(".py") or os.sep in target


def import_code(target: str) -> Any:
    """Import a module by name (my_layers, pkg.layers) or a .py file by path."""
    try:
        if not is_file(target):
            return importlib.import_module(target)
        path = os.path.abspath(os.path.expanduser(target))
        if not os.path.isfile(path):
            raise ProbeFailure("import_failed", f"--import {target}: there is no such file. Give a .py file "
                               "or the name of a module installed in that environment.")
        name = os.path.splitext(os.path.basename(path))[0]
        # Its folder goes on sys.path first, as `python file.py` would do, so its own
        # sibling imports work.
        sys.path.insert(0, os.path.dirname(path))
        spec = importlib.util.spec_from_file_location(name, path)
        if spec is None or spec.loader is None:
            raise ProbeFailure("import_failed", f"--import {target}: Python cannot load this file.")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
        return module
    except ProbeFailure:
        raise
    except Exception as exc:
        raise ProbeFailure("import_failed", f"--import {target} failed: {type(exc).__name__}: "
                           f"{first_line(exc)}. Fix the module or check its name.") from exc


def split_builder(spec: str) -> Tuple[str, str]:
    """'models/net.py:build' -> ('models/net.py', 'build')."""
    path, _, function = spec.rpartition(":")
    return path, function


def build_model(spec: str) -> Any:
    path, function = split_builder(spec)
    module = import_code(path)
    builder = getattr(module, function, None)
    if not callable(builder):
        found: List[str] = sorted(n for n, v in vars(module).items() if callable(v) and not n.startswith("_")
                                  and getattr(v, "__module__", None) == module.__name__)
        raise ProbeFailure("model_load_failed", f"{path} has no function {function}(); it defines "
                           f"{', '.join(found) or 'no functions'}. Use --model {path}:FUNCTION.")
    try:
        model = builder()
    except Exception as exc:
        raise ProbeFailure("model_load_failed", f"{spec}() raised {type(exc).__name__}: {first_line(exc)}") from exc
    if model is None or not callable(model):
        raise ProbeFailure("model_load_failed", f"{spec}() returned {type(model).__name__}, not a model; "
                           "return a Keras model or a tf.Module with signatures.")
    return model
