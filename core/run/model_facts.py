"""What the probe said of the model it measured: its result's `model` and its inputs event.

The probe sends a free-form description and the history keeps it as it came (a newer probe
may add keys nobody reads yet): ModelFacts holds that description for writing back, and the
figures tflaunch reads as typed attributes, each None (or empty) where it is missing or not of
its type. The event parser builds it (events.py), the history's reader from a checked stored
dict (store/rows.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from . import read_as
from .description import Description

Shape = tuple[int | None, ...]





def _shape(value: Any) -> Shape | None:
    if not isinstance(value, list) or not all(d is None or read_as.count(d) is not None for d in value):
        return None
    return tuple(value)



@dataclass(frozen=True)
class InputFacts:
    """One input as declared (name, dtype, shape with None for an unknown dimension) and, once
    fed, as fed: its shape and dtype, whether a default filled an unknown dimension, and what
    its values were."""

    name: str | None = None
    dtype: str | None = None
    shape: Shape | None = None
    fed_dtype: str | None = None
    fed_shape: Shape | None = None
    assumed: bool = False
    values: str | None = None

    @classmethod
    def of(cls, data: Mapping[str, Any]) -> InputFacts:
        return cls(read_as.text(data.get("name")), read_as.text(data.get("dtype")), _shape(data.get("shape")),
                   read_as.text(data.get("fed_dtype")), _shape(data.get("fed_shape")), bool(data.get("assumed")),
                   read_as.text(data.get("values")))


def _inputs(value: Any) -> tuple[InputFacts, ...]:
    return tuple(InputFacts.of(i) for i in value if isinstance(i, dict)) if isinstance(value, list) else ()


@dataclass(frozen=True)
class ModelFacts(Description):
    """The model's description; `described` is what the probe sent, written back unchanged."""

    name: str | None = field(init=False)
    format: str | None = field(init=False)
    params: int | None = field(init=False)
    bytes_on_disk: int | None = field(init=False)
    signature: str | None = field(init=False)  # the SavedModel signature called (None for a Keras model)
    signatures: tuple[str, ...] = field(init=False)
    imports: tuple[str, ...] = field(init=False)  # the model's own code it imported
    inputs: tuple[InputFacts, ...] = field(init=False)  # as fed
    declared_inputs: tuple[InputFacts, ...] | None = field(init=False)  # None until the probe lists them
    outputs_finite: bool | None = field(init=False)
    unsafe_deserialization: bool | None = field(init=False)

    def __post_init__(self) -> None:
        data = self.described
        declared = data.get("declared_inputs")
        for name, value in (("name", read_as.text(data.get("name"))), ("format", read_as.text(data.get("format"))),
                            ("params", read_as.count(data.get("params"))),
                            ("bytes_on_disk", read_as.count(data.get("bytes_on_disk"))),
                            ("signature", read_as.text(data.get("signature"))),
                            ("signatures", read_as.texts(data.get("signatures"))),
                            ("imports", read_as.texts(data.get("imports"))), ("inputs", _inputs(data.get("inputs"))),
                            ("declared_inputs", _inputs(declared) if isinstance(declared, list) else None),
                            ("outputs_finite", read_as.flag(data.get("outputs_finite"))),
                            ("unsafe_deserialization", read_as.flag(data.get("unsafe_deserialization")))):
            object.__setattr__(self, name, value)
