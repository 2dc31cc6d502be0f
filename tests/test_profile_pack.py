"""A profile names the cache pack it was measured with, and `tflaunch run --profile` says
when this stack's pack is another (a pack never crosses its key)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tflaunch.core.cli.profiles import pack_note
from tflaunch.core.paths import profiles_dir
from tflaunch.core.run.environment import stack_for
from tflaunch.core.run.pack_facts import PackFacts
from tflaunch.core.run.read_back import ReadBack
from tflaunch.core.run.record import RunRecord, RunStatus
from tflaunch.core.settings.config import LaunchConfig
from tflaunch.core.store.profiles import Profile, ProfileStore, evidence_from_runs

from .builders import TFLAUNCH

CONFIG = LaunchConfig(python=sys.executable, xla_cache=True)
JIT_PROGRAM = """
import tensorflow as tf
w = tf.Variable(tf.ones([16, 16]))
@tf.function(jit_compile=True)
def step():
    w.assign_sub(0.01 * tf.tanh(w @ w))
    return tf.reduce_sum(w)
for _ in range(3):
    loss = step()
print("LOSS", repr(float(loss)))
"""


def test_a_profile_s_evidence_names_its_pack_and_a_launch_on_another_stack_says_so():
    here = stack_for(CONFIG)
    assert here is not None
    record = RunRecord(CONFIG)
    record.status = RunStatus.OK
    folder = f"/home/me/.cache/tflaunch/packs/{here.key}"
    record.cache_pack = PackFacts({"folder": folder, "hits": 1, "misses": 0})
    record.settings = ReadBack({"xla_flags": f"--tf_xla_persistent_cache_directory={folder}/xla"})
    caches = evidence_from_runs([record])["caches"]
    assert caches["cache_pack"] == here.key
    assert pack_note(Profile("fast", CONFIG, {"caches": caches})) is None  # measured here: the same pack
    elsewhere = pack_note(Profile("fast", CONFIG, {"caches": {**caches, "cache_pack": "0123456789abcdef"}}))
    assert elsewhere is not None and "measured with the cache pack 0123456789abcdef" in elsewhere
    assert f"this stack's is {here.key}" in elsewhere and "never the other key's" in elsewhere
    assert pack_note(Profile("plain", CONFIG.replace(xla_cache=False), {"caches": caches})) is None


@pytest.mark.slow
def test_tflaunch_run_with_a_pack_profile_fills_it_then_reads_it_and_says_so(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(JIT_PROGRAM, encoding="utf-8")
    ProfileStore(profiles_dir()).save(Profile("packed", LaunchConfig(xla_cache=True, log_level=2), {"runs": 1}))

    def launch() -> subprocess.CompletedProcess[str]:
        return subprocess.run([*TFLAUNCH, "run", "--profile", "packed", "--", sys.executable, str(script)],
                              capture_output=True, text=True, timeout=180)

    fill, again = launch(), launch()
    assert fill.returncode == 0 and again.returncode == 0, fill.stderr[-2000:]
    assert "0 XLA programs read from it, 1 compiled and added" in fill.stderr
    assert "1 XLA program read from it, 0 compiled and added" in again.stderr
    assert fill.stdout.splitlines()[-1] == again.stdout.splitlines()[-1]  # the same loss
