"""The GPU start-up lab without a GPU: settings reach the child's environment exactly,
caches are cold or warm and emptied when the stack changes, the devices phase is split
into parts, and a card without native kernels is named before and after a run.

Fakes stand at the hardware boundary only: a fake `tf` device list for the probe's
devices phase, a fake NVML inventory, Stack objects for the machine's stack. One real
child run reads every GPU setting back on this CPU machine."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from types import SimpleNamespace

import pytest

from tflaunch.core.phases import ONE_TIME, PART_LABELS
from tflaunch.core.probe.nvtx import Ranges
from tflaunch.core.probe.tf_setup import initialise_devices, read_back
from tflaunch.core.report.table import run_table
from tflaunch.core.run import events as ev
from tflaunch.core.run.driver import run_probe
from tflaunch.core.run.environment_facts import EnvironmentFacts
from tflaunch.core.run.gpus.gpu_notes import gpu_notes, launch_facts, warnings_before_run
from tflaunch.core.run.gpus.nvml import Gpu, GpuInventory
from tflaunch.core.run.model_facts import ModelFacts
from tflaunch.core.run.read_back import ReadBack
from tflaunch.core.run.record import RunRecord
from tflaunch.core.run.warm.warm_facts import WarmStart
from tflaunch.core.settings import caches
from tflaunch.core.settings.child import child_environment
from tflaunch.core.settings.config import LaunchConfig
from tflaunch.core.store.history import History
from tflaunch.core.sweep.plan import SweepPlan

PIP_CAPABILITIES = ["sm_60", "sm_70", "sm_80", "sm_89", "compute_90"]  # pip TensorFlow's CUDA 12 wheels
STACK = caches.Stack("/venv/bin/python", "2.21.0", "570.86", ("NVIDIA H100 80GB HBM3",))


def env_of(stack: caches.Stack | None = STACK, base: dict[str, str] | None = None, **settings) -> dict[str, str]:
    return child_environment(LaunchConfig(**settings), base or {}, stack=stack)


# -- each setting has one meaning: the variable it sets ------------------------------------
def test_allocator_sets_or_removes_tf_gpu_allocator():
    assert env_of(allocator="cuda_malloc_async")["TF_GPU_ALLOCATOR"] == "cuda_malloc_async"
    # bfc is TensorFlow's own allocator: a variable inherited from the shell must not survive
    assert "TF_GPU_ALLOCATOR" not in env_of(allocator="bfc", base={"TF_GPU_ALLOCATOR": "cuda_malloc_async"})
    assert env_of(base={"TF_GPU_ALLOCATOR": "cuda_malloc_async"})["TF_GPU_ALLOCATOR"] == "cuda_malloc_async"


def test_autotune_and_module_loading_variables():
    assert env_of(cudnn_autotune=False)["TF_CUDNN_USE_AUTOTUNE"] == "0"
    assert env_of(cudnn_autotune=True)["TF_CUDNN_USE_AUTOTUNE"] == "1"
    assert env_of(module_loading="eager")["CUDA_MODULE_LOADING"] == "EAGER"
    assert env_of(module_loading="lazy")["CUDA_MODULE_LOADING"] == "LAZY"
    assert not {"TF_CUDNN_USE_AUTOTUNE", "CUDA_MODULE_LOADING"} & set(env_of())


def test_cold_and_warm_cuda_cache_folders_are_sized_explicitly():
    cold, warm = env_of(cuda_cache="cold"), env_of(cuda_cache="warm")
    assert cold["CUDA_CACHE_PATH"] != warm["CUDA_CACHE_PATH"]
    assert f"-{os.getpid()}" in cold["CUDA_CACHE_PATH"]
    assert warm["CUDA_CACHE_PATH"] == str(caches.pack_folder(STACK) / "cuda")
    assert cold["CUDA_CACHE_MAXSIZE"] == warm["CUDA_CACHE_MAXSIZE"] == str(4 * 1024 ** 3)
    assert env_of(base={"CUDA_CACHE_DISABLE": "1"}, cuda_cache="warm")["CUDA_CACHE_DISABLE"] == "0"
    with pytest.raises(ValueError):  # a warm folder is named by its stack: none, no folder
        env_of(stack=None, cuda_cache="warm")


def test_xla_cache_joins_the_users_and_auto_jit_flags():
    flags = env_of(xla_cache=True, xla_auto=True, base={"TF_XLA_FLAGS": "--tf_xla_min_cluster_size=4"})
    parts = flags["TF_XLA_FLAGS"].split()
    assert parts[0] == "--tf_xla_min_cluster_size=4"
    assert "--tf_xla_auto_jit=2" in parts
    assert f"{caches.XLA_CACHE_FLAG}={caches.warm_folder('xla', STACK)}" in parts


def test_a_managed_variable_cannot_be_set_twice_through_extra_env():
    problems = LaunchConfig(extra_env={"TF_GPU_ALLOCATOR": "cuda_malloc_async"}).validate(check_model=False)
    assert any("allocator setting" in p.message for p in problems)
    problems = LaunchConfig(allocator="fast", cuda_cache="hot").validate(check_model=False)
    assert {p.field for p in problems} >= {"allocator", "cuda_cache"}


# -- caches: cold is empty, warm is kept, a changed stack fills a pack of its own ------------
def test_cold_cache_is_empty_at_every_start():
    folder = caches.cold_folder("cuda")
    caches.prepare("cold", False, None)
    (folder / "kernel.bin").write_bytes(b"x" * 100)
    caches.prepare("cold", False, None)
    assert folder.is_dir() and not any(folder.iterdir())


def test_warm_cache_is_kept_and_a_new_driver_never_reads_the_old_pack():
    assert caches.prepare("warm", True, STACK) == []
    kept = caches.warm_folder("cuda", STACK)
    (kept / "kernel.bin").write_bytes(b"x" * 100)
    assert caches.prepare("warm", True, STACK) == []
    assert (kept / "kernel.bin").exists() and caches.size_of(caches.pack_folder(STACK)) > 100
    new_driver = caches.Stack(STACK.python, STACK.tensorflow, "575.51", STACK.gpus)
    notes = caches.prepare("warm", True, new_driver)
    # never used for the new key, said once, kept (on a shared folder it may be another node type's)
    assert kept.exists() and caches.pack_folder(new_driver) != caches.pack_folder(STACK)
    assert len(notes) == 1 and "NVIDIA driver 570.86 → 575.51" in notes[0] and "cache prune" in notes[0]
    assert caches.prepare("warm", True, new_driver) == []
    key = json.loads((caches.pack_folder(new_driver) / caches.STAMP).read_text())["key"]
    assert key["driver"] == "575.51"
    other_python = caches.Stack("/other/python", "2.20.0", "575.51", STACK.gpus)
    assert caches.prepare("warm", False, other_python) == []  # another interpreter's pack is not ours to judge
    assert caches.warm_folder("cuda", new_driver).exists()


def test_a_gpu_model_or_tensorflow_change_is_named():
    changed = caches.Stack(STACK.python, "2.22.0", STACK.driver, ("NVIDIA A100-SXM4-80GB",))
    words = changed.changes_from(STACK.to_dict())
    assert words == ["TensorFlow 2.21.0 → 2.22.0", "GPUs NVIDIA H100 80GB HBM3 → NVIDIA A100-SXM4-80GB"]


# -- the devices phase in parts, against a fake device list ---------------------------------
class FakeConfig:
    def __init__(self, gpus: int) -> None:
        self.gpus = [SimpleNamespace(name=f"/physical_device:GPU:{i}", device_type="GPU") for i in range(gpus)]
        self.calls: list[str] = []
        self.growth: dict[str, bool] = {}
        self.limits: dict[str, list] = {}
        self.threading = SimpleNamespace(set_intra_op_parallelism_threads=lambda n: self.calls.append(f"intra={n}"),
                                         set_inter_op_parallelism_threads=lambda n: None,
                                         get_intra_op_parallelism_threads=lambda: 2,
                                         get_inter_op_parallelism_threads=lambda: 0)
        self.experimental = SimpleNamespace(set_memory_growth=self._set_growth,
                                            get_memory_growth=lambda g: self.growth.get(g.name, False))
        self.optimizer = SimpleNamespace(get_experimental_options=lambda: {})  # Grappler as TensorFlow's default

    def _set_growth(self, gpu, on):
        self.calls.append(f"growth {gpu.name}")
        self.growth[gpu.name] = on

    def list_physical_devices(self, kind=None):
        self.calls.append("physical")
        return list(self.gpus)

    def list_logical_devices(self, kind=None):
        self.calls.append("logical")
        return [SimpleNamespace(name=g.name.replace("physical_device:", "device:")) for g in self.gpus]

    def set_logical_device_configuration(self, gpu, configs):
        self.limits[gpu.name] = configs

    def get_logical_device_configuration(self, gpu):
        return self.limits.get(gpu.name)

    LogicalDeviceConfiguration = staticmethod(lambda memory_limit: SimpleNamespace(memory_limit=memory_limit))


def test_devices_phase_is_split_where_there_are_gpus():
    tf = SimpleNamespace(config=FakeConfig(gpus=2))
    applied, parts = initialise_devices(tf, {"memory_growth": True, "intra": 2})
    assert list(parts) == ["discovery", "settings", "contexts"] and all(v >= 0 for v in parts.values())
    calls = tf.config.calls
    # discovery first, the settings before any context exists, then the contexts
    assert calls[0] == "physical" and calls.index("intra=2") < calls.index("logical")
    assert calls.index("growth /physical_device:GPU:1") < calls.index("logical")
    assert applied["memory_growth"] == {"/physical_device:GPU:0": True, "/physical_device:GPU:1": True}
    assert set(PART_LABELS) == set(parts)


def test_no_parts_without_a_gpu():
    _, parts = initialise_devices(SimpleNamespace(config=FakeConfig(gpus=0)), {})
    assert parts == {}


def test_read_back_names_every_gpu_variable(monkeypatch):
    monkeypatch.setenv("TF_GPU_ALLOCATOR", "cuda_malloc_async")
    monkeypatch.setenv("CUDA_MODULE_LOADING", "EAGER")
    monkeypatch.delenv("TF_CUDNN_USE_AUTOTUNE", raising=False)
    applied = read_back(SimpleNamespace(config=FakeConfig(gpus=1)), {})
    assert applied["allocator"] == "cuda_malloc_async" and applied["module_loading"] == "EAGER"
    assert applied["cudnn_autotune"] == "default"


# -- parts through the protocol, the record, the table and the history -----------------------
def phase_end(**fields) -> str:
    return ev.encode("phase_end", "devices", 1.0, duration=2.5, rss=1, peak_rss=2, **fields)


def test_parts_are_validated_where_they_enter():
    parser = ev.EventParser()
    event = parser.parse(phase_end(parts={"discovery": 0.5, "contexts": 1.9}))
    assert event.parts == {"discovery": 0.5, "contexts": 1.9}
    for bad in ("fast", {"discovery": "slow"}, {"discovery": -1}, {f"p{i}": 0.1 for i in range(40)}):
        assert parser.parse(phase_end(parts=bad)) is None
    assert parser.malformed == 4
    assert parser.parse(ev.encode("phase_end", "devices", 1.0, duration=2.5, rss=1, peak_rss=2,
                                  parts={"discovery": float("nan")}).replace("NaN", "1e999")) is None


def gpu_record() -> RunRecord:
    record = RunRecord(LaunchConfig(model="sample:mlp"))
    record.launch_gpus = launch_facts(GpuInventory(
        (Gpu(0, "NVIDIA H100 80GB HBM3", 80 << 30, compute_capability=(9, 0), persistence_mode=False),),
        "570.86", None, "12.8"))
    for name in ("import", "devices", "load", "trace", "first", "steady"):
        record.apply(ev.PhaseEnd(record.launched_at + 1, name, 0.2 if name != "first" else 1.5, 1, 2,
                                 {"median": 0.01, "n": 20} if name == "steady" else {},
                                 {"discovery": 0.6, "settings": 0.001, "contexts": 1.4} if name == "devices" else {}))
    record.apply(ev.Result(record.launched_at + 2, "steady", EnvironmentFacts({
        "tensorflow": "2.21.0", "cuda_build": True, "capabilities": PIP_CAPABILITIES,
        "gpus": [{"name": "/physical_device:GPU:0", "model": "NVIDIA H100 80GB HBM3", "compute_capability": [9, 0],
                  "allocator_peak": 1 << 30}]}), ModelFacts()))
    return record


def test_a_jit_card_is_not_said_on_every_run_but_an_unusable_card_is():
    """The JIT verdict is said where it matters, with its measured cost (devices, doctor):
    a run's notes say only what changes its figures (the driver reloading, a card not used)."""
    record = gpu_record()
    assert not any("JIT" in note or "minutes" in note for note in record.notes), record.notes
    assert "persistence mode is off on GPU 0".lower() in record.notes[0].lower()
    assert record.environment.nvml is not None and record.environment.nvml["driver"] == "570.86"
    table = run_table(record)
    assert "driver and device discovery" in table and "contexts and allocators" in table
    record.settings = ReadBack({"gpus": ["/physical_device:GPU:0", "/physical_device:GPU:1"]})
    assert "contexts and allocators (2 GPUs, one call)" in run_table(record)
    assert f"{ONE_TIME}" in table and "1.49 s" in table  # 1.5 s first call, 10 ms a steady one
    assert "JIT" not in table and "minutes" not in table
    assert record.to_dict()["phases"]["devices"]["parts"]["contexts"] == 1.4


