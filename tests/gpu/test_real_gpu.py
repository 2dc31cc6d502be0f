"""The `gpu` tier (`make test-gpu`): the real thing, where a GPU exists.

Each test says why it skipped: no NVIDIA driver here, no CuPy or PyTorch to allocate with,
no TensorFlow built with CUDA in the interpreter. TFLAUNCH_GPU_PYTHON names an interpreter
with CuPy or PyTorch (or TensorFlow with CUDA) when it is not the one running the tests.
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tflaunch.core.run.driver import run_sessions
from tflaunch.core.run.gpus.kernels import Verdict, predict
from tflaunch.core.run.gpus.nvml import GpuMemorySampler, inventory
from tflaunch.core.run.interpreters.build_info import build_info
from tflaunch.core.run.session import ProbeSession
from tflaunch.core.settings.config import LaunchConfig

pytestmark = pytest.mark.gpu
PYTHON = os.environ.get("TFLAUNCH_GPU_PYTHON", sys.executable)
PIP_CAPABILITIES = ["sm_60", "sm_70", "sm_80", "sm_89", "compute_90"]
MIB = 1 << 20


@pytest.fixture(scope="module")
def gpus():
    found = inventory()
    if not found.available:
        pytest.skip(f"no GPU: {found.reason}")
    return found


def _has(module: str) -> bool:
    return subprocess.run([PYTHON, "-c", f"import {module}"], capture_output=True).returncode == 0


@pytest.fixture(scope="module")
def tensorflow_cuda():
    build = build_info(PYTHON)
    if not build.ok or not build.is_cuda_build:
        pytest.skip(f"{PYTHON} has no TensorFlow built with CUDA ({build.message})")
    return build


def test_nvml_lists_every_card_with_its_figures(gpus):
    assert gpus.driver and gpus.cuda_driver
    for gpu in gpus.gpus:
        assert gpu.name and gpu.memory_total > 1 << 30 and gpu.compute_capability is not None
        assert gpu.uuid and gpu.uuid.startswith("GPU-")
    smi = subprocess.run(["nvidia-smi", "--query-gpu=name,memory.total", "--format=csv,noheader,nounits"],
                         capture_output=True, text=True)
    if smi.returncode == 0:  # NVML and nvidia-smi agree on the cards and their memory
        rows = [line.split(", ") for line in smi.stdout.strip().splitlines()]
        assert [r[0] for r in rows] == [g.name for g in gpus.gpus]
        assert [int(r[1]) for r in rows] == [g.memory_total // MIB for g in gpus.gpus]


def test_devices_command_names_the_cards_and_the_kernel_prediction(gpus):
    out = subprocess.run([sys.executable, "-m", "tflaunch.core.cli.main", "devices", "--json", "--python", PYTHON],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert [g["name"] for g in data["gpus"]] == [g.name for g in gpus.gpus]
    print(json.dumps(data, indent=2))  # the closing note quotes it


def test_pip_tensorflow_kernels_are_predicted_for_this_card(gpus):
    for gpu in gpus.gpus:
        verdict = predict(PIP_CAPABILITIES, gpu.compute_capability).verdict
        cc = gpu.compute_capability
        assert cc is not None
        expected = Verdict.NATIVE if cc in ((6, 0), (6, 1), (7, 0), (7, 5), (8, 0), (8, 6), (8, 7), (8, 9)) \
            else Verdict.JIT if cc >= (9, 0) else verdict
        assert verdict is expected, (gpu.name, cc, verdict)


ALLOCATE_IN_STEPS = textwrap.dedent("""
    import sys, time
    steps = [256, 512, 1024]
    try:
        import cupy
        blocks = []
        for mib in steps:
            blocks.append(cupy.ones(mib * 2**20, dtype=cupy.uint8))
            cupy.cuda.runtime.deviceSynchronize()
            print("allocated", mib, flush=True)
            time.sleep(1.0)
    except ImportError:
        import torch
        blocks = []
        for mib in steps:
            blocks.append(torch.ones(mib * 2**20, dtype=torch.uint8, device="cuda"))
            torch.cuda.synchronize()
            print("allocated", mib, flush=True)
            time.sleep(1.0)
