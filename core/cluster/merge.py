"""A cluster sweep merged into the workstation's history, one history sweep per node type.

Merging is idempotent: each node type's sweep is found again by the folder's id, and a
trial already stored is stored again only if its result changed (a trial rerun by
`tflaunch sweep resubmit` replaces its earlier runs). Merging twice gives the same rows.
The verdicts are the local sweep's, computed per node type from the trials in their
array order, racing off (an array does not wait for one result to choose the next).
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field, replace
from typing import Any

from ..run.record import RunRecord
from ..run.trial_info import TrialInfo
from ..store.history import History, HistoryError
from ..store.profiles import Profile
from ..sweep.plan import MIN_TRIALS, Candidate, Sweep, Trial, format_objective, outcome
from ..sweep.session import trial_value
from ..sweep.stats import ratio_to_baseline
from ..sweep.stored import winner_profile
from .folder import SweepFolder, TrialFile
from .node import gpu_label
from .status import TrialState

MERGE_WAIT_S = 60.0  # how long a merge waits for another process's write to end


@dataclass
class NodeTypeSweep:
    """One node type's part of a cluster sweep, with its own verdict."""

    node_type: str
    sweep: Sweep
    gpu_models: list[str] = field(default_factory=list)  # what its trials' nodes reported
    hosts: list[str] = field(default_factory=list)
    history_id: int | None = None
    added: int = 0  # runs stored by this merge
    replaced: int = 0  # runs of rerun trials replaced

    @property
    def label(self) -> str:
        """"a100 (NVIDIA A100-SXM4-80GB)", the name the sweep was asked for with what was seen."""
        seen = ", ".join(self.gpu_models) or "no GPU seen"
        return f"{self.node_type} ({seen})"


def most_at_once(states: list[TrialState]) -> tuple[int, str | None]:
    """The most trials of this sweep that ran at the same time on one host, and the host.
    Trials that share a node share its cores and its storage: their times include that."""
    return _most_at_once([(str(s.result.node.get("host")), s.result.started, s.result.ended) for s in states
                          if s.result is not None and isinstance(s.result.started, float)
                          and isinstance(s.result.ended, float)])


def _most_at_once(spans: list[tuple[str, float, float]]) -> tuple[int, str | None]:
    edges: dict[str, list[tuple[float, int]]] = {}
    for host, started, ended in spans:
        edges.setdefault(host, []).extend([(started, 1), (ended, -1)])
    best, where = 0, None
    for host, steps in edges.items():
        running = 0
        for _, step in sorted(steps, key=lambda e: (e[0], e[1])):  # an end before a start at the same instant
            running += step
            if running > best:
                best, where = running, host
    return best, where


def stored_facts(cluster: dict[str, Any], trials: list[tuple[TrialInfo, RunRecord]]) -> list[tuple[str, str]]:
    """What a merged cluster sweep's review says of where it ran, from the history alone
    (`report sweep:N`): the node type with the GPUs seen, its hosts, and trials sharing one."""
    nodes = [t.node or {} for t, _ in trials]
    labels = sorted({gpu_label(n) for n in nodes if n.get("gpu_models")}) or ["no GPU seen"]
    hosts = sorted({str(n.get("host")) for n in nodes if n.get("host")})
    facts = [("Node type", f"{cluster.get('node_type')} ({', '.join(labels)})"),
             ("Hosts", ", ".join(hosts) or "—")]
    crowd, host = _most_at_once([(str(t.host), r.launched_at, r.finished_at)
                                 for t, r in trials if r.finished_at is not None])
    if crowd > 1:
        facts.append(("Trials at once", f"up to {crowd} runs on {host}: their times include sharing its cores "
                                        "and storage"))
    return facts


def node_type_sweeps(folder: SweepFolder, states: list[TrialState]) -> list[NodeTypeSweep]:
    """Each node type's sweep, its trials reported in their array order."""
    plan = replace(folder.plan, racing=False)
    candidates = _candidates(folder)
    by_key = {c.key: c for c in candidates}
    trials = {t.index: t for t in folder.trials()}
    out = []
    for node_type in folder.node_types:
        part = NodeTypeSweep(node_type.name, Sweep(plan, candidates))
        mine = sorted((s for s in states if s.node_type == node_type.name), key=lambda s: trials[s.index].number)
        for state in mine:
            trial, result = trials[state.index], state.result
            if result is None:
                continue
            candidate = by_key.get(trial.candidate)
            if candidate is None:
                continue
            value = trial_value(result.records, plan.objective) if result.ok else None
            part.sweep.report(Trial(trial.number, candidate, trial.warmup), value, result.reason)
            label = gpu_label(result.node)
            if label not in part.gpu_models and result.node.get("gpu_models"):
                part.gpu_models.append(label)
            if (host := str(result.node.get("host"))) not in part.hosts:
                part.hosts.append(host)
        out.append(part)
    return out


