"""Sweep statistics, interleaving and racing, on known numbers (no processes)."""

from __future__ import annotations

import random
import statistics

import pytest

from tflaunch.core.settings.config import LaunchConfig
from tflaunch.core.stats import spread
from tflaunch.core.store.history import History
from tflaunch.core.sweep.plan import PlanError, Sweep, SweepPlan, outcome, verdict
from tflaunch.core.sweep.report import result_rows
from tflaunch.core.sweep.size import estimate_seconds, recent_ready_times
from tflaunch.core.sweep.stats import is_noisy, ratio_to_baseline

from .builders import finished_record, record_through


def test_spread_of_known_values():
    s = spread([5.0, 1.0, 3.0, 2.0, 4.0])
    assert (s.n, s.median, s.low, s.high, s.q1, s.q3, s.iqr) == (5, 3.0, 1.0, 5.0, 2.0, 4.0, 2.0)
    assert spread([7.0]).iqr == 0


def test_bootstrap_interval_covers_the_true_ratio_and_is_reproducible():
    rng = random.Random(1)
    baseline = [rng.lognormvariate(0.3, 0.05) for _ in range(15)]  # true median e^0.3
    faster = [rng.lognormvariate(0.0, 0.05) for _ in range(15)]  # true median 1
    ratio = ratio_to_baseline(faster, baseline)
    true = 2.718281828 ** 0.3
    assert ratio.low < true < ratio.high and ratio.clear
    assert ratio.estimate == pytest.approx(statistics.median(baseline) / statistics.median(faster))
    assert ratio_to_baseline(faster, baseline) == ratio, "seeded: the same data gives the same interval"


def test_two_samples_of_one_distribution_are_not_called_different():
    rng = random.Random(2)
    a = [rng.gauss(2.0, 0.2) for _ in range(10)]
    b = [rng.gauss(2.0, 0.2) for _ in range(10)]
    assert not ratio_to_baseline(a, b).clear
    assert is_noisy(spread(a), spread(b))


def plan(values=("1", "2", "3", "4", "5", "6"), **kw) -> SweepPlan:
    return SweepPlan(LaunchConfig(), {"intra": list(values)}, **kw)


def test_candidates_include_the_baseline_once():
    candidates = plan(values=("0", "2")).candidates()
    assert [c.key for c in candidates] == ["intra=0 (baseline)", "intra=2"]
    assert [c.key for c in plan(values=("2",)).candidates()] == ["baseline", "intra=2"]
    with pytest.raises(PlanError, match="cannot vary 'colour'"):
        SweepPlan(LaunchConfig(), {"colour": ["red"]}).candidates()
    with pytest.raises(PlanError, match="'x' is not a value for intra"):
        plan(values=("x",)).candidates()


def test_rounds_are_interleaved_shuffled_and_never_repeat_back_to_back():
    sweep = Sweep(plan(repeat=4, warmup=1, racing=False), plan().candidates())
    order = []
    while (trial := sweep.next_trial()) is not None:
        order.append((trial.candidate.key, trial.warmup))
        sweep.report(trial, 1.0)
    keys = [k for k, _ in order]
    per_round = len(sweep.candidates)
    rounds = [keys[i:i + per_round] for i in range(0, len(keys), per_round)]
    assert len(rounds) == 5 and all(sorted(r) == sorted(rounds[0]) for r in rounds), "each round runs each once"
    assert len({tuple(r) for r in rounds}) > 1, "the order changes between rounds"
    assert all(a != b for a, b in zip(keys, keys[1:], strict=False)), "no candidate twice in a row"
    assert [w for _, w in order[:per_round]] == [True] * per_round and not any(w for _, w in order[per_round:])
    assert all(len(v) == 4 for v in sweep.values.values()), "warm-up trials are discarded"
    assert sweep.trials_run == sweep.planned_without_racing


def synthetic(sweep: Sweep, means: dict[str, float], noise: float, seed: int = 3) -> None:
    rng = random.Random(seed)
    while (trial := sweep.next_trial()) is not None:
        sweep.report(trial, rng.gauss(means[trial.candidate.key], noise))


def test_racing_finds_the_known_best_and_stops_the_clearly_worse():
    candidates = plan().candidates()
    means = {c.key: 2.0 + 0.02 * i for i, c in enumerate(candidates)}
    best = candidates[4].key
    means[best] = 1.2
    sweep = Sweep(plan(repeat=10, racing=True), candidates)
    synthetic(sweep, means, noise=0.05)
    assert sweep.leader().candidate.key == best
    assert set(sweep.stopped) == {c.key for c in candidates} - {best}
    assert all("slower than the leader's slowest" in reason and "worse than intra=4" in reason
               for reason in sweep.stopped.values())
    assert sweep.trials_run <= 0.5 * sweep.planned_without_racing


