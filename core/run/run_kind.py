"""The kind of a run: how it was measured, besides its settings, said once so that no view
guesses and no statistic pools runs measured differently.

- plain: a measured run, the app's, the command line's or a sweep's;
- anatomy: TensorFlow's profiler was on (its phases are slower than a measured run's);
- warm: forked from a warm server that had imported TensorFlow; a launch that found no
  server started one and waited for its import, a one-time cost a later warm launch does
  not pay, so it is a kind apart;
- cold: asked to start warm, started cold (the notes say why);
- a cluster trial: run on a node of a cluster (a sweep's trial under Slurm);
- a doctor arm: run by the doctor (the Advisor), interleaved with its baseline.

The parts combine (a doctor arm can be warm). Every part comes from what a record already
stores: its anatomy or launch notes, its warm start's facts and marks, the node it ran on
and who launched it (the history's `source`). Runs are one measurement repeated only when
their kinds are equal.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from .words import start_kind

if TYPE_CHECKING:
    from .record_data import RecordData

# The launch note of a run with TensorFlow's profiler on; stored with the run, so a profiled
# run that failed before its anatomy came back is still known as one.
ANATOMY_NOTE = ("TensorFlow's profiler was on (an anatomy run): its phases are slower than a measured run's "
                "and are shown only beside them")

# How a launch started: not asked warm (None), warm, warm having started the server, cold.
WARM, WARM_SERVER, COLD = "warm", "warm_server", "cold"
# Who ran it, where that changes the measurement: a cluster's node, the doctor's experiment.
CLUSTER, DOCTOR = "cluster", "doctor"

_START_WORDS = {WARM: "warm", WARM_SERVER: "warm, paid the server's start", COLD: "cold (asked warm)"}
_START_SHORT = {WARM: "warm", WARM_SERVER: "warm + server start", COLD: "cold"}
_ORIGIN_WORDS = {CLUSTER: "cluster trial", DOCTOR: "doctor arm"}
_ORIGIN_SHORT = {CLUSTER: "cluster", DOCTOR: "doctor"}
_ANATOMY_WORDS = "anatomy (profiler on)"


@dataclass(frozen=True)
class RunKind:
    anatomy: bool = False  # TensorFlow's profiler was on
    start: str | None = None  # None (not asked to start warm), WARM, WARM_SERVER or COLD
    origin: str = ""  # "" (the app, the command line, a local sweep), CLUSTER or DOCTOR

    @property
    def plain(self) -> bool:
        return self == PLAIN

    @property
    def words(self) -> str:
        """The kind in words, for a tooltip, a headline or a review: "warm, paid the server's start"."""
        return self._joined(_ORIGIN_WORDS, _ANATOMY_WORDS, _START_WORDS)

    @property
    def short(self) -> str:
        """The kind in a table's cell: "anatomy", "warm + server start", "doctor, warm"."""
        return self._joined(_ORIGIN_SHORT, "anatomy", _START_SHORT)

    @property
    def tip(self) -> str:
        """What the kind means for its figures, for a tooltip; empty for a plain run."""
        out = []
        if self.origin == CLUSTER:
            out.append("A cluster trial: run on a node of a cluster, under Slurm.")
        if self.origin == DOCTOR:
            out.append("Run by the doctor (the Advisor), interleaved with its baseline.")
        if self.anatomy:
            out.append("TensorFlow's profiler was on: its phases are slower than a measured run's; compared only "
                       "with other anatomy runs.")
        out.append({WARM: "Started warm: forked from a warm server that had imported TensorFlow and Keras before "
                          "the launch.",
                    WARM_SERVER: "Started warm, but no warm server was running: this launch started one and waited "
                                 "for its import, which a later warm launch does not pay. Compared apart from other "
                                 "warm launches.",
                    COLD: "Asked to start warm, it started cold: a warm start was not possible (the run's log says "
                          "why)."}.get(self.start or "", ""))
        return " ".join(part for part in out if part)

    def _joined(self, origins: dict[str, str], anatomy: str, starts: dict[str, str]) -> str:
        parts = [origins.get(self.origin, ""), anatomy if self.anatomy else "", starts.get(self.start or "", "")]
        return ", ".join(part for part in parts if part) or "plain"


PLAIN = RunKind()


def stored_kind(source: str, anatomy: bool, start: str | None, server_started: bool, on_a_node: bool) -> RunKind:
    """The kind from a run's stored facts (a history row's columns, or a record's fields)."""
    origin = DOCTOR if source == DOCTOR else CLUSTER if on_a_node or source == CLUSTER else ""
    if start == WARM and server_started:
        start = WARM_SERVER
    return RunKind(anatomy, start if start in (WARM, WARM_SERVER, COLD) else None, origin)


def run_kind(record: RecordData) -> RunKind:
    """The kind of this run, from what its record holds."""
    anatomy = record.anatomy is not None or ANATOMY_NOTE in record.launch_notes
    return stored_kind(record.source, anatomy, start_kind(record),
                       record.warm_start is not None and record.warm_start.server_started,
                       record.node is not None)
