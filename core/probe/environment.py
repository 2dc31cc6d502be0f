"""The environment a run had: TensorFlow, Python, the machine's CPU and GPUs, the driver and
the CUDA build. Described alike for a model (model/runner.py) and an observed program
(observer/observe_install.py), so a program's summary names its GPUs as a model's does.
Standard library only, Python 3.8."""

from __future__ import annotations

import contextlib
import os
import platform
import sys
from typing import Any


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
            "cudnn": build.get("cudnn_version"), "cuda_build": bool(build.get("is_cuda_build")),
            "capabilities": [str(c) for c in build.get("cuda_compute_capabilities") or []]}
