"""tflaunch doctor: remedies measured on the model against the baseline, verdicts only from
enough runs, the significant ones combined and verified, a profile only when verified.

A fake child whose start-up the settings really change (tests/fake_child.py "remedies":
oneDNN off saves 0.4 s, one intra-op thread costs 0.2 s) stands in for TensorFlow, so the
statistics meet a known truth; one real-TensorFlow doctor run is in the slow tier."""

from __future__ import annotations

import json

import pytest

from tflaunch.core.cli.main import main
from tflaunch.core.doctor.remedies import Arm, combine, examine
from tflaunch.core.doctor.report import report_text
from tflaunch.core.doctor.verdict import MIN_RUNS, saving, verdict_text
from tflaunch.core.paths import profiles_dir
from tflaunch.core.run.record import RunRecord
from tflaunch.core.settings.config import LaunchConfig
from tflaunch.core.store.profiles import ProfileStore

from .builders import fake_python
from .fake_child import CHILD_ENV


def test_a_clear_saving_is_measured_with_its_interval():
    result = saving([1.0, 1.02, 0.98, 1.01, 0.99], [1.5, 1.52, 1.49, 1.51, 1.48])
    assert result is not None and result.significant and 0.45 < result.seconds < 0.55
    assert result.low > 0.4 and result.high < 0.6
    assert result.describe().startswith("measured: saves 500 ms (95 % CI ") and " ms faster) here, " in \
        result.describe()


def test_overlapping_runs_are_no_effect_and_a_loss_is_a_cost():
    same = saving([1.0, 1.2, 0.9, 1.1], [1.05, 0.95, 1.15, 1.0])
    assert same is not None and not same.significant and same.describe().startswith("no gain: ")
    worse = saving([2.0, 2.1, 2.05], [1.0, 1.05, 1.02])
    assert worse is not None and worse.costly and worse.describe().startswith("measured: costs 1.03 s (95 % CI ")
    assert worse.describe().endswith(" slower) here")


def test_no_verdict_from_fewer_than_three_runs():
    assert saving([1.0, 1.0], [2.0, 2.0, 2.0]) is None
    assert verdict_text(None, 2) == f"not enough runs for a verdict (2 of {MIN_RUNS})"


def test_the_remedies_that_apply_and_why_the_others_do_not():
    base = LaunchConfig(model="sample:mlp")
    exam = examine(base, RunRecord(base), has_gpu=False)
    keys = [a.key for a in exam.arms]
    assert {"format=savedmodel", "format=keras", "format=h5", "onednn=off", "onednn=on", "jit_compile=on"} <= set(keys)
    assert exam.skipped["gpu"] == "no GPU here (NVML found none)"
    assert exam.skipped["pyc"].startswith("not judged: no import X-ray was taken"), "judged from an X-ray only"
    assert not next(a for a in exam.arms if a.key == "jit_compile=on").launchable  # your code, not a launch
    gpu = examine(base, RunRecord(base), has_gpu=True, only={"gpu"})
    assert [a.key for a in gpu.arms] == ["cuda_cache=warm", "allocator=cuda_malloc_async", "cudnn_autotune=off"]
    built = examine(LaunchConfig(model="/m/build.py:make"), RunRecord(base), has_gpu=False, only={"format"})
    assert "built by your code" in built.skipped["format"]


def test_combining_takes_each_arms_change():
    base = LaunchConfig(model="sample:mlp", extra_env={"A": "1"})
    arms = [Arm("onednn=off", "onednn", base.replace(onednn=False)),
            Arm("format=savedmodel", "format", base.replace(model="/cache/mlp")),
            Arm("pyc=compiled", "pyc", base.replace(extra_env={"A": "1", "PYTHONPYCACHEPREFIX": "/c"}))]
    combined = combine(base, arms)
    assert combined.onednn is False and combined.model == "/cache/mlp"
    assert combined.extra_env == {"A": "1", "PYTHONPYCACHEPREFIX": "/c"}


