"""What a review says, as Markdown and CSV, built from runs, comparisons, sweeps and profiles."""

from __future__ import annotations

import csv
import io
import random

from tflaunch.core.report.review import comparison_review, profile_review, run_review, sweep_review
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


def test_a_comparison_review_names_the_fastest_and_the_differences():
    slow, fast = finished_record(ready_s=2.0), finished_record(ready_s=1.0, intra=2)
    review = comparison_review([slow, fast], baseline=0)
    assert review.headline.startswith("Fastest to ready: run 2 intra=2, 1.02 s, 1.98× the baseline")
    rows = list(csv.reader(io.StringIO(review.csv())))
    load = next(r for r in rows if r[0] == "Load")
    assert load[1] == "400 ms" and load[2] == "200 ms (−200 ms, 2.00× faster)"
    assert len(review.series) == 2


def test_a_sweep_review_carries_the_verdict_and_the_distributions():
    candidates = SweepPlan(LaunchConfig(), {"intra": ["2"]}).candidates()
    sweep = Sweep(SweepPlan(LaunchConfig(), {"intra": ["2"]}, repeat=6, warmup=0, racing=False), candidates)
    rng = random.Random(0)
    while (trial := sweep.next_trial()) is not None:
        sweep.report(trial, rng.gauss(1.0 if trial.candidate.key == "intra=2" else 1.3, 0.01))
    review = sweep_review(sweep, finished_record(), sweep_id=7)
    assert review.headline.startswith("Winner: intra=2: 1.3") and "95% CI" in review.headline
    assert review.subtitle.startswith("sweep #7, ")  # and the date it ran
    assert [d[0] for d in review.distributions] == ["intra=2", "baseline"]
    assert review.table[1][0][:3] == ["1", "intra=2", review.table[1][0][2]]


def test_a_profile_review_lays_its_medians_end_to_end():
    evidence = evidence_from_runs([finished_record()])
    review = profile_review("fast", evidence, LaunchConfig(intra=2))
    spans = review.series[0].spans
    assert spans["import"][0] == spans["spawn"][1] and review.title == "Launch profile fast"
