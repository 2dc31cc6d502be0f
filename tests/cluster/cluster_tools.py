"""Driving `tflaunch` against the test cluster, as a user's shell would."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import psutil

TFLAUNCH = [sys.executable, "-m", "tflaunch.core.cli.main"]
SETTLE_TIMEOUT_S = 180.0


def tflaunch(*args: str, cwd: Path | None = None, timeout: float = 300, umask: int | None = None,
             env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """`umask`: the shell's (sbatch hands it on to the jobs, as SLURM_UMASK)."""
    preexec = None if umask is None else (lambda: os.umask(umask))  # noqa: E731
    return subprocess.run([*TFLAUNCH, *args], capture_output=True, text=True, timeout=timeout, cwd=cwd,
                          preexec_fn=preexec, env=None if env is None else {**os.environ, **env})


def submit(*args: str, cwd: Path, umask: int | None = None, env: dict[str, str] | None = None,
           timeout: float = 60) -> Path:
    """`tflaunch sweep --on slurm ...`; the folder it printed. It returns at once: nothing
    waits for the cluster (a timeout of a minute says so)."""
    done = tflaunch("sweep", "--on", "slurm", *args, cwd=cwd, umask=umask, env=env, timeout=timeout)
    assert done.returncode == 0, done.stderr[-3000:]
    folder = Path(done.stdout.strip().splitlines()[-1])
    assert (folder / "sweep.json").is_file()
    return folder


def status(folder: Path) -> dict[str, Any]:
    done = tflaunch("sweep", "status", str(folder), "--json")
    assert done.returncode == 0, done.stderr[-3000:]
    return dict(json.loads(done.stdout))


def settle(folder: Path, timeout: float = SETTLE_TIMEOUT_S) -> dict[str, Any]:
    """The status once no trial is pending or running."""
    deadline = time.monotonic() + timeout
    while True:
        now = status(folder)
        if not {"pending", "running"} & set(now["counts"]):
            return now
        assert time.monotonic() < deadline, f"the sweep did not settle: {now}"
        time.sleep(0.3)


def wait_for(folder: Path, state: str, timeout: float = 60.0) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        now = status(folder)
        if state in now["counts"]:
            return now
        assert time.monotonic() < deadline, f"no trial became {state}: {now}"
        time.sleep(0.2)


def merge(folder: Path) -> list[dict[str, Any]]:
    """Each node type's part of `sweep merge --json` (one JSON document)."""
    done = tflaunch("sweep", "merge", str(folder), "--json")
    assert done.returncode == 0, done.stderr[-3000:]
    return list(json.loads(done.stdout)["parts"])


def leftovers(marker: str) -> list[psutil.Process]:
    """Live processes whose command line or environment holds `marker` (a trial's run marker)."""
    found = []
    for proc in psutil.process_iter(["cmdline", "environ"]):
        try:
            if marker in " ".join(proc.info["cmdline"] or []) or marker in (proc.info["environ"] or {}).values():
                found.append(proc)
        except (psutil.Error, TypeError):
            continue
    return found


def unreachable_squeue(folder: Path) -> str:
    """A PATH whose squeue cannot reach a controller, as on a machine that sees the shared
    folder but not the cluster."""
    bin_dir = folder / "bin"
    bin_dir.mkdir()
    (bin_dir / "squeue").write_text("#!/bin/sh\necho 'slurm_load_jobs error: Unable to contact slurm controller "
                                    "(connect failure)' >&2\nexit 1\n")
    (bin_dir / "squeue").chmod(0o755)
    return f"{bin_dir}{os.pathsep}{os.environ['PATH']}"
