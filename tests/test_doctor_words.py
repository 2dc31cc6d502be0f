"""What the doctor says, from diagnoses built in code (no runs): the headline follows the
verdicts, a cost reads as a cost, the review's strip plot and table share their numbers,
and the progress says where it is and about how long is left."""

from __future__ import annotations

from tflaunch.core.doctor.experiment import ArmResult, Diagnosis
from tflaunch.core.doctor.progress import DoctorProgress
from tflaunch.core.doctor.remedies import examine
from tflaunch.core.doctor.report import COLUMNS, doctor_review, report_rows, report_summary, report_text
from tflaunch.core.doctor.verdict import Saving, saving
from tflaunch.core.run.record import RunRecord
from tflaunch.core.settings.config import LaunchConfig
from tflaunch.core.sweep.plan import ARMS_AXIS, Candidate, Sweep, SweepPlan

BASE = LaunchConfig(model="sample:mlp")
COLD = [1.75, 1.76, 1.74, 1.77, 1.75]


def diagnosis(warm: bool = True) -> Diagnosis:
    """oneDNN off and on measured (neither helps: one a little slower), and warm start
    saving 1.58 s of 1.75 s (90 %), as the testers' Advisor did."""
    exam = examine(BASE, RunRecord(BASE), has_gpu=False, only={"onednn", "warm"})
    d = Diagnosis(exam, baseline=list(COLD))
    for arm, values in zip(exam.arms, ([1.82, 1.83, 1.81, 1.84, 1.82], [1.76, 1.74, 1.77, 1.75, 1.78]), strict=True):
        d.results.append(ArmResult(arm, values, saving=saving(values, d.baseline)))
    if warm:
        d.warm = saving([0.17, 0.16, 0.18, 0.17, 0.17], COLD)
    return d


def test_the_headline_names_the_measured_saving_and_what_it_takes():
    d = diagnosis()
    assert d.combined is None and d.warm is not None and d.warm.significant
    headline = report_summary(d, cli=False)[0]
    # Before: "No setting measurably saved time here: keep your settings." beside a 90 % saving.
    assert "keep your settings" not in headline
    assert headline.startswith("Largest measured saving: warm start, 1.58 s, 90% of its time to ready (95 % CI ")
    assert headline.endswith("faster): tick Warm launch in Launch script.")
    assert report_summary(d)[0].endswith("start it with tflaunch run --warm --profile NAME -- python your_script.py.")
    review = doctor_review(d)
    assert review.headline == headline
    assert report_summary(diagnosis(warm=False))[0] == "No setting measurably saved time here: keep your settings."


def test_a_cost_reads_as_a_cost_never_a_negative_saving():
    verdicts = {row[2]: row[5] for row in report_rows(diagnosis())}
    slower = verdicts["onednn=off"]
    assert slower.startswith("measured: costs 70.0 ms") or slower.startswith("no gain: "), slower
    for text in verdicts.values():
        assert "saves −" not in text and "−" not in text.split("(")[0], text
    close = Saving(-0.072, -0.15, 0.01, 1.75, 5)
    assert close.describe() == "no gain: 72.0 ms slower, within the noise (95 % CI 150 ms slower to 10.0 ms faster)"
    small = Saving(0.005, 0.002, 0.008, 1.75, 5)
    assert small.describe().startswith("no gain worth a setting: 5.0 ms faster, under 2% of its time to ready")
    assert Saving(-0.2, -0.25, -0.15, 1.0, 5).describe() == (
        "measured: costs 200 ms (95 % CI 150 ms to 250 ms slower) here")
    assert Saving(0.5, 0.45, 0.55, 1.5, 5).describe() == (
        "measured: saves 500 ms (95 % CI 450 ms to 550 ms faster) here, 33% of its time to ready")


def test_the_strip_plot_and_the_table_number_the_same_rows():
    d = diagnosis()
    review = doctor_review(d)
    header, rows = review.table
    assert header == list(COLUMNS) and header[0] == "#"
    numbered = {row[0]: row[2] for row in rows if row[0]}
    # The plot's strips are #1, #2, ... in order: each is the row of that number.
    assert {str(i + 1): name for i, (name, _, _) in enumerate(review.distributions)} == {
        "1": "baseline", "2": "onednn=off", "3": "onednn=on"}
    assert numbered == {"1": "your settings", "2": "onednn=off", "3": "onednn=on"}
    assert review.data is not None and review.data[0][0] == "#"
    text = report_text(d)
    assert text.splitlines()[2].startswith("#  Remedy")


