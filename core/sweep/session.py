"""SweepSession: one sweep for any driver, from its plan to its stored end.

The decisions (order, racing, statistics) are the Sweep's (plan.py). This creates the
sweep's row, hands out each trial as ProbeSessions for a driver to run (the CLI's
selectors loop, the app's QProcesses), stores every run through one RunRecorder as it
happens, and closes the sweep with its verdict, so a cancelled sweep keeps its trials.
"""

from __future__ import annotations

from collections.abc import Callable

from ..run.driver import run_sessions
from ..run.formats import in_formats
from ..run.gpus.nvml import GpuMemorySampler
from ..run.launch_check import KnownFlags, ask_known_flags, launch_check
from ..run.record import RunRecord, RunStatus
from ..run.session import ProbeSession, start_together
from ..run.trial_info import TrialInfo
from ..run.watcher import Watcher, Watchers
from ..store.history import History, HistoryError
from ..store.recorder import RunRecorder
from .instances import trial_figures
from .plan import Candidate, Sweep, SweepPlan, Trial, not_reported, objective_value, outcome


def prepare(plan: SweepPlan) -> list[Candidate]:
    """The plan's candidates, converting the model first if format is one of the axes
    (slow: the app calls this off its GUI thread)."""
    formats = plan.axes.get("format")
    model_for_format = None
    if formats:
        paths = in_formats(plan.base.model, list(formats), plan.base.python)
        model_for_format = paths.__getitem__
    return plan.candidates(model_for_format)


def refusal(candidates: list[Candidate], known: KnownFlags | None = ask_known_flags) -> str | None:
    """Why the sweep cannot start, when one of its settings fails the launch check: every
    setting is checked before the first trial, not found broken halfway through."""
    for candidate in candidates:
        problems = launch_check(candidate.config, known=known)
        if problems:
            return f"the setting {candidate.key} cannot run: {problems[0].field}: {problems[0].message}"
    return None


def trial_value(records: list[RunRecord], objective: str) -> float | None:
    """A trial's figure: the slowest instance, the moment all of them are ready."""
    values = [objective_value(r, objective) for r in records]
    return None if any(v is None for v in values) else max(v for v in values if v is not None)


def trial_info(trial: Trial, instance: int) -> TrialInfo:
    return TrialInfo(trial.candidate.key, trial.warmup, trial.number, instance)


class SweepSession:
    def __init__(self, plan: SweepPlan, candidates: list[Candidate], history: History | None,
                 on_problem: Callable[[str], None] | None = None, problem: HistoryError | None = None) -> None:
        """`on_problem` and `problem` as RunRecorder's: a run not stored is told, and why."""
        self.plan = plan
        self.sweep = Sweep(plan, candidates)
        self.history = history
        self.recorder = RunRecorder(history, "sweep", on_problem, problem)
        self.sweep_id: int | None = None
        self.status = "running"
        if history is not None:
            self.sweep_id = self.recorder.write(lambda h: h.create_sweep(plan.base.subject, plan.to_dict()))

    def next_trial(self) -> tuple[Trial, list[ProbeSession]] | None:
        """The next trial and one session per instance, all to be started together."""
        trial = self.sweep.next_trial()
        if trial is None:
            return None
        sessions = [ProbeSession(trial.candidate.config) for _ in range(trial.candidate.instances)]
        start_together(sessions)  # the app starts them one by one: one eviction for all, as the CLI's driver
        for i, session in enumerate(sessions):
            self.recorder.label(session.record, self.sweep_id, trial_info(trial, i))
        return trial, sessions

    def trial_done(self, trial: Trial, records: list[RunRecord]) -> float | None:
        """Its runs ended (and are stored); the trial's value, None if it failed or was cancelled."""
        if any(r.status is RunStatus.CANCELLED for r in records):
            return None
        value = trial_value(records, self.plan.objective)
        self.sweep.figures.setdefault(trial.candidate.key, []).append(trial_figures(records, trial.warmup))
        self.sweep.report(trial, value, failure_reason(records) or not_reported(records, self.plan.objective))
        return value

    def end(self, status: str) -> None:
        """done or cancelled: the sweep's row gets its status and verdict."""
        self.status = status
        summary = outcome(self.sweep.results(), self.plan.objective)
        if self.sweep_id is not None:
            sweep_id = self.sweep_id
            self.recorder.write(lambda h: h.finish_sweep(sweep_id, status, summary))


def failure_reason(records: list[RunRecord]) -> str | None:
    """Why a trial failed, in the words of its first failed run."""
    failed = next((r for r in records if r.status is not RunStatus.OK), None)
    if failed is None:
        return None
    return failed.headline if failed.failure else failed.status_line


def run_headless(session: SweepSession, on_trial: Callable[[Sweep, Trial, float | None], None] | None = None,
                 gpus: GpuMemorySampler | None = None, watcher: Watcher | None = None) -> str:
    """Drive a sweep to its end with the command line's driver, sampling each child's GPU
    memory with `gpus` where given, `watcher` hearing each run after the recorder; its status."""
    status = "done"
    while (due := session.next_trial()) is not None:
        trial, sessions = due
        heard = session.recorder if watcher is None else Watchers(session.recorder, watcher)
        records = run_sessions(sessions, heard, gpus)
        if any(r.status is RunStatus.CANCELLED for r in records):  # Ctrl+C reached us
            status = "cancelled"
            break
        value = session.trial_done(trial, records)
        if on_trial:
            on_trial(session.sweep, trial, value)
    session.end(status)
    return status
