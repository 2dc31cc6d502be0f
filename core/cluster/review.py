"""A cluster sweep folder's review, as `tflaunch report cluster:DIR` and the app's Export
make it: what report/cluster_review.py draws, with what only the folder knows."""

from __future__ import annotations

from collections.abc import Sequence

from ..report.cluster_review import cluster_review
from ..report.review import Review
from .folder import SweepFolder
from .merge import NodeTypeSweep, most_at_once, node_type_comparison
from .status import TrialState, summary_line


def folder_review(folder: SweepFolder, states: Sequence[TrialState], parts: Sequence[NodeTypeSweep]) -> Review:
    """The review of what a sweep folder holds now (`report cluster:DIR`, the app's Export):
    the contention and, for a bench repeated on each node type, the node-type comparison."""
    records = [r for s in states if s.result is not None for r in s.result.records]
    crowd, host = most_at_once(list(states))
    comparison = None if folder.plan.axes else node_type_comparison(list(parts), folder.plan.objective)
    return cluster_review([(p.label, p.sweep) for p in parts], records,
                          f"cluster sweep {folder.id}, {summary_line(list(states))}", crowd, host, comparison)