def test_native_cards_get_no_note():
    env = EnvironmentFacts({"capabilities": PIP_CAPABILITIES, "cuda_build": True, "gpus": [
        {"name": "/physical_device:GPU:0", "model": "A100", "compute_capability": [8, 0]}]})
    assert gpu_notes(env) == []


def test_parts_and_gpu_facts_survive_the_history(tmp_path):
    history = History(tmp_path / "h.sqlite3")
    record = gpu_record()
    record.finish(0)
    run_id = history.record(record, "test")
    loaded = history.load(run_id)
    assert loaded.phases["devices"].parts == {"discovery": 0.6, "settings": 0.001, "contexts": 1.4}
    assert loaded.notes == record.notes
    history._db.execute("UPDATE phases SET parts='not json' WHERE run_id=?", (run_id,))
    assert history.load(run_id).phases["devices"].parts == {}  # damaged parts lose the parts, not the run



def test_nvml_at_launch_is_typed_stored_as_it_was_made_and_an_old_row_reads_back(tmp_path):
    """The record reads NVML's view at launch as typed facts; the environment and the history keep
    the description launch_facts made, byte for byte, and a row whose GPUs hold junk (another
    program wrote it) or a child's junk "nvml" reads as no figure instead of failing the run."""
    import sqlite3

    from tflaunch.core.run.gpus.launch_gpus import LaunchGpu
    from tflaunch.core.run.words import environment_line

    record = gpu_program_record(reported=False)
    assert (record.launch_gpus.driver, record.launch_gpus.cuda_driver, record.launch_gpus.persistence_off) == \
        ("570.86", "12.8", ())
    assert record.launch_gpus.gpus == (LaunchGpu(0, "NVIDIA H100 80GB HBM3", None, (9, 0), 80 << 30, True),)
    made = ('{"driver": "570.86", "cuda_driver": "12.8", "gpus": [{"index": 0, "name": "NVIDIA H100 80GB HBM3", '
            '"uuid": null, "compute_capability": [9, 0], "memory_total": 85899345920, "persistence_mode": true}], '
            '"persistence_off": []}')
    assert json.dumps(record.environment.nvml) == json.dumps(record.to_dict()["environment"]["nvml"]) == made
    record.finish(0)
    history = History(tmp_path / "h.sqlite3")
    run_id = history.record(record, "cli")
    with sqlite3.connect(tmp_path / "h.sqlite3") as db:
        stored = db.execute("SELECT environment FROM runs WHERE id=?", (run_id,)).fetchone()[0]
    assert json.dumps(json.loads(stored)["nvml"]) == made
    loaded = History(tmp_path / "h.sqlite3").load(run_id)
    assert loaded.launch_gpus == record.launch_gpus
    assert "NVIDIA H100 80GB HBM3 (memory held, per NVML)" in environment_line(loaded) == environment_line(record)
    junk = ('{"tensorflow": "2.21.0", "nvml": {"driver": "570.86", "gpus": [{"index": [0], "name": 7, '
            '"compute_capability": "9.0"}], "persistence_off": [], "later": {"a": 1}}}')
    with sqlite3.connect(tmp_path / "h.sqlite3") as db:
        db.execute("UPDATE runs SET environment=? WHERE id=?", (junk, run_id))
    old = History(tmp_path / "h.sqlite3").load(run_id)
    assert old.launch_gpus is not None and old.launch_gpus.gpus == (LaunchGpu(),) and old.launch_gpus.driver == "570.86"
    assert "GPU 0 (memory held, per NVML)" in environment_line(old) and not gpu_notes(old.environment)
    assert json.dumps(old.to_dict()["environment"]) == junk
    child = RunRecord(LaunchConfig(program=("python", "train.py")))  # NVML saw no GPU; the child said "nvml"
    child.apply(ev.Result(child.launched_at + 1, "first_step",
                          EnvironmentFacts({"nvml": {"persistence_off": 3, "gpus": [{"index": [1]}]}}), ModelFacts()))
    child.add_sample(child.launched_at + 0.5, 1 << 20, {1: 1 << 20})
    assert child.launch_gpus is None and "GPU 1 (memory held, per NVML)" in environment_line(child)
    assert not any("Persistence" in note for note in child.notes)

