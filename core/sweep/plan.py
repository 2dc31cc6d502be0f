"""Sweeps: which settings start a model fastest, decided by interleaved trials and racing.

A plan varies some settings over values; every combination is a candidate. Trials run in
rounds: each round runs every live candidate once, in a fresh shuffled order, so drift
(a warming page cache, a busy neighbour) spreads over all candidates instead of favouring
whichever ran last. The first `warmup` rounds are run and discarded.

Racing rule, stated once and applied after every round: once every live candidate has at
least MIN_TRIALS measured trials, a candidate is stopped when it is clearly worse than the
leader (the live candidate with the best median): its fastest trial is slower than the
leader's slowest (their ranges no longer overlap) AND its median is at least MIN_EFFECT
(3 %) worse. The second condition keeps a sweep from dropping settings over differences
too small to matter. The sweep ends when one candidate is left or every live candidate
has `repeat` measured trials.
"""

from __future__ import annotations

import itertools
import json
import random
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..phases import NAME, SPAWN, STEADY, label
from ..run.status import RunStatus
from ..settings.config import LaunchConfig
from ..settings.vocabulary import SETTINGS
from ..stats import Spread, spread
from ..subject import Subject
from ..units import format_bytes, format_duration
from .axes import AXES as AXES  # re-exported: the plan's users name the axes through it
from .axes import PlanError as PlanError
from .axes import apply_value
from .instances import InstanceCountError, InstancesRow, TrialFigures, parse_counts, summarize
from .size import NOTHING_TO_VARY, PlanSize, format_stand_in
from .stats import CONFIDENCE, Ratio, is_noisy, ratio_to_baseline

if TYPE_CHECKING:
    from ..run.record import RunRecord

MIN_TRIALS = 3
MIN_EFFECT = 0.03
FAILURES_TO_STOP = 2
# The one "axis" of a plan whose settings were chosen one by one (the doctor's arms), not
# combined from axes: its values are the arms' names, their settings stored with their runs.
ARMS_AXIS = "doctor"

# The named objectives; any phase the subject reports is phase:NAME (a program's first_step,
# compile, data, or a mark's span) and any point it marks mark:NAME (the time to reach it).
OBJECTIVES: dict[str, str] = {
    "ready": "time to ready",
    "load": "load time",
    "first": "first inference",
    "steady": "steady latency",
    "peak": "peak memory",
}
# Named objectives that are one phase's duration (stored sweeps name them so).
_PHASE_NAMED = {"load": "load", "first": "first"}
OBJECTIVE_FORMS = ("phase:NAME", "mark:NAME")


def _named(objective: str, prefix: str) -> str | None:
    """NAME of PREFIX:NAME, if it is a well-formed name."""
    name = objective[len(prefix):] if objective.startswith(prefix) else ""
    return name if NAME.match(name) else None


def is_objective(objective: str) -> bool:
    return objective in OBJECTIVES or any(_named(objective, form[:6]) for form in ("phase:", "mark:"))


def objective_words(objective: str) -> str:
    """What the objective measures, in words: "time to ready", "first step time"."""
    if (phase := _named(objective, "phase:")) is not None:
        return f"{label(phase).lower()} time"
    if (mark := _named(objective, "mark:")) is not None:
        return f"time to mark {mark}"
    return OBJECTIVES[objective]

# Axes that change how the probe measures a model; a program decides them in its own code:
# the model's format (an axis, not a setting), and each sweepable setting a program does not
# read, with the settings table's reason (Setting.read_by).
MODEL_ONLY_AXES = {"format": "a program loads its own files",
                   **{s.axis: s.unread_because for s in SETTINGS if s.sweep and not s.reads(Subject.PROGRAM)}}


def objective_choices(config: LaunchConfig) -> list[str]:
    """The objectives a subject can give, for a chooser: time to ready, each phase of its
    start (by its name, or phase:NAME), the mark it is measured to, steady state, peak."""
    phases = [next((k for k, v in _PHASE_NAMED.items() if v == name), f"phase:{name}")
              for name in config.subject_type.phases(config.call) if name != SPAWN]
    mark = [config.until] if config.is_program and config.until.startswith("mark:") else []
    steady = [] if objective_refusal(config, "steady") else ["steady"]
    return ["ready", *phases, *mark, *steady, "peak"]


