"""What a cluster sweep asks Slurm for, as named options (the command line's and the plan
form's): time, memory, CPUs, account, QOS, job name, setup lines, a container, a shared
group and trials per task. Each value is checked here, where it enters, with a message
that names the option; sweep.json keeps them, and submit.py turns them into sbatch's words.
"""

from __future__ import annotations

import re
from typing import Any

from .ownership import group_id

# Slurm's --time forms: MM, MM:SS, HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS (and UNLIMITED).
_TIME = re.compile(r"^(?:[0-9]+|[0-9]+:[0-9]{1,2}|[0-9]+:[0-9]{1,2}:[0-9]{1,2}|[0-9]+-[0-9]{1,2}"
                   r"(?::[0-9]{1,2}){0,2}|UNLIMITED|INFINITE)$")
_MEM = re.compile(r"^[0-9]+[KMGT]?$")
_NAME = re.compile(r"^[A-Za-z0-9_.+@-]+$")
TEXT_OPTIONS = ("time", "mem", "account", "qos", "job_name", "container")
HELP = {
    "time": "each job's time limit, as sbatch --time (30, 1:00:00, 1-00:00)",
    "mem": "memory per node, as sbatch --mem (16G)",
    "cpus_per_task": "CPUs per trial, as sbatch --cpus-per-task",
    "account": "the account charged, as sbatch --account",
    "qos": "the quality of service, as sbatch --qos",
    "job_name": "the jobs' name in squeue (default tflaunch-ID-TYPE)",
    "setup": "a line run before the trials on the node (repeatable): 'module load cuda'",
    "container": "run each trial in a container: an Apptainer/Singularity image (x.sif, docker://...) or "
                 "pyxis:IMAGE (srun --container-image); tflaunch must be installed in it",
    "shared_group": "a group that shares the sweep folder: its members may write the folder and results",
    "trials_per_task": "trials each array task runs one after another (Slurm adds about a second per task)",
    "trial_seconds": "the expected seconds of one trial: trials per task are chosen so a task lasts ~30 s",
}


def checked(values: dict[str, Any]) -> dict[str, Any]:
    """The options sweep.json keeps, from what a user gave (None or empty: not given);
    ValueError naming the option and what it takes."""
    out: dict[str, Any] = {}
    for key in TEXT_OPTIONS:
        value = values.get(key)
        if value in (None, ""):
            continue
        text = str(value).strip()
        pattern = {"time": _TIME, "mem": _MEM}.get(key, _NAME)
        if key == "container":
            ok = bool(text) and not text.startswith("-") and not any(c.isspace() for c in text)
        else:
            ok = bool(pattern.match(text.upper() if key == "mem" else text)) and not text.startswith("-")
        if not ok:
            raise ValueError(f"--{key.replace('_', '-')}: {text!r} is not a value sbatch takes ({HELP[key]}).")
        out[key] = text.upper() if key == "mem" else text
    for key in ("cpus_per_task", "trials_per_task"):
        value = values.get(key)
        if value in (None, "", 0):
            continue
        if not (isinstance(value, int) or (isinstance(value, str) and value.isascii() and value.isdigit())) \
                or int(value) < 1:
            raise ValueError(f"--{key.replace('_', '-')}: expected a whole number of 1 or more, not {value!r}.")
        out[key] = int(value)
    seconds = values.get("trial_seconds")
    if seconds not in (None, "", 0):
        try:
            number = float(seconds)
        except (TypeError, ValueError):
            number = float("nan")
        if not 0 < number < 1e6:  # nan fails both
            raise ValueError(f"--trial-seconds: expected seconds above 0, such as 3, not {seconds!r}.")
        out["trial_seconds"] = number
    setup = [str(line) for line in values.get("setup") or [] if str(line).strip()]
    if any("\0" in line or "\n" in line for line in setup):
        raise ValueError("--setup: one line each (give --setup again for another).")
    if setup:
        out["setup"] = setup
    group = values.get("shared_group")
    if group:
        out["shared_group"] = str(group)
        out["shared_gid"] = group_id(str(group))
    return out
