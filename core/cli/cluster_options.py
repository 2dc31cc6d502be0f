"""`tflaunch sweep|bench --on slurm`'s options: where the trials run, what each job asks
Slurm for (core/cluster/resources.py checks the values), and the node types."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ..cluster.folder import NodeType
from ..cluster.resources import HELP, NODE_TYPE

RESOURCES = ("time", "mem", "cpus_per_task", "account", "qos")  # also what `sweep resubmit` takes anew


def add_sweep_options(sweep: argparse.ArgumentParser) -> None:
    """`tflaunch sweep`'s options for running on a cluster."""
    group = sweep.add_argument_group(
        "on a Slurm cluster", "Expand the plan into --shared-dir and submit, for each GPU type, a check job and one "
        "job array that waits for it; returns at once. Follow it with `tflaunch sweep status DIR`, `merge DIR`, "
        "`resubmit DIR`, `cancel DIR`. No cluster yet? `tflaunch cluster sandbox up` starts one on this machine.")
    group.add_argument("--on", choices=("local", "slurm"), default="local",
                       help="where the trials run (default local: this machine, one after another)")
    group.add_argument("--partition", help="the Slurm partition of every job")
    group.add_argument("--gres", help="what each trial asks for, such as gpu:a100:1 (default: gpu:TYPE:1 per "
                                      "--gpu-types, none without it)")
    group.add_argument("--gpu-types", type=_types, default=[], metavar="TYPE[,TYPE...]",
                       help="one array per GPU type (a100,h100), each with its own verdict")
    group.add_argument("--max-parallel", type=_positive, metavar="K", help="trials of an array running at once")
    group.add_argument("--shared-dir", type=Path, default=Path("tflaunch-sweeps"),
                       help="a folder this machine and the nodes both see; the sweep's folder is made inside it "
                            "(default ./tflaunch-sweeps)")
    add_resource_options(group)
    for key in ("job_name", "container", "shared_group"):
        group.add_argument(f"--{key.replace('_', '-')}", help=HELP[key])
    group.add_argument("--setup", action="append", default=[], metavar="LINE", help=HELP["setup"])
    group.add_argument("--trials-per-task", type=_positive, metavar="K", help=HELP["trials_per_task"])
    group.add_argument("--trial-seconds", metavar="S", help=HELP["trial_seconds"])
    group.add_argument("--signal-lead", metavar="S", help=HELP["signal_lead"])
    group.add_argument("--requeue", action="store_true", help=HELP["requeue"])
    group.add_argument("--sbatch-arg", action="append", default=[], metavar="ARG",
                       help="passed to every sbatch (repeatable): --sbatch-arg=--begin=now+60")


def add_resource_options(parser: argparse.ArgumentParser | Any) -> None:
    for key in RESOURCES:
        parser.add_argument(f"--{key.replace('_', '-')}", help=HELP[key])


def resource_values(args: argparse.Namespace, keys: tuple[str, ...]) -> dict[str, Any]:
    return {key: getattr(args, key, None) for key in keys}


def named_values(args: argparse.Namespace) -> dict[str, Any]:
    """What resources.checked() takes, from `sweep --on slurm`'s arguments."""
    return resource_values(args, (*RESOURCES, "job_name", "container", "shared_group", "setup", "trials_per_task",
                                  "trial_seconds", "signal_lead", "requeue"))


CLUSTER_ONLY = (*RESOURCES, "job_name", "container", "shared_group", "trials_per_task", "trial_seconds",
                "signal_lead", "requeue", "partition", "gres", "max_parallel")


def local_refusal(args: argparse.Namespace) -> str | None:
    """Options that mean something on a cluster only, given for a run here: said, not ignored
    (`--time 60` once meant --timeout to argparse; now it is Slurm's time limit)."""
    given = [f"--{key.replace('_', '-')}" for key in (*CLUSTER_ONLY, "setup", "sbatch_arg", "gpu_types")
             if getattr(args, key, None)]
    if getattr(args, "on", "local") != "local" or not given:
        return None
    return (f"{', '.join(given)} {'is' if len(given) == 1 else 'are'} for a Slurm cluster: add --on slurm, or "
            f"leave {'it' if len(given) == 1 else 'them'} out (a run's own time limit here is --timeout).")


def _types(text: str) -> list[str]:
    types = [t.strip() for t in text.split(",") if t.strip()]
    bad = [t for t in types if not NODE_TYPE.match(t)]  # a type names files in the sweep folder
    if not types or bad:
        raise argparse.ArgumentTypeError(f"expected GPU types such as a100,h100, not {text!r}")
    return list(dict.fromkeys(types))


def _positive(text: str) -> int:
    if not (text.isascii() and text.isdigit()) or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected a number of 1 or more, not {text!r}")
    return int(text)


def node_types(args: argparse.Namespace) -> list[NodeType]:
    if args.gpu_types:
        count = (args.gres or "gpu:x:1").split(":")[-1]
        count = count if count.isdigit() else "1"
        return [NodeType(t, f"gpu:{t}:{count}") for t in args.gpu_types]
    if args.gres:
        parts = args.gres.split(":")
        return [NodeType(parts[1] if len(parts) == 3 else parts[0], args.gres)]
    return [NodeType("any", None)]
