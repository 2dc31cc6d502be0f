"""Settings as people read them: on/off for switches, and what a default means.

A LaunchConfig keeps TensorFlow's defaults as None or 0 (onednn=None, intra=0, no memory
limit); shown raw, those read as "None" and "0 threads". setting_text() is the one place
that turns a setting's value into words, for the app's tables, the review images and the
terminal; short_value() is its compact form for one-line summaries (name=value).
"""

from __future__ import annotations

import shlex
from typing import Any

from .setting import Kind, Setting
from .vocabulary import BY_NAME, TF_DECIDES

__all__ = ["TF_DECIDES", "setting_text", "short_value", "switch"]

ON, OFF = "on", "off"


def _unset(name: str | None, value: Any) -> tuple[str, str] | None:
    """The words for the setting's "not set" value when `value` is it (SETTINGS declares them)."""
    setting = BY_NAME.get(name) if name is not None else None
    return setting.unset if setting is not None and setting.is_unset(value) else None


def switch(value: bool) -> str:
    return ON if value else OFF


def setting_text(name: str, value: Any) -> str:
    """One setting's value in words, with the meaning of its default: never True, False,
    None, or a 0 that stands for "TensorFlow's own choice"."""
    unset = _unset(name, value)
    if unset is not None:
        return unset[0]
    setting = BY_NAME.get(name)
    if setting is not None and _is_number(value):
        return _number_text(setting, value)
    if name == "program" and isinstance(value, (tuple, list)):
        return shlex.join(str(part) for part in value)
    if name == "visible_gpus" and isinstance(value, (tuple, list)) and not value:
        return "none"
    return _words(value, ", ")


def short_value(value: Any, name: str | None = None) -> str:
    """A value in a one-line summary (`intra=2 onednn=off gpus=0,1`): no spaces in lists,
    and with `name`, a "not set" value as what it means (`intra=default`)."""
    unset = _unset(name, value) if name is not None else None
    return unset[1] if unset is not None else _words(value, ",")


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _number_text(setting: Setting, value: int | float) -> str:
    """A number with its unit (600 s, 4096 MiB), or a level with its words (2 (hide INFO and WARNING))."""
    if setting.kind is Kind.CHOICE and value in setting.choices:
        return f"{value} ({setting.choices[value]})"
    number = f"{value:g}" if isinstance(value, float) else str(value)
    return f"{number} {setting.unit}" if setting.unit else number


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
