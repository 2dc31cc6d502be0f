"""Settings as people read them: on/off for switches, and what a default means.

A LaunchConfig keeps TensorFlow's defaults as None or 0 (onednn=None, intra=0, no memory
limit); shown raw, those read as "None" and "0 threads". setting_text() is the one place
that turns a setting's value into words, for the app's tables, the review images and the
terminal; short_value() is its compact form for one-line summaries (name=value).
"""

from __future__ import annotations

import shlex
from typing import Any

from .vocabulary import LOG_LEVELS

TF_DECIDES = "default (TensorFlow decides)"
ON, OFF = "on", "off"

# What each setting's "not set" value means, in a table and in a one-line summary; a
# setting not listed has no such value.
_UNSET: dict[str, tuple[Any, str, str]] = {
    "intra": (0, TF_DECIDES, "default"),
    "inter": (0, TF_DECIDES, "default"),
    "onednn": (None, TF_DECIDES, "default"),
    "log_level": (None, TF_DECIDES, "default"),
    "visible_gpus": (None, "all", "all"),
    "memory_limit_mb": (None, "no limit", "none"),
    "signature": ("", "default (serving_default, or the only one)", "default"),
    "inputs": ({}, "as the model declares them", "default"),
    "imports": ((), "none", "none"),
    "extra_env": ({}, "none", "none"),
    "allocator": (None, "default (the environment's TF_GPU_ALLOCATOR, else BFC)", "default"),
    "cudnn_autotune": (None, TF_DECIDES, "default"),
    "grappler": (None, TF_DECIDES, "default"),
    "module_loading": (None, "default (the driver decides: lazy since CUDA 12.2)", "default"),
    "cuda_cache": (None, "default (the driver's own folder)", "default"),
    "program": ((), "none (a model is the subject)", "none"),
    "workdir": ("", "the current folder", "default"),
}


def _unset(name: str, value: Any) -> tuple[Any, str, str] | None:
    """The setting's "not set" entry when `value` is it (0 is unset, False is not)."""
    unset = _UNSET.get(name)
    return unset if unset is not None and value == unset[0] and type(value) is type(unset[0]) else None


def switch(value: bool) -> str:
    return ON if value else OFF


def setting_text(name: str, value: Any) -> str:
    """One setting's value in words, with the meaning of its default: never True, False,
    None, or a 0 that stands for "TensorFlow's own choice"."""
    unset = _unset(name, value)
    if unset is not None:
        return unset[1]
    if name == "log_level" and value in LOG_LEVELS:
        return f"{value} ({LOG_LEVELS[value]})"
    if name == "memory_limit_mb":
        return f"{value} MiB"
    if name == "timeout" and isinstance(value, (int, float)):
        return f"{value:g} s"
    if name == "steady" and isinstance(value, int) and not isinstance(value, bool):
        return f"{value} calls"
    if name == "program" and isinstance(value, (tuple, list)):
        return shlex.join(str(part) for part in value)
    if name == "visible_gpus" and isinstance(value, (tuple, list)) and not value:
        return "none"
    return _words(value, ", ")


def short_value(value: Any, name: str | None = None) -> str:
    """A value in a one-line summary (`intra=2 onednn=off gpus=0,1`): no spaces in lists,
    and with `name`, a "not set" value as what it means (`intra=default`)."""
    unset = _unset(name, value) if name is not None else None
    return unset[2] if unset is not None else _words(value, ",")


def _words(value: Any, sep: str) -> str:
    if isinstance(value, bool):
        return switch(value)
    if value is None:
        return "default"
    if isinstance(value, (tuple, list)):
        return sep.join(str(v) for v in value) or "none"
    if isinstance(value, dict):
        return sep.join(f"{k}={v}" for k, v in value.items()) or "none"
    return str(value)