@pytest.mark.slow  # real child processes; make test keeps to its 6 minutes, CI runs this tier too
def test_doctor_recommends_what_saves_verifies_it_and_saves_the_profile(tmp_path, capsys):
    python = fake_python(tmp_path)
    code = main(["doctor", "--model", "sample:mlp", "--python", python, "--env", f"{CHILD_ENV}=remedies",
                 "--only", "onednn", "--repeat", "3", "--save-profile", "fast", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    arms = {a["arm"]: a for a in out["arms"]}
    assert arms["onednn=off"]["saving"]["significant"] and 0.3 < arms["onednn=off"]["saving"]["saves_s"] < 0.55
    assert arms["onednn=on"]["verdict"].startswith(("no gain: ", "no gain worth a setting: "))
    assert out["combined"] == ["onednn=off"] and out["verified"]
    assert out["does_not_apply"]["format"] == "not chosen for this examination"
    profile = ProfileStore(profiles_dir()).load("fast")
    assert profile.config.onednn is False and profile.config.intra == 0
    assert profile.evidence["doctor"]["remedies"] == ["onednn=off"]


def test_nothing_is_saved_when_nothing_helps(tmp_path, capsys):
    python = fake_python(tmp_path)
    code = main(["doctor", "--model", "sample:mlp", "--python", python, "--env", f"{CHILD_ENV}=ok",
                 "--only", "onednn", "--repeat", "3", "--save-profile", "never"])
    text = capsys.readouterr().out
    assert code == 0
    # Nothing changes this child's start: either no arm measured a saving, or one did by the
    # chance of a busy machine and the final A/B refused it. Either way nothing is saved.
    assert "No setting measurably saved time here" in text or "NOT verified" in text
    assert "Profile never not saved" in text and not (profiles_dir() / "never.toml").exists()


def test_a_model_that_does_not_run_is_refused_with_its_reason(tmp_path, capsys):
    code = main(["doctor", "--model", "sample:mlp", "--python", fake_python(tmp_path), "--env", f"{CHILD_ENV}=fail",
                 "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 2 and "nothing to compare" in out["failure"]["message"]
    assert main(["doctor", "--model", "sample:mlp", "--only", "magic"]) == 2


@pytest.mark.slow
def test_doctor_on_a_real_model(capsys):
    code = main(["doctor", "--model", "sample:mlp", "--only", "onednn,warm", "--repeat", "3"])
    text = capsys.readouterr().out
    assert code == 0 and "warm start (cold" in text
    print(text)


def test_report_text_lists_every_remedy():
    from tflaunch.core.doctor.experiment import Diagnosis

    base = LaunchConfig(model="sample:mlp")
    exam = examine(base, RunRecord(base), has_gpu=False, only={"onednn"})
    text = report_text(Diagnosis(exam, baseline=[1.0, 1.0, 1.0]))
    for remedy in ("format", "threads", "jit_compile", "pyc", "warm", "gpu"):
        assert remedy in text


def test_a_doctors_sweep_is_reported_like_any_sweep(tmp_path, capsys):
    """The doctor stores its arms as a sweep whose settings are its own choice, not a grid of
    axes: `tflaunch report sweep:N` reads each arm's settings from its runs."""
    code = main(["doctor", "--model", "sample:mlp", "--python", fake_python(tmp_path), "--env", f"{CHILD_ENV}=ok",
                 "--only", "onednn", "--repeat", "1", "--json"])
    sweep_id = json.loads(capsys.readouterr().out)["sweeps"][0]
    assert code == 0
    markdown, table = tmp_path / "doctor.md", tmp_path / "doctor.csv"
    assert main(["report", f"sweep:{sweep_id}", "-o", str(markdown)]) == 0
    assert main(["report", f"sweep:{sweep_id}", "-o", str(table)]) == 0
    err = capsys.readouterr().err
    assert err == "", err
    text = markdown.read_text()
    assert "onednn=off" in text and "onednn=on" in text and "baseline" in text
    assert "the doctor's arms (onednn=off, onednn=on) against the baseline" in text
    rows = table.read_text().splitlines()
    assert sum(row.split(",")[1] in ("baseline", "onednn=off", "onednn=on") for row in rows[1:]) == 3, rows