def _candidates(folder: SweepFolder) -> list[Candidate]:
    """The plan's candidates, with the settings each trial file was written with (a format
    axis named the converted files on the workstation that submitted)."""
    configs: dict[str, TrialFile] = {}
    for trial in folder.trials():
        configs.setdefault(trial.candidate, trial)
    plan = folder.plan
    planned = plan.candidates() if plan.axes else [Candidate("baseline", plan.base, True, plan.instances)]
    return [Candidate(c.key, configs[c.key].config if c.key in configs else c.config, c.baseline, c.instances)
            for c in planned]


def merge(folder: SweepFolder, states: list[TrialState], history: History) -> list[NodeTypeSweep]:
    """Store every result of the folder in `history`; HistoryError if it cannot be written."""
    parts = node_type_sweeps(folder, states)
    done = all(s.state in ("done", "failed") for s in states)
    crowd, host = most_at_once(states)
    shared = f" Up to {crowd} trials ran at once on {host}: their times include sharing it." if crowd > 1 else ""
    # Waiting for another merge (or a run being stored) is better than failing for it.
    with history.patience(MERGE_WAIT_S), history.transaction("merged"):
        for part in parts:
            _merge_part(part, folder, states, history, done, shared)
    return parts


def _merge_part(part: NodeTypeSweep, folder: SweepFolder, states: list[TrialState], history: History,
                done: bool, shared: str) -> None:
    part.history_id = _history_sweep(history, folder, part)
    stored: dict[int, list[tuple[TrialInfo, Any]]] = {}
    for trial, record in history.sweep_trials(part.history_id):
        stored.setdefault(-1 if trial.index is None else trial.index, []).append((trial, record))
    for state in states:
        if state.node_type != part.node_type or state.result is None:
            continue
        before = stored.get(state.index, [])
        launched = sorted(r.launched_at for r, _ in state.result.runs)
        if before and sorted(rec.launched_at for _, rec in before) == launched:
            continue  # merged already: the same runs
        if before:
            history.delete(rec.history_id for _, rec in before if rec.history_id is not None)
            part.replaced += len(before)
        for record, info in state.result.runs:
            history.record(record, "cluster", part.history_id, info)
            part.added += 1
    # The history's summary keeps where it ran: the node type, its hosts and any sharing of them.
    where = f" On {part.label}: {', '.join(part.hosts)}." if part.hosts else ""
    history.finish_sweep(part.history_id, "done" if done else "partial",
                         outcome(part.sweep.results(), part.sweep.plan.objective) + where + shared)


def _history_sweep(history: History, folder: SweepFolder, part: NodeTypeSweep) -> int:
    """The history's sweep for this folder and node type, made on the first merge."""
    node_type = part.node_type
    key = {"id": folder.id, "node_type": node_type, "folder": str(folder.path)}
    for sweep_id, *_ in history.list_sweeps():
        try:
            cluster = history.sweep_plan(sweep_id).get("cluster") or {}
        except (HistoryError, KeyError):
            continue  # a damaged sweep is not ours to judge here
        if cluster.get("id") == folder.id and cluster.get("node_type") == node_type:
            return int(sweep_id)
    return history.create_sweep(folder.plan.base.subject, {**part.sweep.plan.to_dict(), "cluster": key})


def node_type_comparison(parts: list[NodeTypeSweep], objective: str) -> str | None:
    """For the same settings on several node types (a bench repeated on a cluster): which
    node type is faster, and how sure; None for fewer than two node types with results."""
    measured = [(p, p.sweep.values[p.sweep.candidates[0].key]) for p in parts]
    measured = [(p, v) for p, v in measured if v]
    if len(measured) < 2:
        return None
    measured.sort(key=lambda pv: statistics.median(pv[1]))
    (fast, fast_values), (slow, slow_values) = measured[0], measured[-1]
    if len(fast_values) < MIN_TRIALS or len(slow_values) < MIN_TRIALS:
        return (f"{fast.node_type} leads ({format_objective(objective, statistics.median(fast_values))} median), "
                f"but comparing node types needs at least {MIN_TRIALS} trials on each: run --repeat "
                f"{MIN_TRIALS} or more.")
    ratio = ratio_to_baseline(fast_values, slow_values)
    better = "smaller" if objective == "peak" else "faster"
    sure = "" if ratio.low > 1 else " (not clear: the interval includes 1)"
    fast_median, slow_median = (format_objective(objective, statistics.median(v)) for v in (fast_values, slow_values))
    return (f"{fast.node_type} is {ratio.estimate:.2f}× {better} than {slow.node_type} (95% CI "
            f"{ratio.low:.2f}–{ratio.high:.2f}; medians {fast_median} and {slow_median}){sure}")


def node_type_winner(name: str, part: NodeTypeSweep, history: History) -> Profile:
    """The winner on one node type as a profile whose evidence names that node type (a
    setting fastest on one node type may not be on another). ValueError without a winner,
    or before the part is merged (its runs are the evidence)."""
    if part.history_id is None:
        raise ValueError(f"the {part.node_type} trials are not in the history yet: merge them first")
    profile = winner_profile(name, part.sweep, history, part.history_id)
    profile.evidence["sweep"]["node_type"] = part.label
    return profile
