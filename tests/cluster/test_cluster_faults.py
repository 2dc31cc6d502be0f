"""Faults found by attacking cluster sweeps from outside: damaged or foreign files in the
folder, Slurm answers that are not errors, and merges at the same time (unit tests, no
cluster: fake sbatch/squeue/scancel on PATH)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tflaunch.core.cluster import slurm
from tflaunch.core.cluster.folder import FolderError
from tflaunch.core.cluster.status import trial_states
from tflaunch.core.cluster.submit import submit_arrays

from .test_cluster_files import _folder, fake_slurm  # noqa: F401  (a fixture)


def test_a_sweep_whose_jobs_slurm_has_forgotten_is_not_an_error(fake_slurm, tmp_path):  # noqa: F811
    """Slurm forgets a job MinJobAge (300 s) after it ends, and squeue then refuses its id:
    status must still answer (from the files), not fail for ever after."""
    folder = _folder(tmp_path, repeat=1)
    folder.add_submission("5", "a100", [0, 1])
    folder.exit_path(1).write_text("0\n")
    fake_slurm.setenv("FAKE_RC", "1")
    fake_slurm.setenv("FAKE_ERR", "slurm_load_jobs error: Invalid job id specified\n")
    states = {s.index: s for s in trial_states(folder)}
    assert states[0].state == "lost" and "no longer holds it" in states[0].detail


def test_sbatch_refusing_an_option_names_it(fake_slurm):  # noqa: F811
    """sbatch names the option on one line and says `Try "sbatch --help"` on the last."""
    fake_slurm.setenv("FAKE_RC", "255")
    fake_slurm.setenv("FAKE_ERR", "sbatch: unrecognized option '--nonsense=1'\n"
                                  "Try \"sbatch --help\" for more information\n")
    with pytest.raises(slurm.SlurmError, match="unrecognized option '--nonsense=1'"):
        slurm.submit("/x/job.sh", [0], ["--nonsense=1"])


def test_a_percent_in_the_folders_path_is_not_read_as_slurms(fake_slurm, tmp_path):  # noqa: F811
    """--output=DIR/logs/%A_%a.out: a DIR of `p%j` made Slurm write the logs under p<job id>,
    which does not exist, so every task failed before it started."""
    folder = _folder(tmp_path / "p%j %A", repeat=1)
    calls = tmp_path / "sbatch-calls"
    sbatch = Path(os.environ["PATH"].split(os.pathsep)[0]) / "sbatch"
    sbatch.write_text(f'#!/bin/sh\nprintf "%s\\n" "$@" >> "{calls}"\necho 41\n')
    submit_arrays(folder, [0])
    logs = str(folder.path / "logs").replace("%", "%%")
    assert f"--output={logs}/%A_%a.out" in calls.read_text().splitlines()


def test_a_backslash_in_the_shared_folder_is_refused_before_anything_is_made(tmp_path):
    with pytest.raises(FolderError, match="backslash.*--shared-dir"):
        _folder(tmp_path / "a\\b", repeat=1)
    assert not (tmp_path / "a\\b").exists()
