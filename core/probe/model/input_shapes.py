"""Input shapes: what a user sets (``--input NAME=D1xD2[:DTYPE]``) and the documented
defaults for every unknown dimension they did not set.

A shape given by a user leaves out the batch dimension, which comes from the batch
setting. Defaults depend on the kind of input, so that a model runs on data of the size
it was built for rather than on one pixel or one token:

- images (float or uint8 inputs of rank 4, or rank 5 for video): 224 × 224 pixels,
  3 channels, 16 frames;
- strings: 1 value per row;
- everything else, token ids and feature sequences above all: 128 steps.

A run that used a default says so ("assumed input shape") wherever it is shown.
The launcher validates ``--input`` with this module as well, so both read one syntax.
Standard library only (the probe's rule).
"""

from __future__ import annotations

import re
from typing import List, Optional, Tuple

DTYPES = ("float16", "bfloat16", "float32", "float64", "int8", "int16", "int32", "int64",
          "uint8", "uint16", "bool", "string")
IMAGE_SIZE, IMAGE_CHANNELS, VIDEO_FRAMES = 224, 3, 16
SEQUENCE_LENGTH = 128
STRING_WIDTH = 1
DEFAULTS_HELP = (f"images {IMAGE_SIZE}x{IMAGE_SIZE}x{IMAGE_CHANNELS}, strings {STRING_WIDTH} per row, "
                 f"any other unknown dimension (tokens, steps) {SEQUENCE_LENGTH}")
MAX_ELEMENTS = 1 << 31  # one generated input larger than this (8 GiB of float32) is a typo

Dims = Tuple[int, ...]
_NAME = re.compile(r"^[^=\s]+$")


class InputSpecError(ValueError):
    """An --input text that cannot be read; the message says what to write instead."""


def parse(text: str) -> Tuple[str, Dims, Optional[str]]:
    """'tokens=64' -> ('tokens', (64,), None); 'image=320x320x3:uint8' -> (..., 'uint8')."""
    name, sep, rest = text.partition("=")
    name = name.strip()
    if not sep or not _NAME.match(name):
        raise InputSpecError(f"expected NAME=D1xD2...[:DTYPE] (for example image=224x224x3), not {text!r}")
    dims, dtype = parse_shape(rest, name)
    return name, dims, dtype


def parse_shape(text: str, name: str = "the input") -> Tuple[Dims, Optional[str]]:
    shape, _, dtype_text = text.strip().partition(":")
    dtype = dtype_text.strip().lower() or None
    if dtype is not None and dtype not in DTYPES:
        raise InputSpecError(f"{name}: unknown dtype {dtype!r}; use one of {', '.join(DTYPES)}")
    parts = [p.strip() for p in re.split(r"[x×,]", shape.strip().lower())] if shape.strip() else []
    if not all(p.isascii() and p.isdigit() and int(p) > 0 for p in parts):  # int() reads any script's digits
        raise InputSpecError(f"{name}: the shape {shape.strip()!r} must be whole numbers above 0 joined by x, "
                             "without the batch dimension (for example 224x224x3, or 128 for a sequence)")
    dims = tuple(int(p) for p in parts)
    elements = 1
    for d in dims:
        elements *= d
    if elements > MAX_ELEMENTS:
        raise InputSpecError(f"{name}: {format_dims(dims)} is {elements:,} values per row; "
                             "that is more than tflaunch generates")
    return dims, dtype


def format_dims(dims: List[Optional[int]] | Dims) -> str:
    """(224, 224, 3) -> '224x224x3'; unknown dimensions as '?'; no dimensions as 'scalar'."""
    return "x".join("?" if d is None else str(d) for d in dims) or "scalar"


def spec_text(dims: Dims, dtype: Optional[str] = None) -> str:
    """The --input text of a shape: what parse reads back (a scalar is the empty shape)."""
    return "x".join(str(d) for d in dims) + (f":{dtype}" if dtype else "")


def kind(shape: List[Optional[int]], dtype: str) -> str:
    if dtype == "string":
        return "strings"
    if dtype.startswith(("float", "bfloat", "uint8")) and len(shape) in (4, 5):
        return "images"
    if dtype.startswith(("int", "uint")):
        return "tokens"
    return "values"


def default_dims(shape: List[Optional[int]], dtype: str) -> List[int]:
    """The non-batch dimensions of an input with every unknown one set to its default."""
    what = kind(shape, dtype)
    rest = list(shape[1:])
    if what == "strings":
        return [STRING_WIDTH if d is None else d for d in rest]
    if what == "images":
        channels_first = rest[0] in (1, 3, 4) and rest[-1] is None
        channel_at = 0 if channels_first else len(rest) - 1
        out = []
        for i, d in enumerate(rest):
            if d is not None:
                out.append(d)
            elif i == channel_at:
                out.append(IMAGE_CHANNELS)
            elif len(rest) == 4 and i == (1 if channels_first else 0):
                out.append(VIDEO_FRAMES)
            else:
                out.append(IMAGE_SIZE)
        return out
    return [SEQUENCE_LENGTH if d is None else d for d in rest]


def resolve(name: str, shape: List[Optional[int]], dtype: str, batch: int,
            user: Optional[Tuple[Dims, Optional[str]]]) -> Tuple[List[int], str, bool]:
    """(fed shape with batch, dtype, assumed) for one input; InputSpecError when the user's
    shape does not fit the model's."""
    declared = list(shape)
    if declared and declared[0] is not None:
        batch = declared[0]  # a signature with a fixed batch takes only that one
    if not declared:
        if user and user[0]:
            raise InputSpecError(f"{name} is a scalar input (one value per call), so it takes no shape; "
                                 f"remove --input {name}=...")
        return [], (user[1] if user and user[1] else dtype), False
    if user is None:
        fed = default_dims(declared, dtype)
        assumed = any(d is None for d in declared[1:])
        return [batch, *fed], dtype, assumed
    dims, user_dtype = user
    if len(dims) != len(declared) - 1:
        raise InputSpecError(
            f"{name} has {len(declared) - 1} dimensions besides the batch ({format_dims(declared[1:])}), "
            f"but --input {name}={format_dims(dims)} gives {len(dims)}")
    for i, (want, got) in enumerate(zip(declared[1:], dims)):
        if want is not None and want != got:
            raise InputSpecError(
                f"{name} has dimension {i + 1} fixed at {want} ({format_dims(declared[1:])}), "
                f"but --input {name}={format_dims(dims)} sets {got}")
    return [batch, *dims], user_dtype or dtype, False
