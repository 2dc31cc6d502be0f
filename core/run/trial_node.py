"""Where a cluster sweep's trial ran: the node type it was submitted to and the host it got.

The history keeps both in the run's trial (its node type, and the node's facts as the
trial's result file said them, cluster/node.py); its reader builds a TrialNode from the
stored TrialInfo (store/rows.py). A run off a cluster has none.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class TrialNode:
    """The node type and host of a cluster trial's run, each None where the trial did not say
    it as text."""

    node_type: str | None = None
    host: str | None = None

