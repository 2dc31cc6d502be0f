"""Which trial of a sweep a run was: the candidate, whether it was a warm-up, the trial's
number and the instance within it; for a cluster trial also its index in the sweep's folder,
the node type it was submitted to and the node's facts as its result file said them.

One type for the sweep that runs here (sweep/session.py) and the one merged from a cluster
(cluster/trial.py): the history stores `to_dict()` in the run's row and its reader builds it
back from the checked dict (store/stored_values.stored_trial).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class TrialInfo:
    candidate: str
    warmup: bool
    number: int
    instance: int = 0
    # A cluster trial's, None elsewhere: `node` holds texts, None or lists of texts (cluster/node.py).
    index: int | None = None
    node_type: str | None = None
    node: Mapping[str, Any] | None = None

    @property
    def on_a_node(self) -> bool:
        return self.node is not None

    @property
    def host(self) -> str | None:
        host = self.node.get("host") if self.node is not None else None
        return host if isinstance(host, str) and host else None

    def to_dict(self) -> dict[str, Any]:
        """As the history stores it (and a cluster result file carries it), in that order."""
        out: dict[str, Any] = {"candidate": self.candidate, "warmup": self.warmup, "number": self.number,
                               "instance": self.instance}
        if self.node is not None:
            out.update(index=self.index, node_type=self.node_type, node=dict(self.node))
        return out
