"""What a cluster sweep asks Slurm for, as named options (the command line's and the plan
form's): time, memory, CPUs, account, QOS, job name, setup lines, a container, a shared
group, trials per task, the early warning before the time limit and requeueing. Each
value is checked here, where it enters, with a message that names the option; sweep.json
keeps them, and submit.py turns them into sbatch's words.
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
# Values that reach sbatch's argv, job.sh or file names: text, never a line break or a
# terminal control (C0, DEL, C1); where Slurm names things, its own characters only.
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_PARTITION = re.compile(r"^[A-Za-z0-9_.-]+(?:,[A-Za-z0-9_.-]+)*$")
# name[:type][:count], as gpu:a100:1; a type is a word (no `/`, never `..`), as a node type's file names need.
_GRES = re.compile(r"^[A-Za-z][A-Za-z0-9_]*(?::[A-Za-z0-9][A-Za-z0-9_.-]*)?(?::[0-9]+)?$")
NODE_TYPE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
# sbatch options tflaunch itself sets for every job, or that replace its job script.
OWN_SBATCH = ("--wrap", "--array", "-a", "--output", "-o", "--error", "-e", "--parsable", "--open-mode")
SIGNAL_LEAD_S = 60  # sbatch's own default sig_time for --signal
SIGNAL_LEAD_MAX_S = 65535  # the most sbatch's --signal takes
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
    "signal_lead": "seconds before the time limit at which Slurm warns each task (sbatch --signal=B:USR1@S; Slurm "
                   "may send it up to a minute earlier): the trial then ends cleanly and keeps the phases it had "
                   f"measured. Default {SIGNAL_LEAD_S} (half of a --time under two minutes); 0: no warning",
    "requeue": "let Slurm requeue a trial's task when it is preempted or its node fails (sbatch --requeue): it runs "
               "again where it was, and only its trials without a whole result run again",
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
            ok = bool(text) and not text.startswith("-") and not any(c.isspace() for c in text) \
                and not _CONTROL.search(text)
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
        try:  # ASCII only: float() reads '١' as 1
            number = float(seconds) if isinstance(seconds, (int, float)) or str(seconds).isascii() else float("nan")
        except (TypeError, ValueError):
            number = float("nan")
        if not 0 < number < 1e6:  # nan fails both
            raise ValueError(f"--trial-seconds: expected seconds above 0, such as 3, not {seconds!r}.")
        out["trial_seconds"] = number
    lead = values.get("signal_lead")
    if lead not in (None, ""):
        out["signal_lead"] = _seconds(lead)
        signal_lead({**values, **out})  # never as long as the time limit
    if values.get("requeue"):
        out["requeue"] = True
    setup = [str(line) for line in values.get("setup") or [] if str(line).strip()]
    if any("\0" in line or "\n" in line or "\r" in line for line in setup):
        raise ValueError("--setup: one line each (give --setup again for another).")
    for line in setup:
        if _CONTROL.search(line.replace("\t", " ")):
            raise ValueError(f"--setup: {line!r} holds a control character; give the line as you would type it.")
        if line.lstrip().upper().startswith("#SBATCH"):  # job.sh's setup comes before its first command
            raise ValueError(f"--setup: {line!r} would be read by sbatch as a directive; give sbatch's options "
                             "with --sbatch-arg.")
    if setup:
        out["setup"] = setup
    group = values.get("shared_group")
    if group:
        out["shared_group"] = str(group)
        out["shared_gid"] = group_id(str(group))
    return out


def check_placement(root: str, partition: Any, gres_of_types: list[tuple[str, str | None]],
                    sbatch_args: list[str]) -> None:
    """Where the jobs run and what sbatch is given besides the named options: the shared
    folder, the partition, each node type's name and gres, and --sbatch-arg (options only:
    a path there would become sbatch's job script). ValueError naming the option."""
    if _CONTROL.search(root):
        raise ValueError(f"--shared-dir: {root!r} holds a line break or a control character; it is written "
                         "into the job script and Slurm's log paths. Choose a folder whose path has none.")
    if partition and not _PARTITION.match(str(partition)):
        raise ValueError(f"--partition: {partition!r} is not a partition name (letters, digits, '_', '.', '-'; "
                         "several separated by commas).")
    for name, gres in gres_of_types:
        if gres and not _GRES.match(gres):  # none or empty: a node type without generic resources
            raise ValueError(f"--gres: {gres!r} is not a generic resource sbatch takes, such as gpu:a100:1 or "
                             "gpu:1 (NAME[:TYPE][:COUNT], the type a word).")
        if not NODE_TYPE.match(name):
            raise ValueError(f"--gpu-types: {name!r} is not a GPU type such as a100 (letters, digits, '_', '.', "
                             "'-', starting with a letter or digit).")
    for arg in sbatch_args:
        option = arg.split("=", 1)[0]
        if not arg.startswith("-") or arg in ("-", "--") or _CONTROL.search(arg):
            raise ValueError(f"--sbatch-arg: {arg!r} is not an sbatch option; give options only, with their value "
                             "after '=' (--sbatch-arg=--begin=now+60): a path there would replace tflaunch's job "
                             "script.")
        if option == "--signal":  # the trial ends cleanly at SIGUSR1 to its batch shell only
            raise ValueError("--sbatch-arg: --signal is tflaunch's to set: give --signal-lead SECONDS (the trial "
                             "ends cleanly at Slurm's SIGUSR1 to its batch shell, sent that long before the time "
                             "limit; 0: none).")
        if option in OWN_SBATCH or (not arg.startswith("--") and arg[:2] in ("-a", "-o", "-e")):
            raise ValueError(f"--sbatch-arg: {option} is tflaunch's to set (its job script, array and logs); "
                             "leave it out.")


