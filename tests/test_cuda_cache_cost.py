"""What a cold CUDA cache costs on a card: measured as cold/warm pairs, remembered per card,
interpreter, build and driver, and said by `tflaunch devices` only as measured.

No GPU here: the GPU's runs are stood in at the hardware boundary (a record as a run on a
card would give, the cache folder filled as the driver would fill it); NVML is the fake of
tests/test_gpus.py. The GPU tier (tests/gpu) makes the real measurement on a card.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tflaunch.core.cli.main import main
from tflaunch.core.doctor import cuda_cache
from tflaunch.core.doctor.cuda_cache import MeasureError, cost_sentence, jit_cards, measure
from tflaunch.core.run import events as ev
from tflaunch.core.run.environment_facts import EnvironmentFacts
from tflaunch.core.run.gpus import nvml as gpus
from tflaunch.core.run.gpus.nvml import inventory
from tflaunch.core.run.interpreters.build_info import build_info
from tflaunch.core.run.model_facts import ModelFacts
from tflaunch.core.run.read_back import ReadBack
from tflaunch.core.run.record import RunRecord
from tflaunch.core.settings import caches
from tflaunch.core.settings.config import LaunchConfig
from tflaunch.core.store.cuda_cache_costs import CostStore, cost_key

from .test_cli_devices import PIP_WHEEL, fake_tensorflow
from .test_gpus import FakeNvml

COLD_READY, WARM_READY = 14.2, 13.85


class GpuRuns:
    """The runs a card would give: a cold cache is filled with 168 KB of kernels and costs
    0.35 s more to ready (0.3 s of it in the first call, where lazy loading compiles)."""

    def __init__(self, fail_at: int | None = None) -> None:
        self.caches: list[str | None] = []
        self.fail_at = fail_at

    def __call__(self, config: LaunchConfig) -> RunRecord:
        self.caches.append(config.cuda_cache)
        assert config.model == "sample:mlp" and config.visible_gpus == (0,)
        folder = caches.folders(config.cuda_cache, False, caches.Stack(os.path.realpath(config.python), "2.99.0",
                                                                       "575.51", ()))["cuda"]
        folder.mkdir(parents=True, exist_ok=True)
        if config.cuda_cache == "cold":
            (folder / "kernels.bin").write_bytes(b"k" * 168_000)
        record = RunRecord(config)
        record.settings = ReadBack({"cuda_cache": str(folder)})
        cold = config.cuda_cache == "cold"
        for name, seconds in (("spawn", 0.1), ("import", 9.0), ("devices", 0.5), ("load", 0.2), ("trace", 0.1),
                              ("first", 1.1 if cold else 0.8), ("steady", 0.01)):
            record.apply(ev.PhaseEnd(record.launched_at + 1, name, seconds, 1, 2,
                                     {"median": 0.01, "n": 3} if name == "steady" else {}, {}))
        record.ready_at = record.launched_at + (COLD_READY if cold else WARM_READY)
        if self.fail_at == len(self.caches):
            record.finish(1)
            return record
        record.apply(ev.Result(record.launched_at + 15, "steady", EnvironmentFacts({"tensorflow": "2.99.0"}),
                               ModelFacts()))
        record.finish(0)
        return record


@pytest.fixture
def h200(monkeypatch, tmp_path):
    monkeypatch.setattr(gpus, "_load_nvml", lambda: FakeNvml())
    python = fake_tensorflow(tmp_path, {"is_cuda_build": True, "cuda_version": "12.5.1", "cudnn_version": "9",
                                        "cuda_compute_capabilities": PIP_WHEEL})
    return build_info(python), inventory()


def test_a_pair_is_measured_after_a_warm_fill_and_remembered_for_that_card(h200):
    build, found = h200
    (card,) = jit_cards(build, found)  # GPU 0 (9.0) JIT-compiles; GPU 1 (8.0) is native
    assert card.index == 0
    runs = GpuRuns()
    cost = measure(build, found, card, pairs=1, run=runs)
    assert runs.caches == ["warm", "cold", "warm"], "one unrecorded warm run fills the warm folder first"
    assert cost.cold_s == pytest.approx((COLD_READY,)) and cost.warm_s == pytest.approx((WARM_READY,))
    assert cost.cache_bytes == 168_000
    assert cost.extra_s == pytest.approx(0.35)
    assert CostStore().get(cost_key(build, found, card)) == cost
    sentence = cost_sentence(build, found, card)
    assert sentence.startswith("measured here: a cold CUDA cache added 350 ms to time to ready (14.20 s cold vs "
                               "13.85 s warm; first call 1.10 s cold vs 800 ms warm; one pair of runs of "
                               "sample:mlp on GPU 0, ")
    assert sentence.endswith("; the cache held 0.2 MiB)")


def test_more_pairs_alternate_which_goes_first(h200):
    build, found = h200
    runs = GpuRuns()
    cost = measure(build, found, found.gpus[0], pairs=3, run=runs)
    assert runs.caches == ["warm", "cold", "warm", "warm", "cold", "cold", "warm"]
    assert cost.pairs == 3 and "medians of 3 pairs" in cost.sentence()


def test_a_failed_run_remembers_nothing(h200):
    build, found = h200
    with pytest.raises(MeasureError, match="the cold run on the GPU failed"):
        measure(build, found, found.gpus[0], run=GpuRuns(fail_at=2))
    assert CostStore().get(cost_key(build, found, found.gpus[0])) is None


def test_another_driver_or_interpreter_is_not_measured(h200, tmp_path):
    build, found = h200
    measure(build, found, found.gpus[0], run=GpuRuns())
    key = cost_key(build, found, found.gpus[0])
    store = CostStore()
    assert store.get(key) is not None
    assert store.get(key.__class__(key.card, key.python, key.tensorflow, key.cuda_build, "580.10")) is None
    assert store.get(key.__class__(key.card, "/other/python", key.tensorflow, key.cuda_build, key.driver)) is None


def test_a_damaged_file_is_reported_and_left_untouched(h200):
    build, found = h200
    store = CostStore()
    store.path.parent.mkdir(parents=True, exist_ok=True)
    store.path.write_text("{not json")
    assert "not measured yet" in cost_sentence(build, found, found.gpus[0], store)
    assert "could not be read" in str(store.problem) and "left as it is" in str(store.problem)
    with pytest.raises(OSError):
        measure(build, found, found.gpus[0], run=GpuRuns(), store=CostStore(store.path))
    assert store.path.read_text() == "{not json"
    # An entry of the right shape with damaged figures is refused, not trusted.
    store.path.write_text(json.dumps({"schema_version": 1, "costs": {
        cost_key(build, found, found.gpus[0]).id: {"key": {"card": "x", "python": "y"}, "cold_s": ["NaN"]}}}))
    fresh = CostStore(store.path)
    assert fresh.get(cost_key(build, found, found.gpus[0])) is None and "damaged" in str(fresh.problem)


def test_devices_says_the_measured_cost_once_measured(h200, capsys, monkeypatch):
    build, _found = h200
    monkeypatch.setattr(cuda_cache, "run_probe", GpuRuns())
    assert main(["devices", "--python", build.python, "--measure-cuda-cache"]) == 0
    captured = capsys.readouterr()
    assert "tflaunch: GPU 0: a cold CUDA cache added 350 ms to time to ready" in captured.err
    assert "         measured here: a cold CUDA cache added 350 ms to time to ready (14.20 s cold vs 13.85 s warm" \
        in captured.out
    assert main(["devices", "--python", build.python, "--json"]) == 0
    (interpreter,) = json.loads(capsys.readouterr().out)["interpreters"]
    measured = interpreter["gpus"][0]["cuda_cache_cost"]
    assert measured["cold_s"] == [pytest.approx(COLD_READY)] and measured["key"]["driver"] == "575.51"
    assert measured["extra_s"] == pytest.approx(0.35)


def test_measuring_without_a_gpu_says_why(capsys, monkeypatch):
    monkeypatch.setattr(gpus, "_load_nvml", lambda: None)
    assert main(["devices", "--measure-cuda-cache"]) == 1
    assert "no GPU to measure the CUDA cache on: nvidia-ml-py is not installed" in capsys.readouterr().err


def test_the_store_file_is_json_a_user_can_read(h200):
    build, found = h200
    measure(build, found, found.gpus[0], run=GpuRuns())
    data = json.loads(Path(CostStore().path).read_text())
    (entry,) = data["costs"].values()
    assert data["schema_version"] == 1 and entry["key"]["card"] == "NVIDIA H200 #0"


def test_the_doctor_says_the_verdict_once_with_the_measured_cost(h200):
    from tflaunch.core.doctor.experiment import Diagnosis, kernel_lines
    from tflaunch.core.doctor.remedies import examine
    from tflaunch.core.doctor.report import report_summary

    build, found = h200
    base = LaunchConfig(python=build.python, model="sample:mlp")
    (line,) = kernel_lines(base, found)  # GPU 1 (8.0) has native kernels: nothing to say
    assert line.startswith("GPU 0 (NVIDIA H200 #0): no native kernels for sm_90: kernels are JIT-compiled from PTX")
    assert "not measured yet: tflaunch devices --measure-cuda-cache measures it" in line and "minutes" not in line
    measure(build, found, found.gpus[0], run=GpuRuns())
    (line,) = kernel_lines(base, found)
    assert "measured here: a cold CUDA cache added 350 ms to time to ready" in line
    assert kernel_lines(base.replace(visible_gpus=(1,)), found) == [], "only the GPUs the run can see"
    d = Diagnosis(examine(base, RunRecord(base), has_gpu=True, only={"gpu"}), kernel_notes=[line])
    assert report_summary(d)[-1] == line
