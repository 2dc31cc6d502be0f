"""page_cache=cold: eviction without root, residency measured before and after, the reasons
pages stay (another process maps them, they are dirty, the file system is memory), a path
that disappears, and reads per phase in a real run."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tflaunch.core.phases import PHASES, label
from tflaunch.core.run.driver import run_sessions
from tflaunch.core.run.launch_check import launch_check
from tflaunch.core.run.session import ProbeSession
from tflaunch.core.run.storage import eviction, page_cache
from tflaunch.core.run.storage.mounts import mount_of, parse_mountinfo
from tflaunch.core.run.storage.page_holders import mapped_by_others, stay_reasons
from tflaunch.core.settings.config import LaunchConfig
from tflaunch.core.sweep.axes import apply_value

from .builders import save_sample, tflaunch

MIB = 1 << 20
pytestmark = pytest.mark.skipif(not page_cache.supported(), reason="page cache eviction is Linux only")


def _written(path: Path, size: int) -> Path:
    """A file of `size` bytes, on disk (synced) and read once, so all of it is cached."""
    with open(path, "wb") as f:
        f.write(os.urandom(size))
        f.flush()
        os.fsync(f.fileno())
    path.read_bytes()
    return path


def _evictable(folder: Path) -> bool:
    mount = mount_of(str(folder))
    return mount is None or not mount.in_memory


def test_residency_drops_after_eviction_and_preload_brings_it_back(tmp_path):
    if not _evictable(tmp_path):
        pytest.skip(f"{tmp_path} is on a memory file system")
    path = _written(tmp_path / "weights.bin", 8 * MIB)
    assert page_cache.residency(str(path)).resident == 8 * MIB
    page_cache.evict(str(path))
    assert page_cache.residency(str(path)).resident < MIB  # a page or two may be read back by others
    assert page_cache.preload(str(path)) == 8 * MIB
    assert page_cache.residency(str(path)) == page_cache.Residency(8 * MIB, 8 * MIB)


def test_pages_another_process_maps_stay_and_the_report_names_it(tmp_path):
    if not _evictable(tmp_path):
        pytest.skip(f"{tmp_path} is on a memory file system")
    path = _written(tmp_path / "mapped.bin", 4 * MIB)
    holder = subprocess.Popen([sys.executable, "-c", (
        "import mmap, sys, time\n"
        "f = open(sys.argv[1], 'rb'); m = mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ)\n"
        "sum(m[i] for i in range(0, len(m), 4096)); print('mapped', flush=True); time.sleep(60)"), str(path)],
        stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "mapped"
        page_cache.evict(str(path))
        kept = page_cache.residency(str(path)).resident
        assert kept == 4 * MIB  # the kernel keeps what a process maps
        assert [pid for pid, _ in mapped_by_others([str(path)])[str(path)]] == [holder.pid]
        reasons = stay_reasons({str(path): kept}, "model")
        assert len(reasons) == 1 and f"pid {holder.pid}" in reasons[0] and "map them" in reasons[0]
    finally:
        holder.kill()
        holder.wait()


def test_dirty_pages_are_said_and_never_synced(tmp_path):
    if not _evictable(tmp_path):
        pytest.skip(f"{tmp_path} is on a memory file system")
    path = tmp_path / "fresh.bin"
    path.write_bytes(os.urandom(4 * MIB))  # no fsync: tflaunch must not call one either
    page_cache.evict(str(path))
    kept = page_cache.residency(str(path)).resident
    if kept == 0:
        pytest.skip("the kernel wrote the file back before it was evicted")
    reasons = stay_reasons({str(path): kept}, "model")
    assert any("not on disk yet" in r and "never fsyncs" in r for r in reasons)


def test_memory_file_system_cannot_be_evicted_and_the_run_says_so():
    shm = Path("/dev/shm")
    mount = mount_of(str(shm))
    if not shm.is_dir() or mount is None or not mount.in_memory or not os.access(shm, os.W_OK):
        pytest.skip("no writable tmpfs at /dev/shm")
    path = shm / f"tflaunch-test-{os.getpid()}.keras"
    path.write_bytes(b"x" * MIB)
    try:
        report = eviction.PageCacheReport("cold")
        level = eviction.Level("model")
        eviction._evict(level, [str(path)], report)
        assert level.after == level.before == MIB  # left as it is: nothing to evict it to
        assert any("lives in memory" in n and "tmpfs" in n and "Move them to a disk" in n for n in report.notes)
    finally:
        path.unlink()


def test_mountinfo_says_network_and_memory_file_systems():
    text = ("36 25 0:32 / / rw,relatime - ext4 /dev/sda1 rw\n"
            "40 36 0:45 / /mnt/models rw,relatime - nfs4 server:/export rw,vers=4.2\n"
            "41 36 0:46 / /mnt/my\\040share ro,relatime - cifs //nas/share ro\n"
            "42 36 0:47 / /dev/shm rw - tmpfs tmpfs rw\n"
            "garbage line\n")
    mounts = parse_mountinfo(text)
    assert [m.fstype for m in mounts] == ["ext4", "nfs4", "cifs", "tmpfs"]
    assert mount_of("/mnt/models/resnet/saved_model.pb", text).network  # type: ignore[union-attr]
    share = mount_of("/mnt/my share/m.keras", text)
    assert share is not None and share.network and share.read_only
    assert mount_of("/dev/shm/x", text).in_memory  # type: ignore[union-attr]
    assert mount_of("/home/me/m.keras", text).fstype == "ext4"  # type: ignore[union-attr]
    assert not mount_of("/mnt/modelsX/a", text).network  # type: ignore[union-attr]  # a prefix is not a parent


def test_setting_flag_and_axis():
    assert LaunchConfig(page_cache="lukewarm").validate(check_model=False)[0].message == (
        "Page cache is one of warm, cold, preloaded, not 'lukewarm'.")
    assert not LaunchConfig(page_cache="cold").validate(check_model=False)
    assert apply_value(LaunchConfig(), "page_cache", "Cold", str).page_cache == "cold"
    with pytest.raises(ValueError, match="use one of warm, cold, preloaded"):
        apply_value(LaunchConfig(), "page_cache", "frozen", str)
    assert LaunchConfig.from_dict({"page_cache": "preloaded"}).page_cache == "preloaded"
    assert "page_cache=cold" in LaunchConfig(page_cache="cold").summary()
    bad = tflaunch("bench", "--model", "sample:mlp", "--page-cache", "icy", timeout=60)
    assert bad.returncode == 2 and "--page-cache" in bad.stderr and "'icy'" in bad.stderr


@pytest.fixture(scope="module")
def small_keras(tmp_path_factory) -> Path:
    path = save_sample("mlp", tmp_path_factory.mktemp("cold-model"), ["keras"])["keras"]
    os.sync()  # written just now: its pages are dirty until the kernel writes them
    return path


@pytest.mark.slow  # real child processes; make test keeps to its 6 minutes, CI runs this tier too
def test_cold_bench_evicts_reports_residency_and_reads_per_phase(small_keras):
    result = tflaunch("bench", "--model", str(small_keras), "--page-cache", "cold", "--steady", "1", "--json",
                      "--no-history", timeout=180)
    assert result.returncode == 0, result.stderr
    run = json.loads(result.stdout)["runs"][0]
    cache = run["page_cache"]
    model = cache["model"]
    assert cache["state"] == "cold" and model["files"] == 1 and model["bytes"] == small_keras.stat().st_size
    assert model["resident_after"] == 0
    assert cache["tensorflow"]["files"] > 1000 and cache["tensorflow"]["resident_after"] < cache["tensorflow"]["bytes"]
    assert any(n.startswith("Page cache cold: evicted before the start: model ") for n in run["notes"])
    phases = run["phases"]
    assert all(isinstance(phases[p]["read_bytes"], int) for p in ("spawn", "import", "load", "first"))
    assert phases["load"]["read_bytes"] > 0  # the model file came from storage
    assert phases["import"]["rchar"] >= phases["import"]["read_bytes"] or phases["import"]["rchar"] > 0


@pytest.mark.slow  # real child processes; make test keeps to its 6 minutes, CI runs this tier too
def test_a_model_that_disappears_after_the_check_is_measured_and_said(tmp_path, small_keras):
    model = tmp_path / "going.keras"
    model.write_bytes(small_keras.read_bytes())
    config = LaunchConfig(model=str(model), page_cache="cold", steady=1, timeout=120)
    assert not launch_check(config, known=None)
    model.unlink()  # between the check and the start
    record = run_sessions([ProbeSession(config)])[0]
    assert record.page_cache.level(eviction.MODEL).vanished == 1
    assert any("disappeared while tflaunch evicted them" in n for n in record.notes)
    assert record.failure is not None and "does not exist" in record.failure.message
    assert record.failed_phase == "load"
    assert record.phases["import"].read_bytes is not None  # measured up to where it failed


@pytest.mark.slow  # real child processes; make test keeps to its 6 minutes, CI runs this tier too
def test_sessions_started_together_evict_once(small_keras, monkeypatch):
    calls = []
    real = eviction.prepare
    monkeypatch.setattr("tflaunch.core.run.session.prepare_page_cache",
                        lambda config: calls.append(time.monotonic()) or real(config))
    config = LaunchConfig(model=str(small_keras), page_cache="cold", steady=0, timeout=120)
    records = run_sessions([ProbeSession(config), ProbeSession(config)])
    assert len(calls) == 1
    assert records[0].page_cache == records[1].page_cache and records[0].page_cache.level(eviction.MODEL).files == 1


# -- the cures, as the doctor's remedies ------------------------------------------------
def test_storage_remedies_need_a_cold_baseline_and_say_why_they_do_not_apply(tmp_path):
    from tflaunch.core.doctor.remedies import examine
    from tflaunch.core.run.record import RunRecord

    model = tmp_path / "m.keras"
    model.write_bytes(b"PK")
    warm = LaunchConfig(model=str(model))
    exam = examine(warm, RunRecord(warm), has_gpu=False, only={"preload", "local_copy"})
    assert not exam.arms and all("--page-cache cold" in exam.skipped[r] for r in ("preload", "local_copy"))
    cold = warm.replace(page_cache="cold")
    exam = examine(cold, RunRecord(cold), has_gpu=False, only={"preload", "local_copy"})
    [arm] = exam.arms
    assert arm.key == "page_cache=preloaded" and arm.config.page_cache == "preloaded" and not arm.launchable
    assert f"vmtouch -t {model}" in arm.how
    mount = mount_of(str(model))
    if mount is not None and not mount.network:
        assert exam.skipped["local_copy"].startswith(f"the model is on a local disk ({mount.fstype} at ")
    sample = LaunchConfig(model="sample:mlp", page_cache="cold")
    assert "built from code" in examine(sample, RunRecord(sample), False, only={"preload"}).skipped["preload"]
    program = LaunchConfig(program=("python", "train.py"), page_cache="cold")
    assert "vmtouch" in examine(program, RunRecord(program), False, only={"preload"}).skipped["preload"]


def test_a_local_copy_is_made_once_whole_and_again_when_the_model_changes(tmp_path):
    from tflaunch.core.run.storage.local_copy import local_copy

    source = tmp_path / "net" / "saved"
    (source / "variables").mkdir(parents=True)
    (source / "saved_model.pb").write_bytes(b"graph")
    (source / "variables" / "variables.data-00000-of-00001").write_bytes(b"w" * 1000)
    copy = Path(local_copy(str(source), tmp_path / "local"))
    assert copy.name == "saved" and (copy / "variables" / "variables.data-00000-of-00001").read_bytes() == b"w" * 1000
    assert local_copy(str(source), tmp_path / "local") == str(copy)  # unchanged: not copied again
    (source / "saved_model.pb").write_bytes(b"graph, longer")
    assert local_copy(str(source), tmp_path / "local") != str(copy)
    assert not list((tmp_path / "local").glob("*.partial"))


# -- a model large enough to matter -----------------------------------------------------
@pytest.fixture(scope="session")
def big_keras(tmp_path_factory) -> Path:
    """A .keras model with 256 MiB of weights (4 × Dense(4096)), saved and synced once."""
    out = tmp_path_factory.mktemp("big-cold") / "big.keras"
    if not _evictable(out.parent):
        pytest.skip(f"{out.parent} is on a memory file system: nothing there can be evicted")
    code = ("import sys, keras\nx = i = keras.Input((4096,))\n"
            "for _ in range(4): x = keras.layers.Dense(4096)(x)\n"
            "keras.Model(i, keras.layers.Dense(10)(x)).save(sys.argv[1])")
    subprocess.run([sys.executable, "-c", code, str(out)], check=True, capture_output=True, timeout=300)
    os.sync()
    return out


@pytest.mark.slow
def test_a_cold_start_reads_the_model_from_storage_and_a_warm_one_after_it_is_faster(big_keras):
    def bench(state: str) -> dict:
        result = tflaunch("bench", "--model", str(big_keras), "--page-cache", state, "--steady", "1", "--json",
                          "--no-history", timeout=300)
        assert result.returncode == 0, result.stderr
        return json.loads(result.stdout)["runs"][0]

    size = big_keras.stat().st_size
    cold, warm = bench("cold"), bench("warm")
    model = cold["page_cache"]["model"]
    assert model["bytes"] == size and model["resident_before"] > 0 and model["resident_after"] == 0
    assert cold["phases"]["load"]["read_bytes"] >= 0.9 * size  # the weights came from storage
    assert warm["phases"]["load"]["read_bytes"] < 0.05 * size  # ... and then from the page cache
    assert warm["page_cache"] is None
    assert warm["phases"]["load"]["duration"] < cold["phases"]["load"]["duration"]
    preloaded = bench("preloaded")
    assert preloaded["page_cache"]["preloaded"] == size
    # The preload spared the load the model's reads. What else it reads is TensorFlow's own
    # code (60 MB here), evicted too unless another process maps it (the other test worker's
    # children may, or not, from one run to the next): so a bound well under the model's size.
    assert preloaded["phases"]["load"]["read_bytes"] < 0.5 * size
    assert preloaded["page_cache"]["preload_seconds"] > 0  # the read happened, before time zero
    assert any(n.startswith("Reading the model back in took") and "not in this run's figures" in n
               for n in preloaded["notes"]), preloaded["notes"]


@pytest.mark.slow
def test_a_sweep_over_the_page_cache_shows_reads_per_phase(big_keras):
    result = tflaunch("sweep", "--model", str(big_keras), "--vary", "page_cache=warm,cold", "--repeat", "2",
                      "--warmup", "0", "--steady", "1", timeout=600)
    assert result.returncode == 0, result.stderr
    assert "Read from storage per phase" in result.stdout
    table = result.stdout.split("Read from storage per phase")[1].splitlines()
    header = table[1].split()
    # Each phase that read from storage, in the phases' order. Load always (the cold start
    # evicted the model); Import and Devices only where no other process keeps TensorFlow's
    # libraries mapped, which the other test worker's children do in CI: an evicted page still
    # mapped elsewhere stays in memory.
    assert header[0] == "Setting" and label("load") in table[1], header
    at = [table[1].index(label(phase)) for phase in PHASES if label(phase) in table[1]]
    assert at == sorted(at), table[1]

    def mib_read(row: str) -> list[float]:
        return [float(size) for size in re.findall(r"([\d.]+) MiB read", row)]

    size = big_keras.stat().st_size / MIB
    cold = next(line for line in table if line.startswith("page_cache=cold"))
    warm = next(line for line in table if line.startswith("page_cache=warm"))
    assert max(mib_read(cold)) >= 0.9 * size and "MiB/s" in cold  # the weights, from storage
    assert all(read < 0.05 * size for read in mib_read(warm))  # a warm start reads next to nothing


def test_the_instances_table_shows_each_copys_time_to_ready_and_read_rate():
    from tflaunch.core.phases import PHASES
    from tflaunch.core.run import events as ev
    from tflaunch.core.run.reads import reads_text
    from tflaunch.core.run.record import RunRecord
    from tflaunch.core.sweep.instances import instances_table, summarize, trial_figures

    def copy(load_s: float, read: int) -> RunRecord:
        record = RunRecord(LaunchConfig(model="m.keras"), launched_at=100.0)
        t = 100.0
        for name in PHASES:
            seconds = load_s if name == "load" else 0.1
            record.apply(ev.PhaseStart(t, name))
            t += seconds
            record.apply(ev.PhaseEnd(t, name, seconds, 1, 1, read_bytes=read if name == "load" else 0, rchar=read))
        record.finish(0)
        return record

    figures = trial_figures([copy(1.0, 200 * MIB), copy(2.0, 200 * MIB)])
    row = summarize("page_cache=cold", 2, [figures])
    assert row.each[1][1] == pytest.approx(100 * MIB)
    text = instances_table([row])
    assert "#1 " in text and "200.0 MiB/s; #2 " in text and "100.0 MiB/s" in text and "evicted once" in text
    assert reads_text(0, 1.0) == "0 B (page cache)" and reads_text(412 * MIB, 2.0) == "412.0 MiB read, 206.0 MiB/s"
    assert reads_text(12 * 1024, 1.0) == "12 KiB read"
