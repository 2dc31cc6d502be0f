"""A cluster sweep's trials share one cache pack per node type on the sweep's folder: the
first trial of a type fills it, the next starts with it (trials run here in-process, as
`tflaunch trial` runs them on a node)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tflaunch.core.cluster.folder import NodeType, create
from tflaunch.core.cluster.trial import run_trial
from tflaunch.core.settings import cache_pack, caches
from tflaunch.core.settings.config import LaunchConfig
from tflaunch.core.sweep.plan import SweepPlan


@pytest.mark.slow
def test_the_first_trial_of_a_node_type_fills_the_shared_pack_and_the_next_reads_it(tmp_path: Path) -> None:
    base = LaunchConfig(model="sample:mlp", jit_compile=True, xla_cache=True, steady=2, timeout=120)
    plan = SweepPlan(base, {"intra": ["1"]}, repeat=2, warmup=0, racing=False)
    folder = create(tmp_path / "shared", plan, plan.candidates(), [NodeType("cpu", "")], {"cwd": "/"})
    first, again = [t.index for t in folder.trials() if t.candidate == "baseline"][:2]  # one XLA program, twice
    assert [run_trial(folder.path, i)[0] for i in (first, again)] == [0, 0]
    (pack,) = (folder.path / "packs").iterdir()
    meta = cache_pack.read_meta(pack)
    assert meta is not None and (meta["runs"], meta["misses"], meta["hits"]) == (2, 1, 1)
    assert caches.PACKS_ENV not in os.environ  # the sweep's folder, for its trials only
    assert not caches.packs_root().exists() or not any(caches.packs_root().iterdir())
