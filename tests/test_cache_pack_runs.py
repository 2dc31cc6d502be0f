"""The cache pack on real TensorFlow children: a jit_compile program filled the pack, then
read it back (hits verified from TensorFlow's own lines, or the entries' read times when the
log level hides them), computing the same loss as without; a damaged entry or a read-only
pack costs only the cache.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tflaunch.core.run.driver import run_sessions
from tflaunch.core.run.environment import stack_for
from tflaunch.core.run.record import RunRecord, RunStatus
from tflaunch.core.run.session import ProbeSession
from tflaunch.core.run.words import notes
from tflaunch.core.settings import cache_pack, caches
from tflaunch.core.settings.config import LaunchConfig

# A training loop compiled with XLA: its loss after STEPS steps, printed exactly.
PROGRAM = """
import tensorflow as tf
tf.random.set_seed(0)
w = tf.Variable(tf.random.normal([32, 32]))
x = tf.random.normal([16, 32])
@tf.function(jit_compile=True)
def step():
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.tanh(x @ w) ** 2)
    w.assign_sub(0.1 * tape.gradient(loss, w))
    return loss
for _ in range(5):
    loss = step()
print("LOSS", repr(float(loss)))
"""


def run(script: Path, *, pack: bool, log_level: int | None = None) -> RunRecord:
    config = LaunchConfig(program=("python", str(script)), until="exit", steady=0, timeout=120,
                          xla_cache=pack, log_level=log_level)
    return run_sessions([ProbeSession(config)])[0]


def loss(record: RunRecord) -> str:
    found = [m.group(1) for line in record.stderr_tail if (m := re.search(r"LOSS (\S+)", line))]
    assert found, list(record.stderr_tail)[-5:]
    return found[-1]


@pytest.fixture
def script(tmp_path: Path) -> Path:
    path = tmp_path / "train.py"
    path.write_text(PROGRAM, encoding="utf-8")
    return path


@pytest.mark.slow  # two real XLA runs; the pack's logic is tested in test_cache_pack.py
def test_the_pack_is_filled_then_hit_and_the_loss_is_the_same(script: Path) -> None:
    cold = run(script, pack=False)
    fill = run(script, pack=True)
    warm = run(script, pack=True)
    assert all(r.status is RunStatus.OK for r in (cold, fill, warm))
    assert loss(fill) == loss(warm) == loss(cold)
    assert cold.cache_pack is None and fill.cache_pack is not None and warm.cache_pack is not None
    assert fill.cache_pack.before.entries == 0 and fill.cache_pack.after.entries == 1
    assert fill.cache_pack.hits == 0 and fill.cache_pack.misses == 1
    assert warm.cache_pack.hits == 1 and warm.cache_pack.misses == 0
    assert any("Loading cached entry" in line for line in warm.cache_pack.lines)
    assert any(n.startswith("Cache pack: held 1 XLA programs before the run") and "1 hit (compile skipped)" in n
               for n in notes(warm))
    folder = caches.pack_folder(stack_for(warm.config))
    assert Path(str(warm.cache_pack.folder)) == folder
    meta = cache_pack.read_meta(folder)
    assert meta is not None and (meta["runs"], meta["hits"], meta["misses"]) == (2, 1, 1)


@pytest.mark.slow
def test_hits_are_seen_by_read_times_when_the_log_level_hides_tensorflow_s_lines(script: Path) -> None:
    run(script, pack=True, log_level=2)
    warm = run(script, pack=True, log_level=2)
    assert warm.status is RunStatus.OK and warm.cache_pack is not None and warm.cache_pack.lines == ()
    assert warm.cache_pack.hits == 1 and warm.cache_pack.misses == 0


@pytest.mark.slow
def test_a_damaged_entry_costs_only_the_cache(script: Path) -> None:
    fill = run(script, pack=True)
    assert fill.cache_pack is not None
    entry = next((Path(str(fill.cache_pack.folder)) / cache_pack.XLA).glob("*.pb"))
    whole = entry.read_bytes()
    entry.write_bytes(whole[: len(whole) // 2])  # what a killed copy or a full disk leaves
    # Without the guard TensorFlow fails the program: OutOfRangeError, "Read less bytes than requested".
    again = run(script, pack=True)
    assert again.status is RunStatus.OK and loss(again) == loss(fill)
    assert any("Removed the damaged XLA cache entry" in n for n in again.launch_notes)
    assert again.cache_pack is not None and again.cache_pack.misses == 1 and entry.stat().st_size == len(whole)
