"""Before a sweep's trials run: one tiny job per node type proves what a trial needs on a
node of that type. It checks that each interpreter, model, program and working folder the
trials name exists there and that the installed tflaunch imports, and writes what it found
into the sweep folder (a marker that status reads back, so the folder is shared).

Nothing waits for it: the arrays are submitted with it, each depending on it (afterok), so
a busy partition, `--begin` or `--dependency` hold the check and the arrays alike and
`submit` returns at once. A check that finds something missing exits non-zero and cancels
its node type's arrays itself (their ids are in check/TYPE.arrays); status says why.

The job is plain sh: an interpreter missing on the node must still be reported, not
fail before it can say so.
"""

from __future__ import annotations

import shlex
import sys
from collections.abc import Sequence
from dataclasses import dataclass

from . import slurm
from .bounded_read import UnreadableFileError, read_bounded
from .folder import NodeType, SweepFolder, container_prefix
from .ownership import OwnershipError

MARKER_CAP = 1 << 20
ARRAYS_WAIT_S = 60  # how long a failed check waits for the arrays' ids (written right after their sbatch)


class CheckError(Exception):
    """What a node lacks, or why the check could not be made; the message says what to do."""


def needs(folder: SweepFolder) -> list[tuple[str, str, str]]:
    """(test flag, path, what it is) for everything a trial needs on the node."""
    out = [("-x", sys.executable, "the interpreter running tflaunch")]
    cwd = folder.options.get("cwd")
    if cwd:
        out.append(("-d", str(cwd), "the working folder"))
    for trial in folder.trials():
        config = trial.config
        out.append(("-x", config.python, "the trials' interpreter"))
        if config.is_program:
            out.extend(("-e", p, "the program") for p in config.program[1:2] if p.endswith(".py"))
            if config.workdir:
                out.append(("-d", config.workdir, "the program's working folder"))
        elif not config.model.startswith("sample:"):
            out.append(("-e", config.model, "the model"))
    return list(dict.fromkeys(out))


def check_script(folder: SweepFolder, node_type: NodeType) -> str:
    marker = shlex.quote(str(folder.path / "check" / node_type.name))
    arrays = shlex.quote(str(folder.path / "check" / f"{node_type.name}.arrays"))
    lines = ["#!/bin/sh", "# tflaunch: can a node of this sweep run its trials? (read back by tflaunch)",
             "{", '  echo "host $(hostname)"']
    for flag, path, what in needs(folder):
        quoted = shlex.quote(path)
        lines.append(f"  if [ {flag} {quoted} ]; then echo {shlex.quote(f'ok {what}: {path}')}; "
                     f"else echo {shlex.quote(f'missing {what}: {path}')}; fi")
    lines += container_checks(folder.options.get("container"))
    probe = shlex.quote("import tflaunch.core.cluster.trial")
    cannot = shlex.quote(f"missing tflaunch: {sys.executable} cannot import tflaunch on the node")
    lines.append(f"  if {shlex.quote(sys.executable)} -c {probe} 2>/dev/null; then echo 'ok tflaunch imports'; "
                 f"else echo {cannot}; fi")
    lines.append(f"}} > {marker}.tmp && mv {marker}.tmp {marker} || exit 1")
    # Something missing: the arrays waiting on this job (afterok) would wait for ever; cancel them.
    lines += [f"if grep -q '^missing ' {marker}; then",
              f"  waited=0; while [ ! -s {arrays} ] && [ $waited -lt {ARRAYS_WAIT_S} ]; do sleep 1; "
              "waited=$((waited + 1)); done",
              f"  [ -s {arrays} ] && scancel $(tr -cd '0-9 ' < {arrays})",
              "  exit 1", "fi"]
    return "\n".join(lines) + "\n"


