"""Where a cluster sweep's trial ran: the node type it was submitted to and the host it got.

The history keeps both in the run's trial (its node type, and the node's facts as the
trial's result file said them, cluster/node.py); its reader builds a TrialNode from that
checked dict (store/rows.py). A run off a cluster has none.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class TrialNode:
    """The node type and host of a cluster trial's run, each None where the trial did not say
    it as text."""

    node_type: str | None = None
    host: str | None = None

    @classmethod
    def of(cls, trial: Mapping[str, Any]) -> TrialNode:
        """From a stored trial: its node_type, and its node's host."""
        node = trial.get("node")
        host = node.get("host") if isinstance(node, Mapping) else None
        node_type = trial.get("node_type")
        return cls(node_type if isinstance(node_type, str) else None, host if isinstance(host, str) and host else None)