def test_a_warning_before_the_run_only_for_a_visible_card_the_build_cannot_use():
    gpus = GpuInventory((Gpu(0, "NVIDIA H100", 80 << 30, compute_capability=(9, 0)),
                         Gpu(1, "NVIDIA A100", 80 << 30, compute_capability=(8, 0)),
                         Gpu(2, "Tesla M60", 8 << 30, compute_capability=(5, 2))), "570.86", None)
    assert warnings_before_run(gpus, PIP_CAPABILITIES, True, (0, 1)) == [], "JIT is no warning on every launch"
    (warning,) = warnings_before_run(gpus, PIP_CAPABILITIES, True, None)
    assert warning.startswith("GPU 2 (Tesla M60): no kernels for sm_52")


# -- sweeps vary the GPU settings ------------------------------------------------------------
def test_gpu_axes_make_distinct_candidates():
    plan = SweepPlan(LaunchConfig(model="sample:mlp"), {"allocator": ["bfc", "cuda_malloc_async"],
                                                         "cuda_cache": ["cold", "warm"], "xla_cache": ["off", "on"],
                                                         "cudnn_autotune": ["on", "off"],
                                                         "module_loading": ["lazy", "eager"],
                                                         "memory_limit": ["none", "2048"]})
    configs = [c.config for c in plan.candidates()]
    assert len(configs) == 1 + 2 ** 6
    assert {c.allocator for c in configs} == {None, "bfc", "cuda_malloc_async"}
    assert {c.memory_limit_mb for c in configs} == {None, 2048}


