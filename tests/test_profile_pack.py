"""A profile names the cache pack it was measured with, and `tflaunch run --profile` says
when this stack's pack is another (a pack never crosses its key)."""

from __future__ import annotations

import sys

from tflaunch.core.cli.profiles import pack_note
from tflaunch.core.run.environment import stack_for
from tflaunch.core.run.record import RunRecord, RunStatus
from tflaunch.core.settings.config import LaunchConfig
from tflaunch.core.store.profiles import Profile, evidence_from_runs

CONFIG = LaunchConfig(python=sys.executable, xla_cache=True)


def test_a_profile_s_evidence_names_its_pack_and_a_launch_on_another_stack_says_so():
    here = stack_for(CONFIG)
    assert here is not None
    record = RunRecord(CONFIG)
    record.status = RunStatus.OK
    folder = f"/home/me/.cache/tflaunch/packs/{here.key}"
    record.cache_pack = {"folder": folder, "hits": 1, "misses": 0}
    record.settings = {"xla_flags": f"--tf_xla_persistent_cache_directory={folder}/xla"}
    caches = evidence_from_runs([record])["caches"]
    assert caches["cache_pack"] == here.key
    assert pack_note(Profile("fast", CONFIG, {"caches": caches})) is None  # measured here: the same pack
    elsewhere = pack_note(Profile("fast", CONFIG, {"caches": {**caches, "cache_pack": "0123456789abcdef"}}))
    assert elsewhere is not None and "measured with the cache pack 0123456789abcdef" in elsewhere
    assert f"this stack's is {here.key}" in elsewhere and "never the other key's" in elsewhere
    assert pack_note(Profile("plain", CONFIG.replace(xla_cache=False), {"caches": caches})) is None
