"""Sweeps read back from the history: their winner as a profile, their state replayed."""

from __future__ import annotations

from ..run.record import RunRecord
from ..run.trial_info import TrialInfo
from ..settings.config import LaunchConfig
from ..store.history import History
from ..store.profiles import Profile, evidence_from_runs
from .plan import ARMS_AXIS, Candidate, Sweep, SweepPlan, Trial, outcome, verdict
from .session import failure_reason, trial_value


def winner_profile(name: str, sweep: Sweep, history: History, sweep_id: int) -> Profile:
    """The winner's settings, with its measured trials and the baseline's as evidence."""
    trials = [(t, r) for t, r in history.sweep_trials(sweep_id) if not t.warmup]
    leader = sweep.winner()
    if leader is None:
        raise ValueError(outcome(sweep.results(), sweep.plan.objective))
    winner = leader.candidate
    base = sweep.candidates[0].key
    runs = [r for t, r in trials if t.candidate == winner.key]
    baseline = [r for t, r in trials if t.candidate == base] if winner.key != base else []
    evidence = evidence_from_runs(runs, baseline)
    evidence["sweep"] = {"id": sweep_id, "objective": sweep.plan.objective, "trials": sweep.trials_run,
                         "verdict": verdict(leader, sweep.plan.objective)}
    return Profile(name, winner.config, evidence)


def restore_sweep(history: History, sweep_id: int) -> tuple[Sweep, RunRecord | None]:
    """A stored sweep rebuilt by replaying its trials in order: the same values, the same
    racing decisions. Also one of its runs, for the environment it ran in."""
    plan = SweepPlan.from_dict(history.sweep_plan(sweep_id))
    trials = history.sweep_trials(sweep_id)
    candidates = _arms(plan, trials) if ARMS_AXIS in plan.axes else _grid(plan, trials)
    by_key = {c.key: c for c in candidates}
    sweep = Sweep(plan, candidates)
    grouped: dict[int, list[tuple[TrialInfo, RunRecord]]] = {}
    for trial, record in trials:
        grouped.setdefault(trial.number, []).append((trial, record))
    for number in sorted(grouped):
        trial, _ = grouped[number][0]
        candidate = by_key.get(trial.candidate)
        if candidate is not None:
            records = [r for _, r in grouped[number]]
            sweep.report(Trial(number, candidate, trial.warmup), trial_value(records, plan.objective),
                         failure_reason(records))
    return sweep, (trials[-1][1] if trials else None)


def _grid(plan: SweepPlan, trials: list[tuple[TrialInfo, RunRecord]]) -> list[Candidate]:
    """A sweep's candidates from its axes, each format's model where its runs found it."""
    models = {}
    for trial, record in trials:
        for part in trial.candidate.replace(" (baseline)", "").split():
            if part.startswith("format="):
                models[part[len("format="):]] = record.config.model
    return plan.candidates(lambda fmt: models.get(fmt, f"(not run in {fmt})"))


def _arms(plan: SweepPlan, trials: list[tuple[TrialInfo, RunRecord]]) -> list[Candidate]:
    """The doctor's arms: no axis makes their settings (a model saved in another format, a
    .pyc folder), so each arm's are those its runs were launched with. An arm that never ran
    keeps the baseline's: it has no figures for them to mislead."""
    launched: dict[str, LaunchConfig] = {}
    for trial, record in trials:
        launched.setdefault(trial.candidate, record.config)
    return [Candidate("baseline", plan.base, baseline=True),
            *(Candidate(key, launched.get(key, plan.base)) for key in plan.axes[ARMS_AXIS])]
