"""TensorFlow in the child: importing it, applying the tf.config settings, reading them back.

The environment (TF_* variables, CUDA_VISIBLE_DEVICES, the user's extra variables) is
built by the launcher before exec and is never changed here. What only code can set
(threads, memory growth, memory limits) is applied by `apply_tf_config`, the same
function `tflaunch run --profile` applies to a user's script through its launch hook.
"""

from __future__ import annotations

import os
import sys
import time
from typing import Any, Dict, Tuple

from .failure import ProbeFailure

# The tf.config part of a configuration: the keys the launch hook receives.
TF_CONFIG_KEYS = ("intra", "inter", "memory_growth", "memory_limit_mb", "grappler")
# What each word of the grappler setting asks of tf.config.optimizer.set_experimental_options.
GRAPPLER_OPTIONS: Dict[str, Dict[str, bool]] = {
    "light": {"constant_folding": False, "arithmetic_optimization": False, "remapping": False,
              "layout_optimizer": False, "loop_optimization": False, "dependency_optimization": False},
    "off": {"disable_meta_optimizer": True},
}


def import_tensorflow() -> tuple[Any, Any]:
    try:
        import tensorflow as tf
    except ModuleNotFoundError as exc:
        if exc.name not in ("tensorflow", None):
            raise
        raise ProbeFailure(
            "no_tensorflow",
            f"The interpreter {sys.executable} has no TensorFlow. Install it with: "
            f"{sys.executable} -m pip install tensorflow") from None
    except ImportError as exc:
        raise ProbeFailure(
            "tensorflow_broken",
            f"TensorFlow is installed for {sys.executable} but fails to import ({exc}). "
            "Reinstall it in that environment.") from None
    try:
        import keras
    except ImportError:
        keras = tf.keras
    return tf, keras


def apply_tf_config(tf: Any, cfg: dict[str, Any]) -> None:
    """Apply the settings only code can make. Must run before TensorFlow initialises its
    devices (the first op or list_logical_devices), as in the probe and the launch hook."""
    if cfg.get("intra"):
        tf.config.threading.set_intra_op_parallelism_threads(int(cfg["intra"]))
    if cfg.get("inter"):
        tf.config.threading.set_inter_op_parallelism_threads(int(cfg["inter"]))
    if cfg.get("grappler") in GRAPPLER_OPTIONS:
        tf.config.optimizer.set_experimental_options(GRAPPLER_OPTIONS[cfg["grappler"]])
    if not cfg.get("memory_growth") and not cfg.get("memory_limit_mb"):
        return  # listing the GPUs initialises the driver: not for nothing, and not before the program does
    for gpu in tf.config.list_physical_devices("GPU"):
        if cfg.get("memory_growth"):
            tf.config.experimental.set_memory_growth(gpu, True)
        if cfg.get("memory_limit_mb"):
            limit = tf.config.LogicalDeviceConfiguration(memory_limit=int(cfg["memory_limit_mb"]))
            tf.config.set_logical_device_configuration(gpu, [limit])


def initialise_devices(tf: Any, cfg: Dict[str, Any]) -> Tuple[Dict[str, Any], Dict[str, float]]:
    """The devices phase: apply the settings, initialise the devices, read everything back.

    With GPUs it is timed in the parts a user can act on: `discovery` (the first
    list_physical_devices: driver initialisation and device discovery; seconds without
    persistence mode), `settings` (the tf.config calls) and `contexts` (the first
    list_logical_devices: a CUDA context and an allocator for every visible GPU, which grows
    with the number of GPUs and reserves memory unless growth or a limit is set). Without a
    GPU, parts is empty: discovery is then a failed driver lookup of a few milliseconds."""
    start = time.perf_counter()
    gpus = tf.config.list_physical_devices("GPU")
    found = time.perf_counter()
    apply_tf_config(tf, cfg)
    applied_at = time.perf_counter()
    tf.config.list_logical_devices()
    ready = time.perf_counter()
    parts = {"discovery": found - start, "settings": applied_at - found, "contexts": ready - applied_at}
    return read_back(tf, cfg), (parts if gpus else {})


def read_back(tf: Any, cfg: dict[str, Any]) -> dict[str, Any]:
    """Every setting as this process sees it, after TensorFlow initialised its devices."""
    gpus = tf.config.list_physical_devices("GPU")
    logical = tf.config.list_logical_devices()
    limits = {g.name: [c.memory_limit for c in tf.config.get_logical_device_configuration(g) or []] for g in gpus}
    env = os.environ
    return {
        "intra_op_threads": tf.config.threading.get_intra_op_parallelism_threads(),
        "inter_op_threads": tf.config.threading.get_inter_op_parallelism_threads(),
        "xla_flags": env.get("TF_XLA_FLAGS", "") or "none",
        "grappler": {k: v for k, v in tf.config.optimizer.get_experimental_options().items()
                     if k in GRAPPLER_OPTIONS["light"] or k == "disable_meta_optimizer"} or "default",
        "jit_compile": bool(cfg.get("jit_compile")),
        "onednn": env.get("TF_ENABLE_ONEDNN_OPTS", "default"),
        "log_level": env.get("TF_CPP_MIN_LOG_LEVEL", "default"),
        "visible_gpus": env.get("CUDA_VISIBLE_DEVICES", "all") if gpus else "no GPU",
        "gpus": [g.name for g in gpus],
        "memory_growth": {g.name: tf.config.experimental.get_memory_growth(g) for g in gpus} or "no GPU",
        "memory_limit_mb": limits or "no GPU",
        "allocator": env.get("TF_GPU_ALLOCATOR", "default (BFC)"),
        "cudnn_autotune": env.get("TF_CUDNN_USE_AUTOTUNE", "default"),
        "module_loading": env.get("CUDA_MODULE_LOADING", "default"),
        "cuda_cache": env.get("CUDA_CACHE_PATH", "default"),
        "cuda_cache_maxsize": env.get("CUDA_CACHE_MAXSIZE", "default"),
        "extra_env": {k: env.get(k) for k in (cfg.get("extra_env") or {})},
        "logical_devices": [d.name for d in logical],
    }