def objective_value(record: RunRecord, objective: str) -> float | None:
    """The figure a sweep minimises, from one run; None when the run did not give it (it
    failed, or did not report it: not_reported says so)."""
    if record.status is not RunStatus.OK:
        return None
    if objective == "ready":
        return record.time_to_ready
    if objective == "peak":
        return float(record.peak_rss) if record.peak_rss else None
    if (mark := _named(objective, "mark:")) is not None:
        return next((at for name, at in record.marks if name == mark), None)
    if objective == STEADY:  # a program run to its exit may take no step after its ready point
        steady = record.phase(STEADY)
        return steady.latency.get("median") if steady is not None else None
    phase = record.phase(_PHASE_NAMED.get(objective) or _named(objective, "phase:") or "")
    return phase.duration if phase is not None else None


def not_reported(records: Sequence[RunRecord], objective: str) -> str | None:
    """Why runs that ended well give no figure: the first that did not report the objective."""
    missing = next((r for r in records if r.status is RunStatus.OK and objective_value(r, objective) is None), None)
    if missing is None:
        return None
    return f"not reported: {missing.subject} reported no {objective_words(objective)}"


def objective_refusal(config: LaunchConfig, objective: str) -> str | None:
    """Why a setting cannot give the objective at all, said before any trial runs."""
    if objective == STEADY and config.is_program and config.until == "exit":
        return ("--objective steady cannot be measured with --until exit: steady state is the steps or calls "
                "after the ready point, and a program run to its exit has none after it. Measure to "
                "first_step, first_inference or mark:NAME (--until), or minimise ready or phase:NAME.")
    return None


def format_objective(objective: str, value: float | None) -> str:
    return format_bytes(value) if objective == "peak" else format_duration(value)


def _identity(config: LaunchConfig) -> str:
    """Equal settings, equal text: a LaunchConfig holds dicts, so it cannot go in a set."""
    return json.dumps(config.to_dict(), sort_keys=True)


@dataclass(frozen=True)
class Candidate:
    key: str  # "intra=2 format=keras", or "baseline"
    config: LaunchConfig
    baseline: bool = False
    instances: int = 1  # probes of it started together per trial


