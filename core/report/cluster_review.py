"""The review of a sweep run on a cluster: one verdict per node type, its settings ranked
within each node type (a setting fastest on an A100 node may not be on an H100 node, so
rows of different node types are never ranked against each other)."""

from __future__ import annotations

from collections.abc import Sequence

from ..run.record import RunRecord
from ..sweep.plan import Sweep, outcome
from ..sweep.report import result_rows
from .review import Cell, Review, environment_facts, slug


def cluster_review(parts: Sequence[tuple[str, Sweep]], records: Sequence[RunRecord], ident: str,
                   at_once: int = 1, host: str | None = None, comparison: str | None = None) -> Review:
    """`parts`: (node type label, its sweep), in the order the sweep was submitted;
    `at_once`: the most trials that ran together on one `host` (their times share it);
    `comparison`: for the same settings on several node types (a bench), which is faster."""
    if not parts:
        raise ValueError("a cluster sweep review needs at least one node type")
    plan = parts[0][1].plan
    objective = plan.objective
    facts = [("Model", plan.base.subject), ("Plan", plan.describe(len(parts[0][1].candidates))),
             ("Node types", "; ".join(f"{label}: {sweep.trials_run} trials" for label, sweep in parts)),
             *environment_facts(records)]
    if at_once > 1:
        facts.append(("Trials at once", f"up to {at_once} on {host}: their times include sharing its cores and "
                                        "storage"))
    header: list[str] = []
    rows: list[list[str]] = []
    data: list[list[Cell]] = []
    distributions: list[tuple[str, list[float], bool]] = []
    for label, sweep in parts:
        results = sweep.results()
        header, mine = result_rows(results, objective)
        # "#" numbers the rows of the whole table, as the chart names them; within a node
        # type the rows stay best first.
        first = len(rows) + 1
        rows.extend([label, str(first + i), *row[1:]] for i, row in enumerate(mine))
        data.extend([label, r.candidate.key, r.spread.median if r.spread else None, r.spread.n if r.spread else 0,
                     r.failures, r.note] for r in results)
        distributions.extend((f"{label.split(' (')[0]} · {r.candidate.key}", list(r.values), False) for r in results)
    headline = "\n".join(f"{label.split(' (')[0]}: {outcome(sweep.results(), objective)}" for label, sweep in parts)
    if comparison:  # the point of a bench repeated on each node type
        headline += f"\n{comparison}"
    unit = "bytes" if objective == "peak" else "s"
    return Review("sweep", f"{plan.base.subject}: which settings start it fastest, per node type", ident, facts,
                  [], (["Node type", *header], rows), headline, distributions, objective,
                  data=(["Node type", "Setting", f"Median ({unit})", "Runs", "Failed runs", "Note"], data),
                  file_stem=f"tflaunch-cluster-sweep-{slug(plan.base.subject)}")