""")


def test_per_process_gpu_curve_follows_what_a_script_allocates(gpus, tmp_path):
    if not (_has("cupy") or _has("torch")):
        pytest.skip(f"{PYTHON} has neither CuPy nor PyTorch to allocate GPU memory with")
    script = tmp_path / "allocate.py"
    script.write_text(ALLOCATE_IN_STEPS)
    sampler = GpuMemorySampler()
    try:
        session = ProbeSession(LaunchConfig(python=PYTHON, visible_gpus=(0,), timeout=120,
                                            program=(PYTHON, str(script)), until="exit"))
        record = run_sessions([session], gpus=sampler)[0]
    finally:
        sampler.close()
    assert record.exit_code == 0, list(record.stderr_tail)
    curve = [(t, per_gpu.get(0, 0)) for t, per_gpu in record.gpu_samples]
    assert curve, "no GPU samples"
    levels = sorted({b for _, b in curve})
    peak = max(levels)
    context = min(b for b in levels if b > 0)  # the CUDA context before the first block, or with it
    # The three blocks (256 + 512 + 1024 MiB) over the context and the allocator's rounding.
    assert 1792 * MIB <= peak <= 1792 * MIB + context + 512 * MIB, (peak / MIB, context / MIB)
    rises = [b for (_, a), (_, b) in itertools.pairwise(curve) if b > a + 128 * MIB]
    assert len(rises) >= 2, [b // MIB for _, b in curve]
    print("GPU curve (s, MiB):", [(round(t, 2), b // MIB) for t, b in curve[:: max(1, len(curve) // 40)]])


def test_every_gpu_setting_is_read_back_in_a_tensorflow_child(gpus, tensorflow_cuda):
    from tflaunch.core.run.driver import run_probe

    record = run_probe(LaunchConfig(python=PYTHON, model="sample:mlp", steady=3, memory_growth=True,
                                    allocator="cuda_malloc_async", cudnn_autotune=False, module_loading="lazy",
                                    cuda_cache="warm", visible_gpus=(0,), timeout=600))
    assert record.status.value == "ok", record.failure
    applied = record.settings.described
    assert list(applied["memory_growth"].values()) == [True]
    assert applied["allocator"] == "cuda_malloc_async" and applied["module_loading"] == "LAZY"
    assert set(record.phases["devices"].parts) == {"discovery", "settings", "contexts"}
    assert record.gpu_samples, "no per-process GPU memory sampled"
    # Growth on: the process holds what it uses, not the card (growth off held 148 GB of an H200).
    assert record.gpu_peaks[0] < gpus.gpus[0].memory_total // 2, (record.gpu_peaks, gpus.gpus[0].memory_total)
    print("memory growth on: GPU peaks", record.gpu_peaks, "allocator peaks", record.allocator_peaks)


def test_a_cold_and_warm_cuda_cache_pair_is_measured_and_remembered(gpus, tensorflow_cuda):
    """Where kernels are JIT-compiled, one cold/warm pair of runs on this card is measured and
    remembered for this card, interpreter, build and driver, and `tflaunch devices` says it.
    No timing is asserted (cold was not slower than warm on an H200 with lazy loading): the
    figures are printed for the closing note; `make bench` (bench_cuda_cache) takes medians."""
    from tflaunch.core.doctor.cuda_cache import cost_sentence, measure
    from tflaunch.core.store.cuda_cache_costs import CostStore, cost_key

    card = gpus.gpus[0]
    if predict(tensorflow_cuda.capabilities, card.compute_capability).verdict is not Verdict.JIT:
        pytest.skip(f"TensorFlow has native kernels for {card.compute_capability}: nothing is JIT-compiled")
    cost = measure(tensorflow_cuda, gpus, card, pairs=1, say=print)
    assert cost.pairs == 1 and cost.gpu_index == card.index
    assert cost.cache_bytes > 0, "the cold run compiled no kernel into its empty CUDA cache"
    assert all(0 < s < 3600 for s in (*cost.cold_s, *cost.warm_s))
    assert CostStore().get(cost_key(tensorflow_cuda, gpus, card)) == cost
    assert cost_sentence(tensorflow_cuda, gpus, card) == f"measured here: {cost.sentence()}"
    out = subprocess.run([sys.executable, "-m", "tflaunch.core.cli.main", "devices", "--python", PYTHON],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert cost.sentence() in out.stdout and "minutes" not in out.stdout
    print("CUDA cache:", json.dumps(cost.to_dict(), indent=2))


def test_a_program_on_the_gpu_shows_its_gpus_and_gpu_memory(gpus, tensorflow_cuda):
    """A program's text summary said "no GPU" while its JSON had the GPU curve: it names the
    card and the GPU memory (process peak, allocator peak) as a model's does."""
    from tflaunch.core.report.table import run_table

    programs = Path(__file__).resolve().parents[1] / "programs"
    config = LaunchConfig(python=PYTHON, program=(PYTHON, "fit_tfdata.py", "--steps", "400"), workdir=str(programs),
                          steady=3, memory_growth=True, visible_gpus=(0,), log_level=2, timeout=600)
    sampler = GpuMemorySampler()
    try:
        record = run_sessions([ProbeSession(config)], gpus=sampler)[0]
    finally:
        sampler.close()
    assert record.status.value == "ok" and record.stopped_at_ready, record.headline
    (gpu,) = record.environment.gpus or ()
    assert gpu.model and gpu.allocator_peak, gpu
    assert record.gpu_peaks.get(0) and record.allocator_peaks.get(0), (record.gpu_peaks, record.allocator_peaks)
    table = run_table(record)
    assert "Peak GPU memory (process tree): GPU 0: " in table and "TensorFlow allocator peak" in table, table
    assert gpu.model in record.environment_line and "no GPU" not in table, table
    print(table)


def test_two_instances_share_one_card(gpus, tensorflow_cuda):
    config = LaunchConfig(python=PYTHON, model="sample:mlp", steady=3, memory_growth=True, visible_gpus=(0,),
                          timeout=600)
    sampler = GpuMemorySampler()
    try:
        records = run_sessions([ProbeSession(config), ProbeSession(config)], gpus=sampler)
    finally:
        sampler.close()
    assert [r.status.value for r in records] == ["ok", "ok"]
    assert all(r.gpu_samples for r in records)
