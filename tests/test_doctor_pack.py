"""The doctor's cache-pack arms: which apply here, how a price in training is said, and (slow
tier, real programs) a jit_compile program measured with its fill, and a program that does not
use XLA explained from its own run."""

from __future__ import annotations

from pathlib import Path

import pytest

from tflaunch.core.doctor.pack_arm import NO_GPU, PackArmResult, PackDiagnosis, arms_for, measure, no_xla_reason
from tflaunch.core.doctor.pack_report import pack_json, pack_lines, pack_rows
from tflaunch.core.doctor.verdict import Saving
from tflaunch.core.run.environment_facts import EnvironmentFacts
from tflaunch.core.run.record import RunRecord
from tflaunch.core.settings.config import LaunchConfig
from tflaunch.core.store.recorder import RunRecorder

PROGRAMS = Path(__file__).parent / "programs"
BASE = LaunchConfig(program=("python", "train.py"), until="first_step", steady=5)


def test_on_a_cpu_the_pack_is_measured_and_the_gpu_arms_say_why_not():
    arms, skipped = arms_for(BASE, has_gpu=False)
    assert [key for key, _ in arms] == ["xla_cache=on"] and arms[0][1].xla_cache
    assert set(skipped) == {"autotune_level=1", "autotune_level=2", "autotune_level=3", "autotune cache"}
    assert all(why == NO_GPU for why in skipped.values())


def test_on_a_gpu_each_autotune_level_joins_the_users_xla_flags():
    base = BASE.replace(extra_env={"XLA_FLAGS": "--xla_dump_to=/tmp/d"})
    arms, skipped = arms_for(base, has_gpu=True)
    assert skipped == {}
    assert [c.extra_env["XLA_FLAGS"] for k, c in arms if k.startswith("autotune")] == [
        f"--xla_dump_to=/tmp/d --xla_gpu_autotune_level={n}" for n in (1, 2, 3)]


def test_a_cure_that_slows_training_is_shown_with_its_price_and_payback():
    arm = PackArmResult("autotune_level=1", BASE, first=[1.0] * 3, steady=[0.2] * 3,
                        first_saving=Saving(2.0, 1.5, 2.5, 3.0, 3), steady_saving=Saving(-0.05, -0.06, -0.04, 0.01, 3))
    assert not arm.recommended  # the steady step takes the saving back
    assert arm.price() == "every later step 50.0 ms slower; the first step's saving is spent after 41 steps"
    kept = PackArmResult("xla_cache=on", BASE, first_saving=Saving(2.0, 1.5, 2.5, 3.0, 3),
                         steady_saving=Saving(0.0, -0.001, 0.001, 0.01, 3))
    assert kept.recommended and kept.price() == "steady step: no change"
    found = PackDiagnosis([3.0] * 3, [0.01] * 3, [kept, arm], fill_first=3.2, fill_bytes=2048, fill_entries=1)
    lines = pack_lines(found)
    assert any(line.startswith("Recommended: xla_cache=on, which saves 2.00 s") for line in lines)
    assert any("200 ms more than the median run without the pack" in line for line in lines)
    assert [row[2] for row in pack_rows(found)][:3] == ["your settings: first step †", "xla_cache=on: first step †",
                                                        "autotune_level=1: first step †"]
    assert pack_json(found)["arms"][1]["recommended"] is False


def test_a_program_without_xla_is_told_why_from_what_its_run_reported():
    record = RunRecord(BASE)
    record.environment = EnvironmentFacts({"gpus": []})
    why = no_xla_reason(record, BASE.replace(extra_env={"TF_DETERMINISTIC_OPS": "1"}))
    assert "looked up no XLA program" in why and "TensorFlow's own lines" in why
    assert "op determinism is on" in why and "saw no GPU" in why and "jit_compile=True" in why
    quiet = RunRecord(BASE.replace(log_level=2))
    quiet.environment = EnvironmentFacts({"gpus": [{"name": "GPU:0"}]})
    why = no_xla_reason(quiet, quiet.config)
    assert "log level hides" in why and "tf.distribute strategy" in why and "saw no GPU" not in why
    rows = pack_rows(PackDiagnosis(note="the program does not use XLA: " + why))
    assert rows[0][5].startswith("not measured: the program does not use XLA")


@pytest.mark.slow
def test_the_doctor_measures_the_pack_on_a_jit_program_and_explains_a_program_without_xla():
    said: list[str] = []
    recorder = RunRecorder(None, "doctor")
    jit = measure(LaunchConfig(program=("python", str(PROGRAMS / "fit_jit.py"), "--steps", "12"), steady=3,
                               timeout=120), 3, said.append, recorder, None, has_gpu=False)
    assert jit.uses_xla and jit.note is None and jit.fill_entries >= 1 and jit.fill_first is not None
    (arm,) = jit.arms
    assert len(arm.first) == len(jit.baseline_first) == 3 and len(arm.steady) == 3
    assert arm.first_saving is not None and arm.steady_saving is not None
    plain = measure(LaunchConfig(program=("python", str(PROGRAMS / "fit_tfdata.py"), "--steps", "12"), steady=3,
                                 timeout=120), 3, said.append, recorder, None, has_gpu=False)
    assert plain.uses_xla is False and plain.arms == []
    assert plain.note is not None and "does not use XLA" in plain.note and "saw no GPU" in plain.note


def test_a_model_called_without_xla_is_not_measured_and_says_which_remedies_measure_it():
    said: list[str] = []
    found = measure(LaunchConfig(model="sample:mlp"), 3, said.append, RunRecorder(None, "doctor"), None,
                    has_gpu=False)
    assert found.uses_xla is False and found.arms == [] and said == []
    assert found.note is not None and "jit_compile and xla_auto remedies" in found.note


def test_warm_start_measured_with_the_pack_is_said_to_be_one_cure_with_it():
    from tflaunch.core.doctor.experiment import Diagnosis
    from tflaunch.core.doctor.remedies import examine
    from tflaunch.core.doctor.report import report_summary

    exam = examine(BASE, RunRecord(BASE), has_gpu=False, only={"warm", "pack"})
    assert "pack" not in exam.skipped and exam.arms == []  # measured apart, as warm start is
    warm = Saving(1.5, 1.2, 1.8, 4.0, 3)
    lines = report_summary(Diagnosis(exam, warm=warm, warm_with_pack=True))
    assert any("measured with the cache pack on both sides" in line for line in lines)
    assert not any("both sides" in line for line in report_summary(Diagnosis(exam, warm=warm)))


def test_with_only_the_pack_measured_the_table_has_no_empty_baseline_row():
    from tflaunch.core.doctor.experiment import Diagnosis
    from tflaunch.core.doctor.remedies import examine
    from tflaunch.core.doctor.report import report_rows

    exam = examine(BASE, RunRecord(BASE), has_gpu=False, only={"pack"})
    kept = PackArmResult("xla_cache=on", BASE, first=[1.0] * 3, steady=[0.1] * 3,
                         first_saving=Saving(2.0, 1.5, 2.5, 3.0, 3))
    rows = report_rows(Diagnosis(exam, pack=PackDiagnosis([3.0] * 3, [0.1] * 3, [kept])))
    assert [row[2] for row in rows[:2]] == ["your settings: first step †", "xla_cache=on: first step †"]
