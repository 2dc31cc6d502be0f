"""The real Slurm cluster, started once per test worker that needs it."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from .slurm_cluster import Cluster, missing


@pytest.fixture(scope="session")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    why = missing()
    if why:
        pytest.skip(why)
    started = Cluster(tmp_path_factory.mktemp("slurm"))
    started.start()
    before = os.environ.get("SLURM_CONF")
    os.environ["SLURM_CONF"] = str(started.conf)  # tflaunch asks sbatch and squeue as a user's shell would
    try:
        yield started
    finally:
        started.stop()
        if before is None:
            os.environ.pop("SLURM_CONF", None)
        else:
            os.environ["SLURM_CONF"] = before