def test_cli_help_names_each_variable():
    out = subprocess.run([sys.executable, "-m", "tflaunch.core.cli.main", "bench", "--help"], capture_output=True,
                         text=True, env={**os.environ, "COLUMNS": "200"}).stdout
    for flag, variable in (("--allocator", "TF_GPU_ALLOCATOR"), ("--cudnn-autotune", "TF_CUDNN_USE_AUTOTUNE"),
                           ("--module-loading", "CUDA_MODULE_LOADING"), ("--cuda-cache", "CUDA_CACHE_PATH"),
                           ("--xla-cache", "tf_xla_persistent_cache_directory"), ("--nvtx", "Nsight")):
        assert flag in out and variable in out
    sweep = subprocess.run([sys.executable, "-m", "tflaunch.core.cli.main", "sweep", "--help"], capture_output=True,
                           text=True, env={**os.environ, "COLUMNS": "200"}).stdout
    for axis in ("allocator", "cuda_cache", "xla_cache", "cudnn_autotune", "module_loading", "memory_limit"):
        assert axis in sweep


def test_nvtx_off_loads_nothing_and_a_missing_library_is_said():
    assert Ranges(False).status == "off"
    ranges = Ranges(True)
    if ranges.status.startswith("on"):
        pytest.skip(f"this machine has an NVTX library: {ranges.status}")
    assert "nvidia-nvtx-cu12" in ranges.status
    ranges.push("import")  # without the library, ranges are no-ops, never errors
    ranges.pop()