def container_checks(image: object) -> list[str]:
    """--container: the runtime each trial is started through, and the image, on the node:
    without them every trial failed with "status 127" after the check had passed."""
    prefix = container_prefix(image)
    if not prefix or not isinstance(image, str):
        return []
    runtime = prefix[0]
    if runtime == "srun":  # Pyxis: srun knows --container-image only with the plugin
        found = "srun --help 2>&1 | grep -q -- --container-image"
        lines = [f"  if {found}; then echo 'ok the Pyxis plugin'; else echo "
                 f"{shlex.quote('missing the Pyxis plugin: srun has no --container-image on the node.')}; fi"]
    else:
        lines = [f"  if command -v {runtime} >/dev/null 2>&1; then echo 'ok {runtime}'; else echo "
                 f"{shlex.quote(f'missing {runtime} (for --container): it is not on the node.')}; fi"]
    if runtime != "srun" and "://" not in image:  # a file: readable there (docker://, oras:// are pulled)
        quoted = shlex.quote(image)
        lines.append(f"  if [ -r {quoted} ]; then echo {shlex.quote(f'ok the container image: {image}')}; "
                     f"else echo {shlex.quote(f'missing the container image: {image}')}; fi")
    return lines


def submit_check(folder: SweepFolder, node_type: NodeType, options: Sequence[str]) -> str:
    """Submit the check job for one node type (it waits for nothing): its job id."""
    script = folder.path / "check" / f"{node_type.name}.sh"
    for stale in (node_type.name, f"{node_type.name}.arrays"):  # a resubmission checks anew
        (folder.path / "check" / stale).unlink(missing_ok=True)
    script.write_text(check_script(folder, node_type), encoding="utf-8")
    output = slurm.output_pattern(folder.path / "check", f"{node_type.name}.log")
    return slurm.submit_one(str(script), [f"--job-name=tflaunch-check-{folder.id}", f"--output={output}", *options],
                            f"submit the check job for {node_type.name} nodes")


def note_arrays(folder: SweepFolder, node_type: NodeType, job_ids: Sequence[str]) -> None:
    """The arrays a failing check job cancels."""
    path = folder.path / "check" / f"{node_type.name}.arrays"
    path.write_text(" ".join(job_ids) + "\n", encoding="utf-8")


@dataclass(frozen=True)
class CheckOutcome:
    """What the check job of a node type found: None (no word yet), or a host and what was
    missing there ([] when everything was there)."""

    host: str
    missing: list[str]

    def reason(self, node_type: str) -> str:
        return (f"the check on {node_type} node {self.host} found " + "; ".join(
            m.rstrip(".") if m.endswith(".") else f"{m} does not exist" if ":" in m else m for m in self.missing)
            + ", so its trials were cancelled before they ran: put it where the nodes see it (a shared folder), "
              "then `tflaunch sweep resubmit`")


def check_outcome(folder: SweepFolder, node_type: str) -> CheckOutcome | None:
    """The check's marker read back (bounded, the user's own); None before it exists."""
    path = folder.path / "check" / node_type
    try:
        text = read_bounded(path, MARKER_CAP, folder.shared_gid).decode("utf-8", "replace")
    except FileNotFoundError:
        return None
    except (OwnershipError, UnreadableFileError) as exc:
        return CheckOutcome("?", [f"an unusable marker ({exc})"])
    lines = text.splitlines()
    host = next((line[5:] for line in lines if line.startswith("host ")), "?")
    return CheckOutcome(host, [line[len("missing "):] for line in lines if line.startswith("missing ")])


def not_shared_reason(folder: SweepFolder, node_type: str, job: str) -> str:
    """A check job Slurm says ended badly, whose marker never appeared here."""
    log, marker = folder.path / "check" / f"{node_type}.log", folder.path / "check" / node_type
    return (f"the check job for {node_type} nodes (job {job}) ended without its marker {marker}: "
            f"the folder {folder.path} is not shared with the nodes (or the job could not write there), so its "
            "trials were cancelled. Choose a shared folder (--shared-dir; the app's Shared folder) that this machine "
            f"and the nodes both see, such as your home or scratch folder. Its log, if the node wrote one: {log}.")