def test_racing_keeps_close_contenders_running():
    candidates = plan(values=("1", "2")).candidates()
    means = {c.key: 2.0 for c in candidates}
    sweep = Sweep(plan(values=("1", "2"), repeat=6, racing=True), candidates)
    synthetic(sweep, means, noise=0.3)
    assert not sweep.stopped and all(len(v) == 6 for v in sweep.values.values())


def test_a_candidate_that_keeps_failing_is_stopped_and_reported():
    candidates = plan(values=("1", "2")).candidates()
    sweep = Sweep(plan(values=("1", "2"), repeat=3, racing=False), candidates)
    while (trial := sweep.next_trial()) is not None:
        sweep.report(trial, None if trial.candidate.key == "intra=2" else 1.0)
    assert sweep.stopped["intra=2"] == "stopped: failed 2 times"
    result = {r.candidate.key: r for r in sweep.results()}["intra=2"]
    assert result.spread is None and verdict(result, "ready") == "intra=2: no successful trial"


def test_the_verdict_reads_like_a_review_sentence():
    candidates = plan(values=("2",)).candidates()
    sweep = Sweep(plan(values=("2",), repeat=12, warmup=0, racing=False), candidates)
    synthetic(sweep, {"baseline": 2.62, "intra=2": 2.0}, noise=0.03)
    winner = sweep.leader()
    text = verdict(winner, "ready")
    assert text.startswith("intra=2: 1.3") and "× faster to ready than baseline (95% CI 1." in text
    assert text.endswith("12 runs")


def test_racing_does_not_stop_a_setting_over_a_difference_too_small_to_matter():
    candidates = plan(values=("1", "2")).candidates()
    sweep = Sweep(plan(values=("1", "2"), repeat=5, racing=True), candidates)
    # Ranges apart but only 1 % slower: below MIN_EFFECT, so everything keeps running.
    synthetic(sweep, {"baseline": 2.00, "intra=1": 2.02, "intra=2": 2.04}, noise=0.001)
    assert not sweep.stopped and all(len(v) == 5 for v in sweep.values.values())


def test_when_the_baseline_wins_the_verdict_says_so():
    candidates = plan(values=("0", "2")).candidates()
    sweep = Sweep(plan(values=("0", "2"), repeat=4, warmup=0, racing=False), candidates)
    synthetic(sweep, {"intra=0 (baseline)": 1.0, "intra=2": 1.5}, noise=0.01)
    text = verdict(sweep.leader(), "ready")
    assert text.startswith("intra=0 (baseline) is best: median ") and text.endswith(
        " over 4 runs; no setting tried beat the baseline")


def test_too_few_trials_give_no_interval_and_no_winner():
    candidates = plan(values=("2",)).candidates()
    sweep = Sweep(plan(values=("2",), repeat=2, warmup=0, racing=False), candidates)
    synthetic(sweep, {"baseline": 2.0, "intra=2": 1.0}, noise=0.001)
    results = sweep.results()
    assert all(r.ratio is None for r in results), "a bootstrap of two values is no interval"
    assert sweep.winner() is None and sweep.leader().candidate.key == "intra=2"
    text = outcome(results, "ready")
    assert text.startswith("No winner: not enough runs. intra=2 leads")
    assert text.endswith("run 3 or more trials per setting.") and "--" not in text, "words for the app and the CLI"
    assert {r.candidate.key: r.note for r in results}["intra=2"] == "not enough runs"


def test_a_winner_needs_an_interval_above_one():
    candidates = plan(values=("2",)).candidates()
    tied = Sweep(plan(values=("2",), repeat=8, warmup=0, racing=False), candidates)
    synthetic(tied, {"baseline": 1.0, "intra=2": 0.99}, noise=0.2)
    assert tied.winner() is None and outcome(tied.results(), "ready").startswith(("No clear winner", "No winner"))
    clear = Sweep(plan(values=("2",), repeat=8, warmup=0, racing=False), candidates)
    synthetic(clear, {"baseline": 2.0, "intra=2": 1.0}, noise=0.01)
    assert clear.winner().candidate.key == "intra=2"
    assert outcome(clear.results(), "ready").startswith("Winner: intra=2: 2.0")