# -- one real child: every GPU setting read back where TensorFlow runs ------------------------
@pytest.mark.slow  # real child processes; make test keeps to its 6 minutes, CI runs this tier too
def test_every_gpu_setting_is_read_back_in_the_child_and_the_xla_cache_fills():
    config = LaunchConfig(model="sample:mlp", steady=3, timeout=180, allocator="cuda_malloc_async",
                          cudnn_autotune=False, module_loading="eager", cuda_cache="cold", xla_cache=True,
                          jit_compile=True, nvtx=True)
    record = run_probe(config)
    assert record.status.value == "ok", record.failure
    applied = record.settings.described
    assert applied["allocator"] == "cuda_malloc_async"
    assert applied["cudnn_autotune"] == "0" and applied["module_loading"] == "EAGER"
    assert applied["cuda_cache"].startswith(str(caches.cold_folder("cuda").parent))
    assert applied["cuda_cache_maxsize"] == str(caches.CUDA_CACHE_BYTES)
    assert caches.XLA_CACHE_FLAG in applied["xla_flags"]
    assert applied["nvtx"] == "off" or applied["nvtx"].startswith(("on", "unavailable"))
    folder = applied["xla_flags"].split(f"{caches.XLA_CACHE_FLAG}=")[1].split()[0]
    # XLA wrote the compiled model into the kept folder: a later run reads it back
    assert [f for f in os.listdir(folder) if f.startswith("xla_compile_cache")]


