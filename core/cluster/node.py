"""The node a trial ran on, as the trial records it: what a sweep groups its verdicts by.

The GPU model and the driver come from NVML on the node (the fake a test cluster declares
has none: then the node type named at submission is all there is, and the record says
that no GPU was seen). The job and array ids tie a result to what squeue and sacct show.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Mapping
from typing import Any

from ..run.gpus.nvml import machine_gpus

SLURM_VARIABLES = {"job_id": "SLURM_JOB_ID", "array_job_id": "SLURM_ARRAY_JOB_ID",
                   "array_task_id": "SLURM_ARRAY_TASK_ID", "partition": "SLURM_JOB_PARTITION",
                   "node": "SLURMD_NODENAME", "gpus_given": "CUDA_VISIBLE_DEVICES",
                   "gpus_on_node": "SLURM_GPUS_ON_NODE"}


def node_facts() -> dict[str, Any]:
    """Host, GPU models and driver, and the Slurm ids of this task (strings; None unset)."""
    gpus = machine_gpus()
    visible = _visible(os.environ.get("CUDA_VISIBLE_DEVICES"), len(gpus.gpus))
    models = sorted({g.name for g in gpus.gpus if visible is None or g.index in visible})
    return {"host": socket.gethostname(), "gpu_models": models, "driver": gpus.driver,
            "gpu_note": None if models else (gpus.reason or "no GPU was seen on the node"),
            **{key: os.environ.get(var) for key, var in SLURM_VARIABLES.items()}}


def _visible(value: str | None, count: int) -> set[int] | None:
    """The GPU indices a job was given, when Slurm named them by number; None: all."""
    if value is None or not value.strip():
        return None
    parts = [p.strip() for p in value.split(",")]
    return {int(p) for p in parts if p.isdigit() and int(p) < count} if all(p.isdigit() for p in parts) else None


def gpu_label(node: Mapping[str, Any]) -> str:
    """"NVIDIA A100-SXM4-80GB", "2 models: ...", or "no GPU seen"."""
    models = node.get("gpu_models") or []
    if not models:
        return "no GPU seen"
    return models[0] if len(models) == 1 else f"{len(models)} models: {', '.join(models)}"