def test_a_failed_setting_shows_its_first_failure():
    candidates = plan(values=("2",)).candidates()
    sweep = Sweep(plan(values=("2",), repeat=3, warmup=0, racing=False), candidates)
    while (trial := sweep.next_trial()) is not None:
        failing = trial.candidate.key == "intra=2"
        sweep.report(trial, None if failing else 1.0, "Failed in Load: no such file" if failing else None)
    result = {r.candidate.key: r for r in sweep.results()}["intra=2"]
    assert result.note == "failed: Failed in Load: no such file"
    assert sweep.stopped["intra=2"].endswith("first failure: Failed in Load: no such file")
    assert "stopped early" not in result.note


def test_input_shapes_are_an_axis():
    candidates = SweepPlan(LaunchConfig(), {"input.tokens": ["32", "64:int64"]}).candidates()
    assert [c.config.inputs for c in candidates] == [{}, {"tokens": "32"}, {"tokens": "64:int64"}]
    with pytest.raises(ValueError, match="whole numbers above 0"):
        SweepPlan(LaunchConfig(), {"input.tokens": ["0"]}).candidates()


def test_a_leading_baseline_with_too_few_trials_is_not_a_verdict_either():
    candidates = plan(values=("2",)).candidates()
    sweep = Sweep(plan(values=("2",), repeat=2, warmup=0, racing=False), candidates)
    synthetic(sweep, {"baseline": 1.0, "intra=2": 2.0}, noise=0.001)
    assert outcome(sweep.results(), "ready").startswith("No winner: not enough runs. baseline leads")


def test_the_plan_size_counts_distinct_settings_the_baseline_once():
    def size(axes, base=None, **kw):
        p = SweepPlan(base or LaunchConfig(), axes, **kw)
        found = p.size()
        assert found.trials == Sweep(p, p.candidates()).planned_without_racing if axes else found.trials == 0
        return found.settings, found.trials

    assert size({}) == (0, 0), "nothing varied: nothing to run, not 1 setting"
    assert size({"intra": ["1", "2"]}, repeat=5, warmup=1) == (3, 18)
    assert size({"intra": ["0", "2"]}, repeat=5, warmup=1) == (2, 12), "intra=0 is the baseline: counted once"
    assert size({"intra": ["0", "2"]}, base=LaunchConfig(intra=4), repeat=3, warmup=0) == (3, 9)
    assert size({"xla_auto": ["on", "true", "off"]}, repeat=2, warmup=0) == (2, 4), "on and true: one setting"
    assert size({"intra": ["1", "2"], "onednn": ["default", "off"]}, repeat=1, warmup=0) == (5, 5)
    # A format is counted without converting: the model's own format is the baseline.
    assert size({"format": ["keras", "h5"]}, base=LaunchConfig(model="/models/m.keras"), repeat=1, warmup=0) == (2, 2)
    assert size({"format": ["keras", "h5"]}, repeat=1, warmup=0) == (3, 3)
    p = SweepPlan(LaunchConfig(), {"intra": ["1", "2"]}, repeat=5, warmup=1)
    assert "3 settings from intra (1, 2); 1 warm-up + 5 measured trials each (18 trials without racing)" \
        in p.describe(len(p.candidates()))


def test_a_plan_that_cannot_run_names_the_setting_and_the_value_in_words_for_any_reader():
    def refusal(axes):
        with pytest.raises(PlanError) as caught:
            SweepPlan(LaunchConfig(), axes).candidates()
        assert "--" not in str(caught.value) and "=" not in str(caught.value), "no command-line syntax"
        return str(caught.value)

    assert refusal({}) == "Choose at least one setting to vary."
    assert refusal({"intra": []}) == "Give intra at least one value to try, such as 1,2."
    assert refusal({"intra": ["x"]}) == "'x' is not a value for intra: use a whole number from 0 to 1024."
    assert refusal({"inter": ["5000"]}) == "'5000' is not a value for inter: use a whole number from 0 to 1024."
    assert refusal({"batch": ["0"]}) == "'0' is not a value for batch: use a whole number from 1 to 1048576."
    assert refusal({"gpus": ["0+a"]}).startswith("'0+a' is not a value for gpus: use all, none, or GPU numbers")
    assert refusal({"format": ["onnx"]}) == "'onnx' is not a value for format: use one of savedmodel, keras, h5."