def test_a_profile_carries_the_cache_folders_it_was_measured_with():
    from tflaunch.core.run.record import RunStatus
    from tflaunch.core.store.profiles import evidence_from_runs

    record = gpu_record()
    record.config = record.config.replace(cuda_cache="warm", xla_cache=True)
    record.settings = ReadBack({"cuda_cache": "/c/cuda/abc",
                                "xla_flags": "--tf_xla_persistent_cache_directory=/c/xla/abc"})
    record.status = RunStatus.OK  # the record's phases are enough for evidence; no child ran
    cached = evidence_from_runs([record])["caches"]
    assert cached["cuda_cache"] == "warm: /c/cuda/abc" and cached["xla_cache"] == "/c/xla/abc"
    assert cached["driver"] == "570.86" and cached["gpus"] == ["NVIDIA H100 80GB HBM3"]


NVTX_STAND_IN = r"""
#include <stdio.h>
#include <stdlib.h>
static void note(const char *what) {
    FILE *f = fopen(getenv("NVTX_LOG"), "a");
    if (f) { fputs(what, f); fputc('\n', f); fclose(f); }
}
int nvtxRangePushA(const char *message) { note(message); return 0; }
int nvtxRangePop(void) { note("pop"); return 0; }
"""


def test_nvtx_ranges_reach_the_library_once_per_phase(tmp_path):
    """A stand-in libnvToolsExt (the same two C functions) where the nvidia-nvtx wheel puts
    it: the probe finds it on its path and brackets every timed phase."""
    compiler = next((c for c in ("cc", "gcc", "clang") if subprocess.run(["which", c], capture_output=True)
                     .returncode == 0), None)
    if compiler is None:
        pytest.skip("no C compiler to build the NVTX stand-in library")
    lib = tmp_path / "site" / "nvidia" / "nvtx" / "lib"
    lib.mkdir(parents=True)
    (tmp_path / "nvtx.c").write_text(NVTX_STAND_IN)
    subprocess.run([compiler, "-shared", "-fPIC", "-o", str(lib / "libnvToolsExt.so.1"), str(tmp_path / "nvtx.c")],
                   check=True)
    log = tmp_path / "ranges.txt"
    record = run_probe(LaunchConfig(model="sample:mlp", steady=3, timeout=120, nvtx=True,
                                    extra_env={"PYTHONPATH": str(tmp_path / "site"), "NVTX_LOG": str(log)}))
    assert record.status.value == "ok", record.failure
    nvtx = record.settings.described["nvtx"]
    assert nvtx.startswith("on (") and "libnvToolsExt.so.1" in nvtx
    lines = log.read_text().split()
    assert [x for x in lines if x != "pop"] == [f"tflaunch:{p}" for p in
                                                ("import", "devices", "load", "trace", "first", "steady")]
    assert lines.count("pop") == 6 and lines[1] == "pop"  # each range closed before the next opens


