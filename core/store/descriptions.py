"""What a stored run's descriptions (its model, its environment) must hold for the tables,
reports and exports to read them: every key they read, of the type they read it as.

The probe sends these as free-form JSON and the history keeps them so; a row another
program wrote can hold `"gpus": 7` or `"params": "many"`, which a report would raise on.
Keys nobody reads are left alone: a newer probe may add some.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

MAX_DIMENSION = 1 << 40  # as the probe's protocol allows (events._inputs)
MAX_COUNT = 1 << 63  # parameters, bytes on disk, cores: any figure a float still holds exactly enough


class DescriptionError(ValueError):
    """A described value of the wrong type: the message names where it is and what it is."""


Check = Callable[[Any, str], None]


def shown(value: Any, limit: int = 40) -> str:
    """A stored value in a message: its repr, cut short (a column can hold megabytes)."""
    text = repr(value)
    return text if len(text) <= limit else text[:limit - 1] + "…"


def _fail(value: Any, where: str, expected: str) -> None:
    raise DescriptionError(f"{where} is {shown(value)}, not {expected}")


def text(value: Any, where: str) -> None:
    if value is not None and not isinstance(value, str):
        _fail(value, where, "text")


def word(value: Any, where: str) -> None:
    if not isinstance(value, str):
        _fail(value, where, "text")


def flag(value: Any, where: str) -> None:
    if value is not None and not isinstance(value, bool):
        _fail(value, where, "true or false")


def count(value: Any, where: str) -> None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < MAX_COUNT):
        _fail(value, where, "a whole number from 0")


def shape(value: Any, where: str) -> None:
    if value is None:
        return
    if not isinstance(value, list) or not all(
            d is None or (isinstance(d, int) and not isinstance(d, bool) and 0 <= d < MAX_DIMENSION) for d in value):
        _fail(value, where, "a list of dimensions")


def list_of(item: Check) -> Check:
    """A list (never null: readers iterate it) whose every item passes `item`."""
    def check(value: Any, where: str) -> None:
        if not isinstance(value, list):
            _fail(value, where, "a list")
        for i, element in enumerate(value):
            item(element, f"{where}[{i}]")
    return check


def mapping(keys: dict[str, Check]) -> Check:
    """An object whose known keys pass their checks; other keys are anyone's."""
    def check(value: Any, where: str) -> None:
        if not isinstance(value, dict):
            _fail(value, where, "an object")
        for key, item in keys.items():
            if key in value:
                item(value[key], f"{where} {key}")
    return check


INPUT = mapping({"name": text, "dtype": text, "fed_dtype": text, "shape": shape, "fed_shape": shape,
                 "assumed": flag})
MODEL_INFO = mapping({
    "name": text, "format": text, "signature": text, "params": count, "bytes_on_disk": count,
    "signatures": list_of(word), "inputs": list_of(INPUT), "declared_inputs": list_of(INPUT),
    "outputs_finite": flag, "unsafe_deserialization": flag,
})
GPU = mapping({"name": text, "model": text, "allocator_peak": count})
NVML = mapping({"driver": text, "cuda_driver": text, "gpus": list_of(mapping({})),
                "persistence_off": list_of(count)})
ENVIRONMENT = mapping({
    "tensorflow": text, "keras": text, "python": text, "cpu": text, "cores": count, "driver": text, "cuda": text,
    "gpus": list_of(GPU), "capabilities": list_of(word), "nvml": NVML,
})