def _seconds(value: Any) -> int:
    """--signal-lead's whole seconds: ASCII digits only (int() reads '١' as 1)."""
    text = str(value).strip()
    if isinstance(value, bool) or not (text.isascii() and text.isdigit()) or int(text) > SIGNAL_LEAD_MAX_S:
        raise ValueError(f"--signal-lead: {value!r} is not a whole number of seconds from 0 to {SIGNAL_LEAD_MAX_S}; "
                         f"give the seconds before the time limit at which Slurm warns each task, such as "
                         f"{SIGNAL_LEAD_S} (0: no warning).")
    return int(text)


def time_limit_s(value: Any) -> int | None:
    """sbatch --time in seconds (MM, MM:SS, HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS); None when
    none is given, or for UNLIMITED."""
    text = str(value or "").strip()
    if not text or not _TIME.match(text) or text in ("UNLIMITED", "INFINITE"):
        return None
    days, rest = text.split("-", 1) if "-" in text else ("0", text)
    parts = [int(p) for p in rest.split(":")]
    if "-" in text or len(parts) == 3:  # D-HH[:MM[:SS]], HH:MM:SS
        hours, minutes, seconds = (parts + [0, 0])[:3]
    else:  # MM, MM:SS
        hours, minutes, seconds = 0, parts[0], (parts + [0])[1]
    return ((int(days) * 24 + hours) * 60 + minutes) * 60 + seconds


def signal_lead(options: dict[str, Any]) -> int:
    """The seconds before its time limit at which each task asks Slurm for SIGUSR1 (0: none).
    Given: checked to be shorter than --time, or the warning would end every trial before it
    measured anything. Not given: sbatch's own 60 s, or half of a --time under two minutes
    (Slurm's shortest limit is a minute). ValueError naming both options."""
    given, limit = options.get("signal_lead"), time_limit_s(options.get("time"))
    if isinstance(given, int) and not isinstance(given, bool):
        if given and limit is not None and given >= limit:
            raise ValueError(f"--signal-lead: {given} s is not shorter than --time {options.get('time')} ({limit} s): "
                             "the warning would end each task before its trials measured anything. Give a shorter "
                             "--signal-lead or a longer --time.")
        return given
    return SIGNAL_LEAD_S if limit is None else min(SIGNAL_LEAD_S, limit // 2)
