"""The model zoo through the real probe: each family measured with inputs a user would
recognise, or refused with a message that says what to set.

The zoo (tests/zoo/build.py) is built once per session in its own process; its runs go
three at a time through one driver loop, so the whole file costs about one minute.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tflaunch.core.probe.model.input_shapes import IMAGE_SIZE, SEQUENCE_LENGTH
from tflaunch.core.run.driver import run_sessions
from tflaunch.core.run.model_facts import InputFacts
from tflaunch.core.run.record import RunRecord, RunStatus
from tflaunch.core.run.session import ProbeSession
from tflaunch.core.settings.config import LaunchConfig

# The slow tier: building the zoo and measuring 23 real models takes over a minute.
pytestmark = pytest.mark.slow

ZOO = Path(__file__).with_name("zoo")
LAYERS = str(ZOO / "zoo_layers.py")

# (case, zoo entry, extra settings)
CASES: list[tuple[str, str, dict]] = [
    ("lstm", "lstm_masked", {}),
    ("lstm_64", "lstm_masked", {"inputs": {"tokens": "64"}}),
    ("transformer", "transformer", {"batch": 2}),
    ("fcn", "fcn", {}),
    ("fcn_tiny", "fcn", {"inputs": {"image": "8x8x3"}}),
    ("dict_strings", "dict_strings", {}),
    ("custom_missing", "custom_layer", {}),
    ("custom", "custom_layer", {"imports": (LAYERS,)}),
    ("lambda_safe", "lambda_layer", {}),
    ("lambda_unsafe", "lambda_layer", {"unsafe_deserialization": True}),
    ("tf_module", "tf_module", {}),
    ("multi_signature", "multi_signature", {}),
    ("encode", "multi_signature", {"signature": "encode"}),
    ("no_such_signature", "multi_signature", {"signature": "serve"}),
    ("tf1", "tf1_graph", {}),
    ("mixed", "mixed_precision", {}),
    ("multi_keras", "multi_io_keras", {}),
    ("multi_h5", "multi_io_h5", {}),
    ("multi_savedmodel", "multi_io_savedmodel", {}),
    ("export", "keras_export_dropout", {}),
    ("h5_masking", "h5_masking", {}),
    ("images", "images_unknown", {}),
    ("code", "code_builder", {}),
]


@pytest.fixture(scope="session")
def zoo(tmp_path_factory) -> dict[str, dict]:
    out = tmp_path_factory.mktemp("zoo")
    built = subprocess.run([sys.executable, str(ZOO / "build.py"), str(out)], capture_output=True, text=True,
                           timeout=300)
    assert built.returncode == 0, built.stderr[-3000:]
    return json.loads((out / "manifest.json").read_text())


@pytest.fixture(scope="module")
def runs(zoo) -> dict[str, RunRecord]:
    configs = {case: LaunchConfig(model=zoo[entry]["path"], steady=3, timeout=240, **extra)
               for case, entry, extra in CASES}
    records: dict[str, RunRecord] = {}
    names = list(configs)
    for i in range(0, len(names), 3):
        group = names[i:i + 3]
        for name, record in zip(group, run_sessions([ProbeSession(configs[n]) for n in group]), strict=True):
            records[name] = record
    return records


def ok(record: RunRecord) -> RunRecord:
    assert record.status is RunStatus.OK, record.headline + "\n" + "\n".join(list(record.stderr_tail)[-15:])
    assert record.time_to_ready and record.latency["n"] == 3
    return record


def fed(record: RunRecord) -> dict[str | None, InputFacts]:
    return {i.name: i for i in record.model.inputs}


def failed(record: RunRecord, phase: str, *words: str) -> str:
    assert record.status is RunStatus.FAILED and record.failed_phase == phase, record.headline
    assert record.time_to_ready is None and record.to_dict()["time_to_ready"] is None
    message = record.failure.message
    for word in words:
        assert word in message, message
    assert record.config.model in message, "a failure names the model"
    return message


def test_sequences_get_a_real_length_and_in_range_ids(runs):
    lstm = ok(runs["lstm"])
    tokens = fed(lstm)["tokens"]
    assert tokens.shape == (None, None) and tokens.fed_shape == (1, SEQUENCE_LENGTH)
    assert tokens.assumed and lstm.assumed_inputs == ["tokens"] and "assumed input shape" in lstm.status_line
    assert "ids 1 to 999 (the embedding has 1000)" == tokens.values, "not the padding id 0"
    assert lstm.model.params == 18146 and lstm.model.outputs_finite
    set_by_user = ok(runs["lstm_64"])
    assert fed(set_by_user)["tokens"].fed_shape == (1, 64) and not set_by_user.assumed_inputs
    assert "assumed" not in set_by_user.status_line and not set_by_user.warnings
    transformer = ok(runs["transformer"])
    assert fed(transformer)["tokens"].fed_shape == (2, SEQUENCE_LENGTH) and transformer.fed_batch == 2
    assert "per sample" in transformer.steady_line


def test_images_of_unknown_size_are_fed_224_and_a_too_small_one_is_explained(runs):
    for case in ("fcn", "images"):
        record = ok(runs[case])
        image = next(iter(fed(record).values()))
        assert image.fed_shape == (1, IMAGE_SIZE, IMAGE_SIZE, 3) and image.assumed
    assert runs["images"].model.params == 437226
    tiny = runs["fcn_tiny"]
    assert tiny.status is not RunStatus.OK or tiny.model.outputs_finite is False, "8×8 cannot give a result"
    if tiny.status is RunStatus.FAILED:  # oneDNN's kernels raise; the reference kernels return NaN
        failed(tiny, "first", "image=1x8x8x3", "--input", "cannot run on these inputs")
        assert "Graph execution error" not in tiny.failure.message
    else:
        assert any("NaN" in w for w in tiny.warnings)


def test_dict_inputs_are_fed_by_key_with_strings_from_the_vocabulary(runs):
    record = ok(runs["dict_strings"])
    inputs = fed(record)
    assert set(inputs) == {"city", "age"}, "the dict's keys, not the tensor names city_in/age_in"
    assert inputs["city"].values == "words from the model's vocabulary"
    assert record.model.params == 77


def test_custom_code_runs_only_when_asked(runs):
    failed(runs["custom_missing"], "load", "ScaledDense", "--import")
    custom = ok(runs["custom"])
    assert custom.model.imports == (LAYERS,) and custom.model.params == 37
    failed(runs["lambda_safe"], "load", "Lambda", "--unsafe-deserialization")
    unsafe = ok(runs["lambda_unsafe"])
    assert unsafe.model.unsafe_deserialization is True
    code = ok(runs["code"])
    assert code.model.format == "code" and code.model.params == 1562


def test_savedmodels_as_they_are(runs, zoo):
    for case, entry in (("tf_module", "tf_module"), ("tf1", "tf1_graph"), ("export", "keras_export_dropout"),
                        ("multi_savedmodel", "multi_io_savedmodel")):
        record = ok(runs[case])
        assert record.model.params == zoo[entry]["params"], f"{case}: no seed state, no duplicates"
        assert record.model.signature == "serving_default"
    assert fed(runs["tf_module"])["x"].fed_shape == (1, 8)
    listing = failed(runs["multi_signature"], "load", "decode, encode", "--signature")
    assert "no serving_default" in listing
    encode = ok(runs["encode"])
    assert encode.model.signature == "encode" and set(fed(encode)) == {"x"}
    failed(runs["no_such_signature"], "load", "no signature 'serve'", "decode, encode")


def test_multi_input_models_in_every_format_and_mixed_precision(runs):
    for case in ("multi_keras", "multi_h5", "multi_savedmodel"):
        record = ok(runs[case])
        assert {n: i.fed_shape for n, i in fed(record).items()} == {"a": (1, 10), "b": (1, 5)}
        assert not record.assumed_inputs
    mixed = ok(runs["mixed"])
    assert mixed.model.params == 17226


def test_legacy_h5_failure_points_to_keras_or_savedmodel(runs):
    failed(runs["h5_masking"], "load", "NotEqual", ".keras", "SavedModel")


def test_time_to_ready_is_wall_time_including_the_gaps(runs):
    for record in (r for r in runs.values() if r.status is RunStatus.OK):
        phases = sum(record.phases[p].duration for p in ("spawn", "import", "devices", "load", "trace", "first"))
        assert record.time_to_ready >= phases - 1e-3
        assert record.other_time == pytest.approx(record.time_to_ready - phases, abs=1e-3)
        assert record.ready_at - record.launched_at == pytest.approx(record.time_to_ready)