@dataclass
class SweepPlan:
    base: LaunchConfig
    axes: dict[str, list[str]]
    repeat: int = 5
    warmup: int = 1
    objective: str = "ready"
    racing: bool = True
    instances: int = 1
    seed: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {"base": self.base.to_dict(), "axes": self.axes, "repeat": self.repeat, "warmup": self.warmup,
                "objective": self.objective, "racing": self.racing, "instances": self.instances, "seed": self.seed}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SweepPlan:
        return cls(LaunchConfig.from_dict(data["base"]), {k: list(v) for k, v in data["axes"].items()},
                   data["repeat"], data["warmup"], data["objective"], data["racing"], data["instances"], data["seed"])

    def describe(self, candidates: int) -> str:
        axes = " × ".join(f"{axis} ({', '.join(values)})" for axis, values in self.axes.items())
        if ARMS_AXIS in self.axes:
            axes = f"the doctor's arms ({', '.join(self.axes[ARMS_AXIS])}) against the baseline"
        racing = "racing on" if self.racing else "racing off"
        trials = PlanSize(candidates, self.warmup, self.repeat).trials
        if not self.axes:  # a bench repeated on a cluster: the given settings on each node type
            return f"the settings as given, {self.warmup} warm-up + {self.repeat} measured trials"
        return (f"{candidates} settings from {axes}; {self.warmup} warm-up + {self.repeat} measured trials each "
                f"({trials} trials without racing), objective {objective_words(self.objective)}, {racing}"
                + (f", {self.instances} instances at once" if self.instances > 1 else ""))

    def size(self) -> PlanSize:
        """The plan's settings and trials, without converting anything; 0 settings when nothing
        is varied. PlanError (naming the setting and the value) for a plan that cannot run."""
        return PlanSize(len(self.candidates()) if self.axes else 0, self.warmup, self.repeat)

    def candidates(self, model_for_format: Callable[[str], str] | None = None) -> list[Candidate]:
        """Every distinct combination, plus the base settings as the baseline (first).

        `model_for_format` gives the model's path in a format (session.prepare passes
        run.formats.in_formats, which converts); without it a format is only named, enough
        to check and count a plan but not to run it."""
        if not is_objective(self.objective):
            raise PlanError(f"The objective must be one of: {', '.join((*OBJECTIVES, *OBJECTIVE_FORMS))}.")
        if self.repeat < 1 or self.warmup < 0 or self.instances < 1:
            raise PlanError("Trials per setting and instances must be at least 1, warm-up rounds at least 0.")
        if not self.axes:
            raise PlanError(NOTHING_TO_VARY[:1].upper() + NOTHING_TO_VARY[1:] + ".")
        for axis, values in self.axes.items():
            if self.base.is_program and axis in MODEL_ONLY_AXES:
                raise PlanError(f"A program does not read {axis}: {MODEL_ONLY_AXES[axis]}. Vary a setting a launch "
                                "applies (threads, oneDNN, XLA auto-clustering, caches, GPUs), or measure a model.")
            if not values:
                example = AXES.get(axis, ("", ""))[1] or "a,b"
                raise PlanError(f"Give {axis} at least one value to try, such as {example}.")
        if model_for_format is None:
            model_for_format = format_stand_in(self.base.model)
        result = [Candidate("baseline", self.base, baseline=True, instances=self.instances)]
        seen = {(_identity(self.base), self.instances)}
        for combo in itertools.product(*[[(axis, v) for v in values] for axis, values in self.axes.items()]):
            config, instances = self.base, self.instances
            for axis, text in combo:
                try:
                    if axis == "instances":
                        instances, = parse_counts(text)
                    else:
                        config = apply_value(config, axis, text, model_for_format)
                except InstanceCountError as exc:
                    raise PlanError(f"{str(exc)[:1].upper()}{str(exc)[1:]}.") from None
                except PlanError:  # already says what to do; it is a ValueError too, so let it through first
                    raise
                except ValueError as exc:
                    raise PlanError(f"'{text}' is not a value for {axis}: {exc}.") from None
            key, identity = " ".join(f"{a}={t}" for a, t in combo), (_identity(config), instances)
            if config == self.base and instances == self.instances:  # the baseline is in the grid: one name
                if result[0].key == "baseline":
                    result[0] = Candidate(key + " (baseline)", config, baseline=True, instances=instances)
            elif identity not in seen:  # on and true, 1 and 1: one setting, run and named once
                seen.add(identity)
                result.append(Candidate(key, config, instances=instances))
        for candidate in result:
            if why := objective_refusal(candidate.config, self.objective):
                raise PlanError(why)
        return result

    @property
    def shows_instances(self) -> bool:
        """Whether the sweep's results include the instances table (several copies at once)."""
        return self.instances > 1 or "instances" in self.axes


@dataclass(frozen=True)
class Trial:
    number: int
    candidate: Candidate
    warmup: bool


@dataclass
class CandidateResult:
    candidate: Candidate
    values: list[float]
    failures: int
    stopped: str | None
    spread: Spread | None = None
    ratio: Ratio | None = None  # only with MIN_TRIALS measured trials here and in the baseline
    noisy: bool = False
    failure: str | None = None  # the first failed trial's reason

    @property
    def note(self) -> str:
        """A table cell's gist: why a setting stopped, failed or cannot be judged yet."""
        if self.failures and not self.values:
            return f"failed: {self.failure}" if self.failure else "failed"
        if self.stopped and self.stopped.startswith("stopped early"):
            return "stopped early"
        if self.failures:
            return f"{self.failures} failed: {self.failure}" if self.failure else f"{self.failures} failed"
        if self.values and self.ratio is None and not self.candidate.baseline:
            return "not enough runs"
        return "noisy" if self.noisy else ""