def plan_sweep(arms: int, repeat: int = 3, warmup: int = 1) -> Sweep:
    keys = [f"arm{i}" for i in range(1, arms)]
    plan = SweepPlan(BASE, {ARMS_AXIS: keys}, repeat=repeat, warmup=warmup, racing=False)
    return Sweep(plan, [Candidate("baseline", BASE, baseline=True), *(Candidate(k, BASE) for k in keys)])


def test_progress_counts_the_arms_and_estimates_the_time_left_from_the_runs_so_far():
    now = [0.0]
    progress = DoctorProgress(repeat=3, warm=False, clock=lambda: now[0])
    progress.stage("examining sample:mlp: one run with your settings")
    now[0] += 2.0
    progress.stage("measuring 7 arms against the baseline, 3 runs each, interleaved")
    sweep = plan_sweep(8)  # the baseline and seven arms: 8 a round, 4 rounds (one warm-up)
    texts = []
    while (trial := sweep.next_trial()) is not None:
        now[0] += 2.0  # every run takes 2 s
        sweep.report(trial, 1.0)
        texts.append(progress.trial(sweep, trial, 1.0))
    assert texts[2].startswith("arm 3 of 8 (")
    assert ", warm-up), round 1 of 4: 1.00 s; about 58 s left" in texts[2]  # 29 runs left at 2 s
    assert texts[10].startswith("arm 3 of 8 (") and "round 2 of 4" in texts[10] and "about 42 s left" in texts[10]
    assert texts[-1].endswith("about 1 s left, more if a final A/B of the remedies that helped follows")
    assert (progress.done, progress.total) == (32, 32)
    progress.stage("verifying the combination (onednn=off) against the baseline")
    final = plan_sweep(2)
    trial = final.next_trial()
    now[0] += 2.0
    final.report(trial, 1.0)
    assert progress.trial(final, trial, 1.0).startswith("Final A/B: arm 1 of 2 (")
    warm = DoctorProgress(repeat=3, warm=True, clock=lambda: now[0])
    warm.stage("measuring 1 arm against the baseline")
    assert warm.left() == "time left not known yet"


def test_a_cost_smaller_than_a_saving_must_be_is_no_gain_not_a_cost():
    """Two identical arms measured 8 ms apart on a busy machine (95 % CI 0.6 to 28 ms slower)
    were called "measured: costs": a cost needs the size a saving needs."""
    from tflaunch.core.doctor.verdict import Saving

    jitter = Saving(seconds=-0.008, low=-0.0284, high=-0.00058, baseline=0.4, runs=3)
    assert not jitter.costly and jitter.describe().startswith("no gain: 8.0 ms slower, a cost under 2% ")
    real = Saving(seconds=-0.2, low=-0.25, high=-0.15, baseline=0.4, runs=3)
    assert real.costly and real.describe().startswith("measured: costs 200 ms")


def warm_only() -> Diagnosis:
    """A program's examination where only warm start was measured (the testers' Advisor)."""
    program = LaunchConfig(program=("python", "train_fit.py"), until="first_step")
    exam = examine(program, RunRecord(program), has_gpu=False, only={"warm"})
    d = Diagnosis(exam)
    d.warm = saving([2.5, 2.6, 2.4, 2.55, 2.45], [20.1, 20.3, 19.9, 20.2, 20.0])
    return d


def test_the_baseline_row_counts_the_cold_launches_warm_start_was_measured_against():
    """It said "0 runs" (and no figure) when warm start was all the doctor measured."""
    d = warm_only()
    baseline = next(row for row in report_rows(d) if row[1] == "baseline")
    assert baseline[3:5] == ["20.10 s", "5"], baseline


def test_progress_through_warm_start_counts_its_launches_and_time_left():
    """It said "about 1 s left" for minutes: warm start's launches were counted as done the
    moment they began, and nothing was said while they ran."""
    now = [0.0]
    progress = DoctorProgress(repeat=3, warm=True, clock=lambda: now[0])
    progress.stage("examining python train_fit.py: one run with your settings")
    now[0] += 10.0
    progress.stage("measuring warm start: 3 launches of your command cold and 3 of `tflaunch run --warm`, "
                   "alternated, each to the ready point")
    assert progress.left().startswith("about 1 min 10 s left"), progress.left()  # 7 launches at 10 s
    texts = []
    for _ in range(7):
        now[0] += 10.0
        texts.append(progress.run_ended())
    assert texts[0].startswith("warm start: launch 1 of 7; about 1 min left"), texts[0]
    assert texts[5].startswith("warm start: launch 6 of 7; about 10 s left"), texts[5]
    assert (progress.done, progress.total) == (7, 7)
    assert "about 1 s left" not in " ".join(texts[:-1])
