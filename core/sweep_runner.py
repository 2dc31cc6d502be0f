"""Runs a sweep without Qt: each trial in fresh probe processes, each stored in the history."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Callable

from .history import History
from .model_formats import in_formats
from .profiles import Profile, evidence_from_runs
from .run import RunRecord, RunStatus
from .runner import run_probe
from .sweep import Candidate, Sweep, SweepPlan, Trial, objective_value, verdict

TrialCallback = Callable[[Sweep, Trial, float | None], None]


def prepare(plan: SweepPlan) -> list[Candidate]:
    """The plan's candidates, converting the model first if format is one of the axes."""
    formats = plan.axes.get("format")
    model_for_format = None
    if formats:
        paths = in_formats(plan.base.model, list(formats), plan.base.python)
        model_for_format = paths.__getitem__
    return plan.candidates(model_for_format)


def run_instances(candidate: Candidate, instances: int) -> list[RunRecord]:
    """`instances` probes started together on one model: the contention several processes see."""
    if instances == 1:
        return [run_probe(candidate.config)]
    with ThreadPoolExecutor(max_workers=instances) as pool:
        return list(pool.map(run_probe, [candidate.config] * instances))


def trial_value(records: list[RunRecord], objective: str) -> float | None:
    """A trial's figure: the slowest instance, the moment all of them are ready."""
    values = [objective_value(r, objective) for r in records]
    return None if any(v is None for v in values) else max(values)


def trial_info(trial: Trial, instance: int) -> dict:
    return {"candidate": trial.candidate.key, "warmup": trial.warmup, "number": trial.number, "instance": instance}


def run_sweep(plan: SweepPlan, history: History | None, on_trial: TrialCallback | None = None,
              candidates: list[Candidate] | None = None) -> tuple[Sweep, int | None, str]:
    """Run the whole plan; (sweep, its id in the history, status: done or cancelled)."""
    sweep = Sweep(plan, candidates or prepare(plan))
    sweep_id = history.create_sweep(plan.base.model, plan.to_dict()) if history else None
    status = "done"
    try:
        while (trial := sweep.next_trial()) is not None:
            records = run_instances(trial.candidate, plan.instances)
            if any(r.status is RunStatus.CANCELLED for r in records):  # Ctrl+C reached the children
                status = "cancelled"
                break
            if history:
                for i, record in enumerate(records):
                    record.history_id = history.record(record, "sweep", sweep_id, trial_info(trial, i))
            value = trial_value(records, plan.objective)
            sweep.report(trial, value)
            if on_trial:
                on_trial(sweep, trial, value)
    except KeyboardInterrupt:
        status = "cancelled"
    finally:
        if history:
            leader = sweep.leader()
            history.finish_sweep(sweep_id, status, verdict(leader, plan.objective) if leader else "no result")
    return sweep, sweep_id, status


def winner_profile(name: str, sweep: Sweep, history: History, sweep_id: int) -> Profile:
    """The winner's settings, with its measured trials and the baseline's as evidence."""
    trials = [(t, r) for t, r in history.sweep_trials(sweep_id) if not t["warmup"]]
    leader = sweep.leader()
    winner = leader.candidate
    base = sweep.candidates[0].key
    runs = [r for t, r in trials if t["candidate"] == winner.key]
    baseline = [r for t, r in trials if t["candidate"] == base] if winner.key != base else []
    evidence = evidence_from_runs(runs, baseline)
    evidence["sweep"] = {"id": sweep_id, "objective": sweep.plan.objective, "trials": sweep.trials_run,
                         "verdict": verdict(leader, sweep.plan.objective)}
    return Profile(name, winner.config, evidence)


def restore_sweep(history: History, sweep_id: int) -> tuple[Sweep, RunRecord | None]:
    """A stored sweep rebuilt by replaying its trials in order: the same values, the same
    racing decisions. Also one of its runs, for the environment it ran in."""
    plan = SweepPlan.from_dict(history.sweep_plan(sweep_id))
    trials = history.sweep_trials(sweep_id)
    models = {}
    for trial, record in trials:
        for part in trial["candidate"].replace(" (baseline)", "").split():
            if part.startswith("format="):
                models[part[len("format="):]] = record.config.model
    candidates = plan.candidates(lambda fmt: models.get(fmt, f"(not run in {fmt})"))
    by_key = {c.key: c for c in candidates}
    sweep = Sweep(plan, candidates)
    grouped: dict[int, list] = {}
    for trial, record in trials:
        grouped.setdefault(trial["number"], []).append((trial, record))
    for number in sorted(grouped):
        trial, _ = grouped[number][0]
        candidate = by_key.get(trial["candidate"])
        if candidate is not None:
            value = trial_value([r for _, r in grouped[number]], plan.objective)
            sweep.report(Trial(number, candidate, trial["warmup"]), value)
    return sweep, (trials[-1][1] if trials else None)