def test_without_a_converter_a_format_is_named_not_refused():
    keys = [c.key for c in SweepPlan(LaunchConfig(), {"format": ["keras", "h5"]}).candidates()]
    assert keys == ["baseline", "format=keras", "format=h5"]
    converted = SweepPlan(LaunchConfig(), {"format": ["h5"]}).candidates(lambda fmt: f"/cache/mlp.{fmt}")
    assert converted[1].config.model == "/cache/mlp.h5"


def test_the_estimate_is_the_median_time_to_ready_of_the_models_recent_successful_runs(tmp_path):
    history = History(tmp_path / "history.sqlite")
    assert recent_ready_times(history, "sample:mlp") == [] and recent_ready_times(None, "sample:mlp") == []
    for i, ready in enumerate((1.0, 3.0, 2.0)):
        history.record(finished_record("sample:mlp", ready_s=ready, at=1000.0 + i), "run")
    history.record(finished_record("sample:other", ready_s=50.0, at=2000.0), "run")
    failed = record_through(["import"], launched=3000.0)  # of sample:mlp, the newest, and no time to ready
    failed.finish(3)
    history.record(failed, "run")
    times = recent_ready_times(history, "sample:mlp")
    assert times == pytest.approx([2.02, 3.02, 1.02]), "newest first, this model's successful runs only"
    size = SweepPlan(LaunchConfig(), {"intra": ["1", "2"]}, repeat=3, warmup=1).size()
    assert estimate_seconds(size, times) == pytest.approx(2.02 * 12)
    assert estimate_seconds(size, []) is None
    assert len(recent_ready_times(history, "sample:mlp", limit=2)) == 2


@pytest.mark.parametrize("runs, shows_range, shows_spread", [(1, False, False), (2, True, False), (3, True, True)])
def test_a_statistic_is_shown_only_with_the_runs_it_needs(runs, shows_range, shows_spread):
    """One run has no range and no spread: the table says so instead of "0 µs"."""
    sweep = Sweep(plan(repeat=runs, warmup=0, racing=False), plan().candidates())
    value = 1.0
    while (trial := sweep.next_trial()) is not None:
        value += 0.1
        sweep.report(trial, value)
    header, rows = result_rows(sweep.results(), "ready")
    lo_hi, iqr = header.index("Min – max"), header.index("IQR")
    assert all((row[lo_hi] != "–") is shows_range and (row[iqr] != "–") is shows_spread for row in rows), rows


def test_the_steady_objective_of_a_program_run_without_steady_state_is_not_reported_not_a_crash() -> None:
    """A program measured to its exit that took no step after its ready point has no steady
    phase: the sweep's objective is 'not reported' (None), where it raised KeyError."""
    from tflaunch.core.run.record import RunRecord, RunStatus
    from tflaunch.core.sweep.plan import objective_value

    record = RunRecord(LaunchConfig(program=("python", "train.py"), until="exit"))
    record.status = RunStatus.OK
    assert "steady" not in record.phases
    assert objective_value(record, "steady") is None


def test_objectives_go_through_the_record_accept_marks_and_say_not_reported() -> None:
    from tflaunch.core.run import events as ev
    from tflaunch.core.run.record import RunRecord
    from tflaunch.core.sweep.plan import is_objective, not_reported, objective_value, objective_words

    record = RunRecord(LaunchConfig(program=("python", "train.py"), until="mark:warm"), launched_at=100.0)
    record.apply(ev.Hello(100.05, "spawn", 7, 0.05, "python"))
    record.apply(ev.PhaseEnd(100.05, "spawn", 0.05, 1, 1))
    record.apply(ev.Mark(101.5, "spawn", "warm"))
    record.finish(0)
    assert is_objective("mark:warm") and objective_words("mark:warm") == "time to mark warm"
    assert objective_value(record, "mark:warm") == pytest.approx(1.5)
    assert objective_value(record, "mark:cold") is None and objective_value(record, "load") is None
    assert not_reported([record], "phase:first_step") == ("not reported: python train.py reported no first step "
                                                          "time")
    assert not_reported([record], "mark:warm") is None
    assert not is_objective("mark:Bad name") and not is_objective("fastest")


def test_a_steady_objective_with_until_exit_is_refused_naming_the_flag_the_cause_and_what_to_do() -> None:
    program = LaunchConfig(program=("python", "train.py"), until="exit")
    with pytest.raises(PlanError) as refused:
        SweepPlan(program, {"intra": ["1", "2"]}, objective="steady").candidates()
    why = str(refused.value)
    assert "--objective steady" in why and "--until exit" in why and "has none after it" in why and "first_step" in why
    SweepPlan(program, {"intra": ["1", "2"]}, objective="ready").candidates()  # ready is fine to exit
