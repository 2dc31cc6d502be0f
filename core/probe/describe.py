"""What was measured: the environment the run had and the model it loaded."""

from __future__ import annotations

import contextlib
import os
import platform
import sys
from typing import Any

from .inference import Inputs, Specs
from .model_files import model_format


def cpu_model() -> str:
    with contextlib.suppress(OSError), open("/proc/cpuinfo") as f:
        names = [line.split(":", 1)[1].strip() for line in f if line.startswith("model name")]
        if names:
            return names[0]
    return platform.processor() or platform.machine()


def environment(tf: Any, keras: Any) -> dict[str, Any]:
    gpus = []
    for gpu in tf.config.list_physical_devices("GPU"):
        details = tf.config.experimental.get_device_details(gpu)
        try:
            peak = tf.config.experimental.get_memory_info(gpu.name.replace("physical_device:", ""))["peak"]
        except (ValueError, RuntimeError):
            peak = None
        gpus.append({"name": gpu.name, "model": details.get("device_name", ""),
                     "compute_capability": details.get("compute_capability"),
                     "allocator_peak": peak})
    driver = None
    with contextlib.suppress(OSError), open("/proc/driver/nvidia/version") as f:
        driver = f.readline().strip()
    build = tf.sysconfig.get_build_info()
    return {"tensorflow": tf.__version__, "keras": getattr(keras, "__version__", ""),
            "python": platform.python_version(), "executable": sys.executable,
            "platform": platform.platform(), "cpu": cpu_model(), "cores": os.cpu_count(),
            "gpus": gpus, "driver": driver, "cuda": build.get("cuda_version"),
            "cudnn": build.get("cudnn_version")}


def describe(model: Any, spec: str, specs: Specs, inputs: Inputs) -> dict[str, Any]:
    if hasattr(model, "count_params"):
        params = int(model.count_params())
    else:
        params = int(sum(v.shape.num_elements() or 0 for v in getattr(model, "variables", [])))
    fmt, size = "sample", None
    if not spec.startswith("sample:"):
        path = os.path.abspath(os.path.expanduser(spec))
        fmt = model_format(path) or "unknown"
        files = os.walk(path) if os.path.isdir(path) else [(os.path.dirname(path), [], [os.path.basename(path)])]
        size = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in files for f in fs)
    names = [None] * len(specs[0]) + list(specs[1])
    all_specs = list(specs[0]) + list(specs[1].values())
    fed = list(inputs[0]) + list(inputs[1].values())
    return {"name": getattr(model, "name", None) or os.path.basename(spec.rstrip("/")), "source": spec,
            "format": fmt, "params": params, "bytes_on_disk": size,
            "inputs": [{"name": n or s.name, "shape": list(s.shape), "dtype": s.dtype.name,
                        "fed_shape": list(t.shape)} for n, s, t in zip(names, all_specs, fed)]}
