"""Comparison arithmetic: differences, ratios, and the settings that differ."""

from __future__ import annotations

from dataclasses import fields

import pytest

from tflaunch.core.report.compare import Delta, deltas, differing_settings, run_labels, setting_rows
from tflaunch.core.report.subjects import MODEL_ONLY, PROGRAM_ONLY
from tflaunch.core.settings.config import LaunchConfig
from tflaunch.core.settings.display import setting_text, short_value

from .builders import finished_record


def test_deltas_against_the_chosen_baseline():
    slow, fast = finished_record(ready_s=2.0), finished_record(ready_s=1.0, intra=2)
    table = deltas([slow, fast], baseline=0)
    assert table[0]["load"].difference == 0
    assert table[1]["load"].difference == pytest.approx(-0.2)
    assert table[1]["load"].ratio == pytest.approx(2.0)
    assert table[1]["ready"].ratio == pytest.approx(2.02 / 1.02)
    assert deltas([slow, fast], baseline=1)[0]["load"].ratio == pytest.approx(0.5)


def test_delta_text_has_units_and_direction():
    assert Delta(1.0, 2.0).describe() == "1.00 s (−1.00 s, 2.00× faster)"
    assert Delta(0.3, 0.2).describe() == "300 ms (+100 ms, 1.50× slower)"
    assert Delta(None, 2.0).describe() == "–"
    assert Delta(0.12, 0.12).describe() == "120 ms (same)", "never '+0 µs, 1.00× faster'"
    assert Delta(0.002, 1e-9).describe() == "2.0 ms (+2.0 ms)", "no ratio against a near-zero time"


def test_differing_settings():
    configs = [LaunchConfig(intra=1), LaunchConfig(intra=2, jit_compile=True), LaunchConfig(intra=1)]
    assert differing_settings(configs) == ["intra", "jit_compile"]
    assert differing_settings([LaunchConfig(), LaunchConfig()]) == []


def test_settings_read_as_words_with_the_meaning_of_each_default():
    assert setting_text("intra", 0) == "default (TensorFlow decides)"
    assert setting_text("intra", 4) == "4"
    assert setting_text("onednn", None) == "default (TensorFlow decides)"
    assert (setting_text("onednn", True), setting_text("jit_compile", False)) == ("on", "off")
    assert setting_text("log_level", 2) == "2 (hide INFO and WARNING)"
    assert setting_text("visible_gpus", None) == "all" and setting_text("visible_gpus", ()) == "none"
    assert setting_text("visible_gpus", (0, 2)) == "0, 2"
    assert setting_text("memory_limit_mb", None) == "no limit"
    assert setting_text("memory_limit_mb", 4096) == "4096 MiB"
    assert setting_text("timeout", 600.0) == "600 s"
    assert setting_text("extra_env", {"A": "1", "B": "2"}) == "A=1, B=2"
    assert short_value((0, 1)) == "0,1" and short_value(True) == "on" and short_value(None) == "default"
    assert short_value(0, "intra") == "default" and short_value(None, "visible_gpus") == "all"


@pytest.mark.parametrize("config", [LaunchConfig(), LaunchConfig(
    intra=2, inter=1, xla_auto=True, jit_compile=True, onednn=False, log_level=3, visible_gpus=(),
    memory_growth=True, memory_limit_mb=512, inputs={"x": "4"}, signature="serve", imports=("m",),
    unsafe_deserialization=True, extra_env={"A": "1"})])
def test_no_setting_shows_as_true_false_none_or_a_bare_zero(config):
    rows = setting_rows([config])
    assert [r.name for r in rows] == [f.name for f in fields(LaunchConfig) if f.name not in PROGRAM_ONLY]
    for row in rows:
        assert row.values[0] not in ("True", "False", "None", "0", "()", "{}", ""), row
        assert row.label and not row.differs
    assert "True" not in config.summary() and "None" not in config.summary()


def test_settings_of_programs_name_no_model_and_a_warm_launch_is_told_from_a_cold_one():
    """Seen under Xvfb: two program runs compared listed "Model: sample:mlp" (the form's
    hidden model kept in their configs), and a warm and a cold launch of one script read
    "Settings (0 differ)" with nothing saying how each started."""
    from tflaunch.core.run.words import COLD_MARK, WARM_MARK

    warm, cold = finished_record(), finished_record()
    for record, mark, number in ((warm, WARM_MARK, 3), (cold, COLD_MARK, 2)):
        record.config = LaunchConfig(program=("python", "train.py"), until="exit", model="sample:mlp")
        record.marks.append((mark, 0.01))
        record.history_id = number
    names = [r.name for r in setting_rows([warm.config, cold.config])]
    assert "program" in names and not set(MODEL_ONLY) & set(names), names
    assert run_labels([warm, cold]) == ["#3 (warm)", "#2 (cold)"]


def test_setting_rows_mark_what_differs_and_run_labels_name_it():
    a, b = finished_record(intra=0), finished_record(intra=2)
    a.history_id, b.history_id = 3, 4
    rows = {r.name: r for r in setting_rows([a.config, b.config])}
    assert rows["intra"].differs and rows["intra"].values == ("default (TensorFlow decides)", "2")
    assert rows["intra"].label == "Intra-op threads" and not rows["model"].differs
    assert run_labels([a, b]) == ["#3 intra=default", "#4 intra=2"]
    pythons = [LaunchConfig(python="/envs/one/bin/python"), LaunchConfig(python="/envs/two/bin/python")]
    a.config, b.config = pythons
    assert run_labels([a, b]) == ["#3 python=…/one/bin/python", "#4 python=…/two/bin/python"]
    assert run_labels([a]) == ["#3"]
