"""The cache pack on a real GPU (`make test-gpu`): Keras 3's fit compiles with XLA there by
default, so a pack fills with TensorFlow's XLA programs and XLA's autotune results, and the
next run reads them and computes the same loss. Skipped, with why, without a GPU or without
TensorFlow built with CUDA; timings are bench_cache_pack's, not this test's."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pytest

from tflaunch.core.run.driver import run_sessions
from tflaunch.core.run.gpus.nvml import inventory
from tflaunch.core.run.interpreters.build_info import build_info
from tflaunch.core.run.launch_check import launch_check
from tflaunch.core.run.record import RunRecord, RunStatus
from tflaunch.core.run.session import ProbeSession
from tflaunch.core.settings.config import LaunchConfig

pytestmark = pytest.mark.gpu
PYTHON = os.environ.get("TFLAUNCH_GPU_PYTHON", sys.executable)
PROGRAM = """
import keras
import numpy as np
keras.utils.set_random_seed(0)
model = keras.Sequential([keras.Input((32, 32, 3)), keras.layers.Conv2D(16, 3, activation="relu"),
                          keras.layers.GlobalAveragePooling2D(), keras.layers.Dense(10)])
model.compile(optimizer="sgd", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
rng = np.random.default_rng(0)
history = model.fit(rng.normal(size=(256, 32, 32, 3)).astype("float32"), rng.integers(0, 10, 256), batch_size=32,
                    epochs=1, verbose=0, shuffle=False)
print("LOSS", repr(history.history["loss"][-1]))
"""


@pytest.fixture(scope="module")
def cuda_tensorflow() -> str:
    found = inventory()
    if not found.available:
        pytest.skip(f"no GPU: {found.reason}")
    build = build_info(PYTHON)
    if not build.ok or not build.is_cuda_build:
        pytest.skip(f"{PYTHON} has no TensorFlow built with CUDA ({build.message})")
    return PYTHON


def _run(script: Path, python: str) -> RunRecord:
    config = LaunchConfig(python=python, program=("python", str(script)), until="exit", steady=0, timeout=300,
                          xla_cache=True, memory_growth=True)
    assert launch_check(config, script=True) == []  # the autotune cache's flags are known to this TensorFlow
    return run_sessions([ProbeSession(config)])[0]


def test_a_fit_on_the_gpu_fills_xla_and_autotune_caches_then_reads_them(cuda_tensorflow: str, tmp_path: Path):
    script = tmp_path / "fit.py"
    script.write_text(PROGRAM, encoding="utf-8")
    fill, warm = _run(script, cuda_tensorflow), _run(script, cuda_tensorflow)
    assert fill.status is RunStatus.OK and warm.status is RunStatus.OK, fill.headline
    assert fill.cache_pack is not None and warm.cache_pack is not None
    pack = Path(str(fill.cache_pack.folder))
    assert (fill.cache_pack.after.entries or 0) >= 1 and any((pack / "autotune").rglob("*"))
    assert (warm.cache_pack.hits or 0) >= 1 and warm.cache_pack.misses == 0

    def loss(record: RunRecord) -> str:
        return next(m.group(1) for line in record.stderr_tail if (m := re.search(r"LOSS (\S+)", line)))

    assert loss(fill) == loss(warm)
