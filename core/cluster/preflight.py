"""Before a sweep's arrays are submitted: one tiny job per node type proves what a trial
needs on a node of that type. It writes a marker into the sweep folder, which the
launcher reads back (so the folder is shared), after checking that each interpreter,
model, program and working folder the trials name exists there and that the installed
tflaunch imports. Any failure says which, and nothing else is submitted.

The job is plain sh: an interpreter missing on the node must still be reported, not
fail before it can say so.
"""

from __future__ import annotations

import shlex
import sys
import time
from collections.abc import Callable

from . import slurm
from .folder import NodeType, SweepFolder

POLL_S = 0.25
LOOK_S = 2.0  # between squeue's answers on the check job: a busy controller is asked little
GRACE_S = 5.0  # after the job has left the queue: a network file system may show the marker late


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
    lines = ["#!/bin/sh", "# tflaunch: can a node of this sweep run its trials? (read back by tflaunch)",
             "{", '  echo "host $(hostname)"']
    for flag, path, what in needs(folder):
        quoted = shlex.quote(path)
        lines.append(f"  if [ {flag} {quoted} ]; then echo {shlex.quote(f'ok {what}: {path}')}; "
                     f"else echo {shlex.quote(f'missing {what}: {path}')}; fi")
    probe = shlex.quote("import tflaunch.core.cluster.trial")
    cannot = shlex.quote(f"missing tflaunch: {sys.executable} cannot import tflaunch on the node")
    lines.append(f"  if {shlex.quote(sys.executable)} -c {probe} 2>/dev/null; then echo 'ok tflaunch imports'; "
                 f"else echo {cannot}; fi")
    lines.append(f"}} > {marker}.tmp && mv {marker}.tmp {marker}")
    return "\n".join(lines) + "\n"


def check_node_type(folder: SweepFolder, node_type: NodeType, options: list[str], timeout: float,
                    on_wait: Callable[[str], None] | None = None, stop: Callable[[], bool] | None = None) -> str:
    """Run the check job for one node type; the host it ran on. CheckError otherwise.
    `stop`: asked while the job waits (the app's Cancel); true scancels it and raises."""
    script = folder.path / "check" / f"{node_type.name}.sh"
    marker = folder.path / "check" / node_type.name
    marker.unlink(missing_ok=True)
    script.write_text(check_script(folder, node_type), encoding="utf-8")
    log = folder.path / "check" / f"{node_type.name}.log"
    output = slurm.output_pattern(log.parent, log.name)
    job = slurm.submit_one(str(script), [f"--job-name=tflaunch-check-{folder.id}", f"--output={output}", *options],
                           f"submit the check job for {node_type.name} nodes")
    started, gone_at, reason = time.monotonic(), None, ""
    next_look = started  # squeue is asked every LOOK_S, the marker every POLL_S
    while not marker.exists():
        now = time.monotonic()
        if stop is not None and stop():
            slurm.cancel([job])
            raise CheckError(f"cancelled while the check job for {node_type.name} nodes (job {job}) waited; "
                             "nothing was submitted.")
        if now - started > timeout:
            slurm.cancel([job])
            raise CheckError(f"the check job for {node_type.name} nodes (job {job}) did not finish within "
                              f"{timeout:.0f} s{f' (waiting: {reason})' if reason else ''}; nothing was submitted. The "
                              "partition may be busy: try again later, or give --check-timeout more seconds.")
        if gone_at is None and now >= next_look:
            next_look = now + LOOK_S
            tasks = slurm.queue([job])
            if not tasks:
                gone_at = now
            elif tasks[0].reason not in ("", "None") and tasks[0].reason != reason:
                reason = tasks[0].reason  # said once per new reason, not at every look
                if on_wait:
                    on_wait(f"the check job for {node_type.name} nodes is waiting: {reason}")
        if gone_at is not None and now - gone_at > GRACE_S:
            raise CheckError(
                f"the check job for {node_type.name} nodes (job {job}) ended, but its marker {marker} never "
                f"appeared here: the folder {folder.path} is not shared with the nodes (or the job could not "
                "write there). Choose a shared folder (--shared-dir; the app's Shared folder) that this machine "
                f"and the nodes both see, such as your home or scratch folder. Its log, if the node wrote one: {log}.")
        time.sleep(POLL_S)
    lines = marker.read_text(encoding="utf-8", errors="replace").splitlines()
    host = next((line[5:] for line in lines if line.startswith("host ")), "?")
    missing = [line[len("missing "):] for line in lines if line.startswith("missing ")]
    if missing:
        raise CheckError(f"on {node_type.name} node {host}, " + "; ".join(f"{m} does not exist" if ":" in m else m
                                                                            for m in missing)
                          + ". Nothing was submitted: put it where the nodes see it (a shared folder), "
                            "or run the sweep with paths that exist on the nodes.")
    return host


def check_nodes(folder: SweepFolder, options_of: Callable[[NodeType], list[str]], timeout: float,
                on_wait: Callable[[str], None] | None = None, stop: Callable[[], bool] | None = None) -> dict[str, str]:
    """Every node type checked, one after another; {node type: host its check ran on}.
    `on_wait` hears each step and each wait; `stop` is asked between and during them."""
    hosts, count = {}, len(folder.node_types)
    for number, node_type in enumerate(folder.node_types, start=1):
        if stop is not None and stop():
            raise CheckError(f"cancelled before checking {node_type.name} nodes; nothing was submitted (the folder "
                             f"{folder.path} stays, unused).")
        if on_wait is not None:
            which = f"{node_type.name} ({number} of {count})" if count > 1 else node_type.name
            on_wait(f"checking a node of each type: {which}, a tiny job that must see {folder.path}")
        hosts[node_type.name] = check_node_type(folder, node_type, options_of(node_type), timeout, on_wait, stop)
    return hosts