# -- a program on a GPU reads as a model does ---------------------------------------------------
def gpu_program_record(reported: bool = True) -> RunRecord:
    """A program run as the observer and NVML give it on an H100: GPU 0's samples, and (when
    it reached its first step) the GPUs TensorFlow used with the allocator's peak."""
    record = RunRecord(LaunchConfig(program=("python", "train.py"), visible_gpus=(0,)))
    record.launch_gpus = launch_facts(GpuInventory(
        (Gpu(0, "NVIDIA H100 80GB HBM3", 80 << 30, compute_capability=(9, 0), persistence_mode=True),),
        "570.86", None, "12.8"))
    for name, seconds in (("import", 9.0), ("devices", 0.5), ("build", 1.1), ("first_step", 4.5)):
        record.apply(ev.PhaseEnd(record.launched_at + 16, name, seconds, 1, 2, {}, {}))
    environment = {"tensorflow": "2.21.0", "python": "3.11.9"}
    if reported:
        environment.update(cuda_build=True, capabilities=PIP_CAPABILITIES, gpus=[
            {"name": "/physical_device:GPU:0", "model": "NVIDIA H100 80GB HBM3", "compute_capability": [9, 0],
             "allocator_peak": 9_600_000}])
    record.apply(ev.Result(record.launched_at + 16, "first_step", EnvironmentFacts(environment), ModelFacts()))
    record.add_sample(record.launched_at + 12, 1 << 30, {0: 631 << 20})
    record.add_sample(record.launched_at + 15, 1 << 30, {0: 500 << 20})
    return record


def test_a_program_on_a_gpu_shows_its_gpus_and_gpu_memory_in_its_summary():
    """The JSON had the GPU curve while the text said "no GPU": the summary says what a model's does."""
    record = gpu_program_record()
    table = run_table(record)
    assert "Peak GPU memory (process tree): GPU 0: 631.0 MiB (TensorFlow allocator peak 9.2 MiB)" in table, table
    assert record.environment_line.endswith("NVIDIA H100 80GB HBM3") and "no GPU" not in table
    data = record.to_dict()
    assert data["gpu_peaks"] == {"0": 631 << 20} and data["allocator_peaks"] == {"0": 9_600_000}


def test_a_program_that_did_not_describe_its_gpus_names_those_nvml_saw_it_hold():
    record = gpu_program_record(reported=False)
    assert record.environment_line.endswith("NVIDIA H100 80GB HBM3 (memory held, per NVML)")
    assert "Peak GPU memory (process tree): GPU 0: 631.0 MiB" in run_table(record)
    record.gpu_samples.clear()
    assert record.environment_line.endswith("no GPU")


def test_a_repeat_table_says_which_warm_run_started_the_server():
    from tflaunch.core.report.table import repeat_table

    first, second = gpu_program_record(), gpu_program_record()
    for record in (first, second):
        record.warm_start = WarmStart()
        record.marks.append(("warm_start", 0.5))
        record.finish(0)
    first.warm_start = WarmStart(server_started=True, server_import_s=9.5)
    table = repeat_table([first, second])
    assert "run 1: No warm server was running for this interpreter, so this launch started one and waited for " \
           "its import of TensorFlow (9.50 s)" in table
    assert "run 2:" not in table and "note: No warm server" not in table, table
