"""--input NAME=SHAPE and the documented defaults for unknown dimensions (no TensorFlow)."""

from __future__ import annotations

import math

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from tflaunch.core.probe.model.input_shapes import (
    IMAGE_SIZE,
    MAX_ELEMENTS,
    SEQUENCE_LENGTH,
    InputSpecError,
    default_dims,
    format_dims,
    parse,
    resolve,
    spec_text,
)
from tflaunch.core.settings.config import LaunchConfig


@pytest.mark.parametrize(("text", "expected"), [
    ("image=224x224x3", ("image", (224, 224, 3), None)),
    ("tokens=128:int64", ("tokens", (128,), "int64")),
    ("x=4×5", ("x", (4, 5), None)),
    ("scalar=", ("scalar", (), None)),
])
def test_the_syntax_users_type(text, expected):
    assert parse(text) == expected


@pytest.mark.parametrize(("text", "says"), [
    ("image", "expected NAME=D1xD2"),
    ("image=0x3", "whole numbers above 0"),
    ("image=axb", "whole numbers above 0"),
    ("image=3:complex7", "unknown dtype"),
    ("big=100000x100000x1000", "more than tflaunch generates"),
])
def test_bad_specs_say_what_to_write(text, says):
    with pytest.raises(InputSpecError, match=says):
        parse(text)


@given(st.lists(st.integers(1, 4096), max_size=4), st.sampled_from([None, "float32", "int32", "string"]))
@example([], None)
@example([69, 133, 440, 532], None)  # 2.1 billion values a row: refused, not generated
def test_a_spec_reads_back_as_written_or_is_refused_as_too_large(dims, dtype):
    text = "x=" + spec_text(tuple(dims), dtype)
    if math.prod(dims) > MAX_ELEMENTS:
        with pytest.raises(InputSpecError, match="more than tflaunch generates"):
            parse(text)
        return
    assert parse(text) == ("x", tuple(dims), dtype)


@pytest.mark.parametrize(("shape", "dtype", "expected"), [
    ([None, None, None, 3], "float32", [IMAGE_SIZE, IMAGE_SIZE, 3]),  # an image of unknown size
    ([None, 3, None, None], "float32", [3, IMAGE_SIZE, IMAGE_SIZE]),  # channels first
    ([None, None, None, None], "uint8", [IMAGE_SIZE, IMAGE_SIZE, 3]),
    ([None, None], "int32", [SEQUENCE_LENGTH]),  # tokens: a sequence, never one token
    ([None, None, 16], "float32", [SEQUENCE_LENGTH, 16]),  # features over time
    ([None, None], "string", [1]),
    ([None, 784], "float32", [784]),  # nothing unknown: nothing assumed
])
def test_defaults_by_kind_of_input(shape, dtype, expected):
    assert default_dims(shape, dtype) == expected


def test_resolve_marks_what_was_assumed_and_checks_what_was_given():
    assert resolve("t", [None, None], "int32", 4, None) == ([4, SEQUENCE_LENGTH], "int32", True)
    assert resolve("t", [None, None], "int32", 4, ((64,), None)) == ([4, 64], "int32", False)
    assert resolve("x", [None, 10], "float32", 2, None) == ([2, 10], "float32", False)
    assert resolve("x", [1, 10], "float32", 8, None)[0] == [1, 10], "a fixed batch is the model's to say"
    with pytest.raises(InputSpecError, match="has 1 dimensions besides the batch"):
        resolve("t", [None, None], "int32", 1, ((8, 8), None))
    with pytest.raises(InputSpecError, match="fixed at 3"):
        resolve("image", [None, None, None, 3], "float32", 1, ((32, 32, 4), None))


def test_format_marks_unknown_dimensions():
    assert format_dims([None, None, 3]) == "?x?x3" and format_dims([]) == "scalar"


def test_the_config_checks_inputs_and_imports(tmp_path):
    problems = LaunchConfig(inputs={"image": "0x3"}, imports=(str(tmp_path / "missing.py"),)).validate()
    fields = {p.field: p.message for p in problems}
    assert "whole numbers above 0" in fields["inputs"] and "no such file" in fields["imports"]
    assert LaunchConfig(inputs={"tokens": "64"}, imports=("my_layers",)).validate() == []
