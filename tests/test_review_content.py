"""What a review says, as Markdown and CSV, built from runs, comparisons, sweeps and profiles."""

from __future__ import annotations

import csv
import io
import random
import time

import pytest

from tflaunch.core.report.review import comparison_review, profile_review, run_review, sweep_review
from tflaunch.core.run.environment_facts import EnvironmentFacts
from tflaunch.core.settings.config import LaunchConfig
from tflaunch.core.store.profiles import evidence_from_runs
from tflaunch.core.sweep.plan import Sweep, SweepPlan

from .builders import finished_record


def test_a_run_review_has_every_number_with_its_unit():
    record = finished_record()
    review = run_review(record, profile="fast")
    facts = dict(review.facts)
    assert facts["Profile"] == "fast" and facts["Time to ready"] == "1.02 s"
    assert facts["Environment"].startswith("TensorFlow 2.21.0")
    header, rows = review.table
    assert header == ["Phase", "Duration", "RSS at end", "Peak RSS"] and rows[0][0] == "Spawn"
    # A figure has its unit; a cell that does not apply (memory of "Other") says so with a dash.
    assert all(cell.endswith((" s", " ms", " µs", " MiB", " GiB", "/call")) or cell == "–"
               for row in rows for cell in row[1:])
    assert rows[-1][:2] == ["Steady state", "1.0 ms/call"]
    assert ["Other (between phases)", "0 µs", "–", "–"] in rows
    markdown = review.markdown()
    assert markdown.startswith("# sample:mlp: Ready in 1.02 s") and "| Load | 200 ms |" in markdown


def test_a_comparison_review_of_one_run_each_names_no_winner():
    slow, fast = finished_record(ready_s=2.0), finished_record(ready_s=1.0, intra=2)
    review = comparison_review([slow, fast], baseline=0)
    # One run a side has no spread: a faster run may be a warm cache, never "1.98× the baseline".
    assert review.headline == "No verdict: 1 run each: no spread; measure 3+ to compare."
    header, rows = review.table
    assert rows[1][:5] == ["B intra=2", "1", "1.02 s", "1 run: no spread", "1 run: measure 3+ to compare"]
    assert len(review.series) == 2


def rows_of(review) -> tuple[list[str], list[dict[str, str]]]:
    header, *rows = list(csv.reader(io.StringIO(review.csv())))
    return header, [dict(zip(header, row, strict=True)) for row in rows]


def test_a_run_csv_has_numbers_a_spreadsheet_can_sum():
    header, rows = rows_of(run_review(finished_record()))
    assert header == ["Phase", "Duration (s)", "Per call (s)", "RSS at end (bytes)", "Peak RSS (bytes)"]
    load = next(r for r in rows if r["Phase"] == "Load")
    assert float(load["Duration (s)"]) == pytest.approx(0.2) and load["RSS at end (bytes)"] == "100"
    assert load["Per call (s)"] == ""  # nothing to say is an empty cell, not a dash
    steady = next(r for r in rows if r["Phase"] == "Steady state")
    assert float(steady["Per call (s)"]) == pytest.approx(0.001) and steady["Peak RSS (bytes)"] == "200"
    ready = sum(float(r["Duration (s)"]) for r in rows if r["Phase"] != "Steady state")
    assert ready == pytest.approx(1.02)  # the phases and the time between them add up to time to ready
    for row in rows:
        for name, cell in row.items():
            if name != "Phase" and cell:
                float(cell)  # every figure is a plain number


def test_a_comparison_csv_has_a_row_per_run_and_a_unit_per_column():
    slow, fast = finished_record(ready_s=2.0), finished_record(ready_s=1.0, intra=2)
    header, rows = rows_of(comparison_review([slow, fast], baseline=0))
    assert header[:4] == ["Run", "Side", "Settings", "Baseline"] and header[-1] == "Peak memory (bytes)"
    assert all(name.endswith(" (s)") for name in header[4:-1])
    assert [r["Baseline"] for r in rows] == ["true", "false"]
    assert [float(r["Time to ready (s)"]) for r in rows] == pytest.approx([2.02, 1.02])
    assert float(rows[0]["Load (s)"]) - float(rows[1]["Load (s)"]) == pytest.approx(0.2)
    assert [int(r["Peak memory (bytes)"]) for r in rows] == [400, 400]