@dataclass
class Sweep:
    plan: SweepPlan
    candidates: Sequence[Candidate]
    values: dict[str, list[float]] = field(default_factory=dict)
    failures: dict[str, int] = field(default_factory=dict)
    stopped: dict[str, str] = field(default_factory=dict)
    first_failure: dict[str, str] = field(default_factory=dict)
    trials_run: int = 0
    figures: dict[str, list[TrialFigures]] = field(default_factory=dict)  # per setting, each trial's instances

    def __post_init__(self) -> None:
        self._rng = random.Random(self.plan.seed)
        self._queue: deque[Trial] = deque()
        self._round = 0
        self._last: str | None = None
        for c in self.candidates:
            self.values.setdefault(c.key, [])
            self.failures.setdefault(c.key, 0)

    @property
    def planned_without_racing(self) -> int:
        return PlanSize(len(self.candidates), self.plan.warmup, self.plan.repeat).trials

    def live(self) -> list[Candidate]:
        return [c for c in self.candidates if c.key not in self.stopped]

    def next_trial(self) -> Trial | None:
        if not self._queue:
            self._plan_round()
        if not self._queue:
            return None
        trial = self._queue.popleft()
        self._last = trial.candidate.key
        return trial

    def _plan_round(self) -> None:
        warmup = self._round < self.plan.warmup
        due = [c for c in self.live() if warmup or len(self.values[c.key]) < self.plan.repeat]
        if not due or (not warmup and self.plan.racing and len(self.live()) == 1 and self._round > 0):
            return
        due = shuffled_round(self._rng, due, self._last)
        self._queue.extend(Trial(self.trials_run + i + 1, c, warmup) for i, c in enumerate(due))
        self._round += 1

    def report(self, trial: Trial, value: float | None, reason: str | None = None) -> None:
        """The outcome of a trial: the objective's value, or None and why if it failed."""
        self.trials_run += 1
        key = trial.candidate.key
        if value is None:
            self.failures[key] += 1
            if reason and key not in self.first_failure:
                self.first_failure[key] = reason
            if self.failures[key] >= FAILURES_TO_STOP:
                self.stopped[key] = f"stopped: failed {self.failures[key]} times" + (
                    f"; first failure: {self.first_failure[key]}" if key in self.first_failure else "")
        elif not trial.warmup:
            self.values[key].append(value)
        if not self._queue and self.plan.racing:
            self._race()

    def _race(self) -> None:
        live = [c for c in self.live() if self.values[c.key]]
        if len(live) < 2 or any(len(self.values[c.key]) < MIN_TRIALS for c in live):
            return
        leader = min(live, key=lambda c: spread(self.values[c.key]).median)
        leader_median, leader_slowest = spread(self.values[leader.key]).median, max(self.values[leader.key])

        def show(value: float) -> str:
            return format_objective(self.plan.objective, value)

        for c in live:
            fastest, median = min(self.values[c.key]), spread(self.values[c.key]).median
            if c is not leader and fastest > leader_slowest and median >= leader_median * (1 + MIN_EFFECT):
                self.stopped[c.key] = (f"stopped early: its fastest trial ({show(fastest)}) was slower than the "
                                       f"leader's slowest ({show(leader_slowest)}), its median {show(median)} "
                                       f"{median / leader_median - 1:.0%} worse than {leader.key}")

    def results(self) -> list[CandidateResult]:
        """Every candidate with its statistics, best median first; baseline ratios included."""
        baseline = self.values[self.candidates[0].key]
        out = []
        for c in self.candidates:
            values = self.values[c.key]
            result = CandidateResult(c, list(values), self.failures[c.key], self.stopped.get(c.key),
                                     failure=self.first_failure.get(c.key))
            if values:
                result.spread = spread(values)
                # An interval from one or two trials is no interval: a bootstrap of one
                # value always gives low = high.
                if len(values) >= MIN_TRIALS and len(baseline) >= MIN_TRIALS:
                    result.ratio = ratio_to_baseline(values, baseline, seed=self.plan.seed)
                    result.noisy = c is not self.candidates[0] and is_noisy(result.spread, spread(baseline))
            out.append(result)
        return sorted(out, key=lambda r: r.spread.median if r.spread else float("inf"))

    def leader(self) -> CandidateResult | None:
        return leader_of(self.results())

    def instance_rows(self) -> list[InstancesRow]:
        """Per setting, in the plan's order: the slowest instance's time to ready, GPU memory
        per process and per GPU, and whether all instances fit (instances.summarize)."""
        return [summarize(c.key, c.instances, self.figures.get(c.key, [])) for c in self.candidates]

    def winner(self) -> CandidateResult | None:
        return winner_of(self.results())


def shuffled_round(rng: random.Random, due: Sequence[Candidate], last: str | None) -> list[Candidate]:
    """One round: every candidate due, in a fresh random order, never the one that ran last first."""
    order = list(due)
    rng.shuffle(order)
    if len(order) > 1 and order[0].key == last:
        order[0], order[1] = order[1], order[0]
    return order


def schedule(plan: SweepPlan, candidates: Sequence[Candidate], seed: int) -> list[Trial]:
    """Every trial of the plan without racing, in the order a sweep runs them: the warm-up
    rounds, then `repeat` rounds, each shuffled. A cluster sweep's whole array (racing
    needs each result before the next trial is chosen, which an array does not wait for)."""
    rng, last = random.Random(seed), None
    trials: list[Trial] = []
    for round_ in range(plan.warmup + plan.repeat):
        for candidate in shuffled_round(rng, candidates, last):
            trials.append(Trial(len(trials) + 1, candidate, round_ < plan.warmup))
            last = candidate.key
    return trials


