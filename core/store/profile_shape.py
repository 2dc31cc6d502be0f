"""The shape a profile file must have before any of it is used: checked at the boundary.

Profiles travel between people, so a file can hold anything TOML can: `model = 5`,
`[evidence] baseline = [1, 2]`, tables nested a thousand deep. Every setting is checked
against the type LaunchConfig declares for it, and every evidence figure a view reads
against the shape evidence_from_runs writes; a file that differs is one broken profile
with its reason, never a listing that stops at it (issue 33).
"""

from __future__ import annotations

import types
import typing
from dataclasses import fields
from typing import Any

from ..settings.config import LaunchConfig

MOST_DEPTH = 24  # tables and arrays inside each other; evidence_from_runs writes 4
_NUMBER = (int, float)
_SCALAR = (str, int, float, bool)


def _hint_check(hint: Any) -> tuple[str, Any]:
    """(what it must be, a test) for one LaunchConfig field's declared type."""
    args = [a for a in typing.get_args(hint) if a is not type(None)]
    base = args[0] if isinstance(hint, types.UnionType) and args else hint
    origin = typing.get_origin(base) or base
    if origin is bool:
        return "true or false", lambda v: isinstance(v, bool)
    if origin is int:
        return "a whole number", lambda v: isinstance(v, int) and not isinstance(v, bool)
    if origin is float:
        return "a number", lambda v: isinstance(v, _NUMBER) and not isinstance(v, bool)
    if origin is str:
        return "text", lambda v: isinstance(v, str)
    if origin is dict:
        return "a table of text values", lambda v: isinstance(v, dict) and all(
            isinstance(x, _SCALAR) for x in v.values())
    if origin is tuple:
        item = typing.get_args(base)[0]
        if item is int:
            return "a list of whole numbers", lambda v: isinstance(v, list) and all(
                isinstance(x, int) and not isinstance(x, bool) for x in v)
        return "a list of text", lambda v: isinstance(v, str) or (isinstance(v, list) and all(
            isinstance(x, str) for x in v))
    raise TypeError(f"no check for {hint!r}")  # a new kind of setting: give it one here


_HINTS = typing.get_type_hints(LaunchConfig)
SETTING_SHAPES = {f.name: _hint_check(_HINTS[f.name]) for f in fields(LaunchConfig)}

# What the views read of the evidence, and the shape they read it in.
_TABLE, _LIST = "a table", "a list"
EVIDENCE_SHAPES: dict[str, tuple[str, Any]] = {
    "model": ("text", lambda v: isinstance(v, str)),
    "runs": ("a whole number", lambda v: isinstance(v, int) and not isinstance(v, bool)),
    "date": ("text", lambda v: isinstance(v, str)),
    "inputs": ("text", lambda v: isinstance(v, str)),
    "time_to_ready": ("a table of numbers", lambda v: _numbers(v)),
    "steady_per_call": ("a table of numbers", lambda v: _numbers(v)),
    "peak_rss_bytes_median": ("a number", lambda v: isinstance(v, _NUMBER) and not isinstance(v, bool)),
    "phases": ("a table of tables of numbers", lambda v: isinstance(v, dict) and all(_numbers(p) for p in v.values())),
    # What describe_evidence reads of it: a table missing one is as damaged as a list.
    "baseline": ("a table of speedup, time_to_ready_median (numbers) and settings (text)", lambda v: isinstance(
        v, dict) and _numbers({k: x for k, x in v.items() if k != "settings"}) and isinstance(v.get("settings"), str)
        and {"speedup", "time_to_ready_median"} <= v.keys()),
    "environment": ("a table of text and numbers", lambda v: isinstance(v, dict) and all(
        isinstance(x, _SCALAR) for x in v.values())),
    "gpus": ("a list of text", lambda v: isinstance(v, list) and all(isinstance(x, str) for x in v)),
    "sweep": (_TABLE, lambda v: isinstance(v, dict)),
    "doctor": (_TABLE, lambda v: isinstance(v, dict)),
    "caches": (_TABLE, lambda v: isinstance(v, dict)),
}


def _numbers(value: Any) -> bool:
    return isinstance(value, dict) and all(isinstance(x, _NUMBER) and not isinstance(x, bool)
                                           for x in value.values())


def depth(value: Any) -> int:
    """How deep tables and arrays are nested (iteratively: the file chooses the depth)."""
    deepest, todo = 0, [(value, 1)]
    while todo:
        item, level = todo.pop()
        if isinstance(item, (dict, list)):
            deepest = max(deepest, level)
            if level > MOST_DEPTH:
                break
            todo += [(x, level + 1) for x in (item.values() if isinstance(item, dict) else item)]
    return deepest


def shape_problem(data: dict[str, Any]) -> str | None:
    """What is wrong with a parsed profile's shape, in words; None when views can use it."""
    if depth(data) > MOST_DEPTH:
        return f"nests tables or arrays more than {MOST_DEPTH} deep; a profile is a few flat tables"
    settings, evidence = data.get("settings"), data.get("evidence", {})
    if isinstance(settings, dict):
        for name, value in settings.items():
            shape = SETTING_SHAPES.get(name)
            if shape is not None and not shape[1](value):
                return f"settings.{name} must be {shape[0]}, not {type(value).__name__}"
    if not isinstance(evidence, dict):
        return f"evidence must be a table, not {type(evidence).__name__}"
    for name, value in evidence.items():
        shape = EVIDENCE_SHAPES.get(name)
        if shape is not None and value is not None and not shape[1](value):
            return f"evidence.{name} must be {shape[0]}, not {type(value).__name__}"
    return None