def test_a_sweep_csv_has_numbers_and_true_or_false():
    header, rows = rows_of(sweep_review(measured_sweep(), [finished_record()]))
    assert header[3] == "Median time to ready (s)" and "Stopped early" in header
    winner, baseline = rows
    assert (winner["Setting"], winner["Baseline"], baseline["Baseline"]) == ("intra=2", "false", "true")
    assert float(winner["Median time to ready (s)"]) == pytest.approx(1.0, abs=0.02)
    assert float(winner["vs baseline (×)"]) > 1.2 and int(winner["Runs"]) == 6
    assert winner["Stopped early"] == "false" and baseline["vs baseline (×)"] == "1"


def test_a_sweep_review_takes_its_date_environment_and_settings_from_its_own_runs():
    base = LaunchConfig(python="/opt/envs/tf220/bin/python", xla_auto=True)
    sweep_runs = [finished_record(at=1_800_000_000.0 + i * 60) for i in range(3)]
    for record in sweep_runs:
        record.config = base
        record.environment = EnvironmentFacts({"tensorflow": "2.20.0", "cpu": "EPYC 9654", "cores": 8,
                                               "gpus": [{"model": "NVIDIA H100"}]})
    review = sweep_review(measured_sweep(base), sweep_runs, sweep_id=3)
    facts = dict(review.facts)
    when = time.strftime("%Y-%m-%d", time.localtime(1_800_000_000.0))
    assert review.subtitle.startswith(f"sweep #3, {when} ") and " to " in review.subtitle
    assert facts["Environment"] == "TensorFlow 2.20.0, EPYC 9654 (8 cores), NVIDIA H100"
    assert facts["Interpreter"] == "/opt/envs/tf220/bin/python" and "xla_auto=on" in facts["Settings"]
    # Runs in different environments are each named, never one taken for all.
    sweep_runs[0].environment = EnvironmentFacts({"tensorflow": "2.21.0"})
    assert dict(sweep_review(measured_sweep(base), sweep_runs).facts)["Environment"] == (
        "TensorFlow 2.21.0, no GPU (1 run); TensorFlow 2.20.0, EPYC 9654 (8 cores), NVIDIA H100 (2 runs)")


def test_a_comparison_names_each_runs_interpreter_and_environment_when_they_differ():
    old, new = finished_record(at=1_700_000_000.0), finished_record(at=1_800_000_000.0, intra=2)
    old.config = old.config.replace(python="/opt/old/bin/python")
    old.environment = EnvironmentFacts({"tensorflow": "2.19.0"})
    facts = dict(comparison_review([old, new]).facts)
    # By side: the letters the legend, the table and the chart share.
    assert facts["Environment"] == "A: TensorFlow 2.19.0, no GPU; B: TensorFlow 2.21.0, no GPU"
    assert facts["Interpreter"].startswith("A: /opt/old/bin/python; B: ")


def measured_sweep(base: LaunchConfig | None = None) -> Sweep:
    """intra=2 at 1.0 s against a baseline at 1.3 s, six trials each."""
    plan = SweepPlan(base or LaunchConfig(), {"intra": ["2"]}, repeat=6, warmup=0, racing=False)
    sweep = Sweep(plan, plan.candidates())
    rng = random.Random(0)
    while (trial := sweep.next_trial()) is not None:
        sweep.report(trial, rng.gauss(1.0 if trial.candidate.key == "intra=2" else 1.3, 0.01))
    return sweep


def test_a_sweep_review_carries_the_verdict_and_the_distributions():
    review = sweep_review(measured_sweep(), finished_record(), sweep_id=7)
    assert review.headline.startswith("Winner: intra=2: 1.3") and "95% CI" in review.headline
    assert review.subtitle.startswith("sweep #7, ")  # and the date it ran
    assert [d[0] for d in review.distributions] == ["intra=2", "baseline"]
    assert review.table[1][0][:3] == ["1", "intra=2", review.table[1][0][2]]


def test_a_profile_review_lays_its_medians_end_to_end():
    evidence = evidence_from_runs([finished_record()])
    review = profile_review("fast", evidence, LaunchConfig(intra=2))
    spans = review.series[0].spans
    assert spans["import"][0] == spans["spawn"][1] and review.title == "Launch profile fast"


def test_a_program_run_review_names_its_command_line_with_its_quotes():
    from .builders import record_through

    record = record_through(["import"])
    record.config = LaunchConfig(program=("python", "my train.py", "--name", "two words"), until="exit")
    facts = dict(run_review(record).facts)
    assert facts["Program"].startswith("python 'my train.py' --name 'two words' (until exit"), facts["Program"]
