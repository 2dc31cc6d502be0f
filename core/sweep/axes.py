"""What a sweep can vary, as a user types it, and how one value of each becomes settings.

The command line's --vary, the app's Vary box and the stored plans all go through here.
"""

from __future__ import annotations

from collections.abc import Callable

from ..probe.model.convert import FORMATS
from ..probe.model.input_shapes import parse_shape, spec_text
from ..settings.config import LaunchConfig
from ..settings.setting import Kind, Setting
from ..settings.vocabulary import SETTINGS
from .instances import INSTANCES_HELP

# The settings a sweep can vary (those SETTINGS offers values for), by their axis name.
SETTING_AXES: dict[str, Setting] = {s.axis: s for s in SETTINGS if s.sweep is not None}


def _values_text(setting: Setting) -> str:
    """What an axis takes, from its declaration: its words, or the shape of its numbers."""
    if setting.kind is Kind.SWITCH:
        return "on, off"
    if setting.kind in (Kind.CHOICE, Kind.TRISTATE):
        return ", ".join(setting.words())
    if setting.kind is Kind.COUNT:
        low = setting.bounds[0] if setting.bounds else 0
        unset = " (default)" if setting.is_unset(low) else ""
        return f"{low}{unset}, {low + 1}, {low + 2}, ..."
    if setting.kind is Kind.MIB:
        return "a number of MiB, or none"
    return "all, none, 0, 0+1, ..."  # the GPUs


# What each axis takes, as a user types it, and the values the app offers first.
AXES: dict[str, tuple[str, str]] = {
    **{axis: (f"{s.label}: {_values_text(s)}", s.sweep or "") for axis, s in SETTING_AXES.items()},
    "instances": (INSTANCES_HELP, "1,2,4"),
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
    setting = SETTING_AXES.get(axis)
    if setting is not None and setting.kind is not Kind.INDICES:
        return config.replace(**{setting.name: setting.parse(text)})  # its ValueError says what to type
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
