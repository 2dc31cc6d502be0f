"""A comparison sets side against side: each setting's median, range and number of runs,
and a difference claimed only where both sides have 3 runs or more and their ranges do not
overlap (issue: ±1 ms coloured and "1.36× the baseline" headlined from one run each)."""

from __future__ import annotations

import csv
import io

import pytest

from tflaunch.core.report.review import comparison_review
from tflaunch.core.report.sides import Difference, differences, sides_of, sweep_axes
from tflaunch.core.run.environment_facts import EnvironmentFacts
from tflaunch.core.settings.config import LaunchConfig
from tflaunch.core.stats import spread
from tflaunch.core.sweep.axes import apply_value

from .compare_builders import side, sides


def test_one_run_each_is_said_plainly_and_claims_no_difference():
    review = comparison_review(side([2.0]) + side([1.0], intra=2, first_id=2))
    assert review.headline == "No verdict: 1 run each: no spread; measure 3+ to compare."
    assert "×" not in review.headline and "faster" not in review.headline
    header, rows = review.table
    assert header == ["Side", "Runs", "Ready, median", "Ready, min–max", "vs baseline", "Peak memory"]
    assert rows[0][:5] == ["A intra=default (baseline)", "1", "2.02 s", "1 run: no spread", "baseline"]
    assert rows[1][:5] == ["B intra=2", "1", "1.02 s", "1 run: no spread", "1 run: measure 3+ to compare"]
    assert dict(review.facts)["Spread"] == "1 run each: no spread; measure 3+ to compare."
    # The Markdown's phases: every side's figure with its count, none with a difference.
    markdown = review.markdown()
    assert "| Load | 400 ms (1 run: no spread) | 200 ms (1 run: no spread) |" in markdown
    assert "faster" not in markdown and "slower" not in markdown


def test_three_runs_a_side_apart_give_a_result_with_medians_ranges_and_counts():
    runs = side([2.0, 2.01, 2.02]) + side([1.0, 1.01, 1.02, 1.03], intra=2, first_id=4)
    review = comparison_review(runs)
    assert review.title == "sample:mlp: 2 settings compared, 7 runs"
    assert review.headline == ("Fastest to ready: B intra=2, 1.03 s (1.02 s–1.05 s, n=4), 995 ms faster than the "
                               "baseline's 2.03 s (2.02 s–2.04 s, n=3), 1.96× as fast")
    _, rows = review.table
    assert rows[1] == ["B intra=2", "4", "1.03 s", "1.02 s–1.05 s", "−995 ms, 1.96× faster", "0.0 MiB"]
    assert dict(review.facts)["Runs compared"] == "A: #1, #2, #3 (3 runs, baseline); B: #4, #5, #6 and 1 more (4 runs)"
    assert "| Load | 402 ms (400 ms–404 ms, n=3) | 203 ms (200 ms–206 ms, n=4) |" in review.markdown()
    table = list(csv.DictReader(io.StringIO(review.csv())))
    assert [(r["Run"], r["Side"], r["Baseline"]) for r in table] == [
        ("#1", "A", "true"), ("#2", "A", "true"), ("#3", "A", "true"), ("#4", "B", "false"), ("#5", "B", "false"),
        ("#6", "B", "false"), ("#7", "B", "false")]


def test_overlapping_ranges_are_within_the_noise_even_with_a_cold_first_run():
    noisy = comparison_review(side([1.0, 1.1, 1.2]) + side([1.05, 1.15, 1.25], intra=2, first_id=4))
    assert noisy.headline.startswith("No clear difference in time to ready: the fastest, B intra=2, 1.17 s")
    assert noisy.table[1][1][4] == "within the noise (50.0 ms slower)"
    # A cold first run widens the baseline's range over the other side's: no claim either.
    cold = comparison_review(side([3.0, 1.0, 1.02]) + side([0.99, 1.0, 1.01], intra=2, first_id=4))
    assert cold.headline.startswith("No clear difference") and "×" not in cold.headline