def leader_of(results: Sequence[CandidateResult]) -> CandidateResult | None:
    """The best median so far (results() bootstraps every setting): a leader, not yet a winner."""
    return next((r for r in results if r.spread), None)


def winner_of(results: Sequence[CandidateResult]) -> CandidateResult | None:
    """The leader, if it is clearly better than the baseline: MIN_TRIALS runs on both sides
    and a confidence interval of the ratio above 1. The baseline never "wins"."""
    leader = leader_of(results)
    if leader is None or leader.candidate.baseline or leader.ratio is None:
        return None
    return leader if leader.ratio.low > 1 else None


def outcome(results: Sequence[CandidateResult], objective: str, planned: int = 0) -> str:
    """The sweep's conclusion in one sentence: a winner, or why there is none. `planned`:
    the trials the plan has per setting, for a sweep still running (its words then say that
    more are coming, not that more should be planned)."""
    leader = leader_of(results)
    if leader is None:
        return "No setting succeeded."
    winner = winner_of(results)
    if winner is not None:
        return "Winner: " + verdict(winner, objective)
    spread_ = leader.spread
    assert spread_ is not None
    figure = f"median {format_objective(objective, spread_.median)} over {spread_.n} run{'s' * (spread_.n != 1)}"
    baseline = next((r for r in results if r.candidate.baseline), None)
    too_few = spread_.n < MIN_TRIALS or baseline is None or len(baseline.values) < MIN_TRIALS
    if leader.candidate.baseline and not too_few:
        return f"No winner: no setting beat the baseline ({leader.candidate.key}, {figure})."
    if leader.ratio is None:  # too few runs, whichever leads: neither a winner nor a verdict on the baseline
        # Trials that failed are why, not the plan, when they leave fewer than were planned.
        short = [r for r in (leader, baseline) if r is not None and len(r.values) < MIN_TRIALS]
        failed = sum(r.failures for r in short)
        coming = any(r.stopped is None and len(r.values) + r.failures < planned for r in short)
        advice = (f"{failed} of their trials failed (the table says why)" if failed
                  else f"the sweep has not finished its {planned} trials per setting" if coming
                  else f"run {MIN_TRIALS} or more trials per setting")
        return (f"No winner: not enough runs. {leader.candidate.key} leads ({figure}); a winner needs at least "
                f"{MIN_TRIALS} successful trials of it and of the baseline: {advice}.")
    return (f"No clear winner: {leader.candidate.key} leads ({figure}), but its "
            f"{round(CONFIDENCE * 100)}% interval {leader.ratio.low:.2f}–{leader.ratio.high:.2f}× includes 1.")


def verdict(result: CandidateResult, objective: str) -> str:
    """One sentence for a review: how much better than the baseline, and how sure."""
    name = result.candidate.key
    if result.spread is None:
        return f"{name}: no successful trial"
    if result.candidate.baseline:
        return (f"{name} is best: median {format_objective(objective, result.spread.median)} "
                f"over {result.spread.n} runs; no setting tried beat the baseline")
    if result.ratio is None:
        return (f"{name}: median {format_objective(objective, result.spread.median)} over {result.spread.n} "
                f"runs; not enough runs for an interval (at least {MIN_TRIALS} here and in the baseline)")
    r = result.ratio
    better, worse = ("smaller", "larger") if objective == "peak" else ("faster", "slower")
    head = f"{r.estimate:.2f}× {better}" if r.estimate >= 1 else f"{1 / r.estimate:.2f}× {worse}"
    text = (f"{name}: {head} {_verdict_words(objective)} than baseline "
            f"({round(CONFIDENCE * 100)}% CI {r.low:.2f}–{r.high:.2f}), {result.spread.n} runs")
    if result.noisy or not r.clear:
        text += " (noisy: the spread is larger than the difference)"
    return text


_VERDICT_WORDS = {"ready": "to ready", "load": "to load", "first": "to a first inference",
                  "steady": "in steady state", "peak": "in peak memory"}


def _verdict_words(objective: str) -> str:
    return _VERDICT_WORDS.get(objective) or f"in {objective_words(objective)}"
