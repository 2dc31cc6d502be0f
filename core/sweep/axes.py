"""What a sweep can vary, as a user types it, and how one value of each becomes settings.

The command line's --vary, the app's Vary box and the stored plans all go through here.
"""

from __future__ import annotations

from collections.abc import Callable

from ..probe.input_shapes import parse_shape, spec_text
from ..run.formats import FORMATS
from ..settings.config import MAX_THREADS, LaunchConfig
from ..settings.vocabulary import (
    ALLOCATORS,
    CACHE_STATES,
    MODULE_LOADING,
    PAGE_CACHE_STATES,
    parse_switch,
    parse_tristate,
)
from .instances import INSTANCES_HELP

MAX_BATCH = 1 << 20  # as LaunchConfig.validate allows
WORD_AXES: dict[str, tuple[str, ...]] = {"allocator": tuple(ALLOCATORS), "cuda_cache": tuple(CACHE_STATES),
                                         "module_loading": tuple(MODULE_LOADING)}

# The settings a sweep can vary: what each takes, as a user types it, and the values the
# app offers first.
AXES: dict[str, tuple[str, str]] = {
    "intra": ("intra-op threads: 0 (default), 1, 2, ...", "1,2"),
    "inter": ("inter-op threads: 0 (default), 1, 2, ...", "1,2"),
    "xla_auto": ("XLA auto-clustering: on, off", "off,on"),
    "jit_compile": ("compile the model with XLA (measurement only): on, off", "off,on"),
    "onednn": ("oneDNN: default, on, off", "default,off"),
    "memory_growth": ("GPU memory growth: on, off (TF_FORCE_GPU_ALLOW_GROWTH)", "off,on"),
    "memory_limit": ("per-GPU memory limit in MiB, or none (tf.config LogicalDeviceConfiguration)", "none,4096"),
    "allocator": ("GPU allocator: bfc, cuda_malloc_async, default (TF_GPU_ALLOCATOR)", "bfc,cuda_malloc_async"),
    "cuda_cache": ("CUDA kernel cache: cold, warm, default (CUDA_CACHE_PATH, CUDA_CACHE_MAXSIZE)", "cold,warm"),
    "page_cache": ("page cache at the start: " + ", ".join(PAGE_CACHE_STATES) + " (cold evicts the model and "
                   "TensorFlow's files before each trial)", "warm,cold"),
    "xla_cache": ("XLA program cache: off, on (TF_XLA_FLAGS=--tf_xla_persistent_cache_directory)", "off,on"),
    "cudnn_autotune": ("cuDNN autotuning: on, off, default (TF_CUDNN_USE_AUTOTUNE)", "on,off"),
    "module_loading": ("CUDA module loading: lazy, eager, default (CUDA_MODULE_LOADING)", "lazy,eager"),
    "gpus": ("visible GPUs: all, none, 0, 0+1, ...", "all"),
    "instances": (INSTANCES_HELP, "1,2,4"),
    "batch": ("batch size: 1, 2, ...", "1,8"),
    "format": ("model format: " + ", ".join(FORMATS) + " (converted once, cached)", ",".join(FORMATS)),
    "env.NAME": ("an extra environment variable NAME: any values", ""),
    "input.NAME": ("the shape fed to input NAME, without the batch: 224x224x3, 320x320x3, ...", ""),
}


def axes_help() -> str:
    return "; ".join(f"{name} ({text})" for name, (text, _) in AXES.items())


class PlanError(ValueError):
    """A sweep plan that cannot run; the message names the axis or value."""


def apply_value(config: LaunchConfig, axis: str, text: str, model_for_format: Callable[[str], str]) -> LaunchConfig:
    """The config with one axis set to one value, given as the user typed it."""
    if axis in ("intra", "inter", "batch"):
        # The launch check's own bounds, said here in the plan's words before it would say them in its own.
        low, high = (1, MAX_BATCH) if axis == "batch" else (0, MAX_THREADS)
        if not text.isdigit() or not low <= int(text) <= high:
            raise ValueError(f"use a whole number from {low} to {high}")
        return config.replace(**{axis: int(text)})
    if axis in ("xla_auto", "jit_compile", "memory_growth", "xla_cache"):
        return config.replace(**{axis: parse_switch(text)})
    if axis in ("onednn", "cudnn_autotune"):
        return config.replace(**{axis: parse_tristate(text)})
    if axis == "page_cache":
        if text.lower() not in PAGE_CACHE_STATES:
            raise ValueError(f"use one of {', '.join(PAGE_CACHE_STATES)}")
        return config.replace(page_cache=text.lower())
    if axis in WORD_AXES:
        choices = WORD_AXES[axis]
        if text.lower() not in (*choices, "default"):
            raise ValueError(f"use one of {', '.join(choices)} or default")
        return config.replace(**{axis: None if text.lower() == "default" else text.lower()})
    if axis == "memory_limit":
        if text.lower() == "none":
            return config.replace(memory_limit_mb=None)
        if not text.isdigit() or int(text) <= 0:
            raise ValueError("use a whole number of MiB above 0, or none")
        return config.replace(memory_limit_mb=int(text))
    if axis == "gpus":
        if text in ("all", "none"):
            return config.replace(visible_gpus=None if text == "all" else ())
        indices = text.split("+")
        if not all(i.isdigit() for i in indices):
            raise ValueError("use all, none, or GPU numbers joined by +, such as 0+1")
        return config.replace(visible_gpus=tuple(int(i) for i in indices))
    if axis.startswith("env."):
        return config.replace(extra_env={**config.extra_env, axis[4:]: text})
    if axis.startswith("input."):
        name = axis[len("input."):]
        dims, dtype = parse_shape(text, name)  # InputSpecError is a ValueError: the plan names it
        return config.replace(inputs={**config.inputs, name: spec_text(dims, dtype)})
    if axis == "format":
        if text not in FORMATS:
            raise ValueError(f"use one of {', '.join(FORMATS)}")
        return config.replace(model=model_for_format(text))
    hint = " (XLA is two settings now: xla_auto and jit_compile)" if axis == "xla" else ""
    raise PlanError(f"tflaunch cannot vary '{axis}'{hint}. Vary one of: {', '.join(AXES)}.")