def test_a_side_with_too_few_runs_is_not_judged_but_the_others_are():
    runs = side([2.0, 2.1, 2.05]) + side([1.0], intra=2, first_id=4) + side([1.0, 1.01, 1.02], intra=3, first_id=5)
    review = comparison_review(runs)
    assert review.headline.startswith("Fastest to ready: C intra=3") and "(sides with fewer than 3 runs not judged)" \
        in review.headline
    assert review.table[1][1][4] == "1 run: measure 3+ to compare"
    assert dict(review.facts)["Spread"] == "B has 1 run (no spread): measure 3+ to compare."
    few_baseline = comparison_review(side([2.0, 2.1]) + side([1.0, 1.01, 1.02], intra=2, first_id=3))
    assert few_baseline.headline == "No verdict: A has 2 runs: measure 3+ to compare."
    assert few_baseline.table[1][1][4] == "baseline has 2 runs: measure 3+ to compare"


def test_a_difference_is_real_only_with_three_runs_a_side_and_ranges_apart():
    assert not Difference(spread([1.0]), spread([2.0])).real, "one run each: no spread"
    assert not Difference(spread([1.0, 1.01]), spread([2.0, 2.01, 2.02])).enough
    assert Difference(spread([1.0, 1.01, 1.02]), spread([2.0, 2.01, 2.02])).faster
    close = Difference(spread([1.000, 1.001, 1.002]), spread([1.0015, 1.0025, 1.0035]))  # ±1 ms, overlapping
    assert close.enough and not close.real and close.versus() == "within the noise (1.5 ms faster)"
    assert Difference(spread([1.0, 1.01, 1.02]), spread([2.0, 2.01, 2.02])).describe() == (
        "1.01 s (1.00 s–1.02 s, n=3): −1.00 s, 1.99× faster")
    assert Difference(spread([1.0]), spread([2.0])).describe() == "1.00 s (1 run: no spread)"


def test_runs_group_into_sides_by_settings_and_environment():
    runs = side([1.0, 1.1]) + side([1.2], intra=2, first_id=3) + side([1.3], first_id=4)
    runs[3].environment = EnvironmentFacts({"tensorflow": "2.15.0"})  # the same settings elsewhere: a side of its own
    grouped = sides_of(runs)
    assert [(s.letter, s.ident, s.n) for s in grouped] == [("A", "#1, #2", 2), ("B", "#3", 1), ("C", "#4", 1)]
    table = differences(grouped, ["ready"])
    assert table[0]["ready"].value is not None and table[0]["ready"].value.n == 2


def test_the_settings_compared_become_a_sweep_that_measures_them_again():
    base = LaunchConfig(model="sample:mlp")
    others = [base.replace(intra=2, onednn=False), base.replace(intra=4, visible_gpus=(0, 1), memory_limit_mb=512),
              base.replace(python="/envs/b/bin/python")]
    axes, fixed = sweep_axes(base, others)
    assert axes == {"intra": ["0", "2", "4"], "onednn": ["default", "off"], "gpus": ["all", "0+1"],
                    "memory_limit": ["none", "512"]}
    assert fixed == ["python"]
    for config in (base, *others):  # each value means, to the sweep, what the compared setting was
        for axis, name in (("intra", "intra"), ("onednn", "onednn"), ("gpus", "visible_gpus"),
                           ("memory_limit", "memory_limit_mb")):
            from tflaunch.core.report.sides import axis_text

            text = axis_text(name, getattr(config, name))
            assert getattr(apply_value(base, axis, text, str), name) == getattr(config, name), (axis, text)


@pytest.mark.parametrize("count", [2, 3, 4, 6, 8])
def test_every_side_has_its_count_and_spread_in_the_table(count):
    review = comparison_review(sides(count, runs_each=3))
    _, rows = review.table
    assert [row[1] for row in rows] == ["3"] * count
    assert all("–" in row[3] and row[3].endswith(" s") for row in rows)
