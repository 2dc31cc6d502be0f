"""Many instances on one card: instance counts as a sweep axis, the per-count summary, and
`tflaunch sweep --instances 1,2` end to end with fake children and a fake NVML."""

from __future__ import annotations

import json
from types import SimpleNamespace

import psutil
import pytest

from tflaunch.core.cli import sweep as cli_sweep
from tflaunch.core.cli.main import main
from tflaunch.core.paths import history_path
from tflaunch.core.report.review import sweep_review
from tflaunch.core.run.gpus.nvml import GpuMemorySampler
from tflaunch.core.run.record import Failure, RunStatus
from tflaunch.core.settings.config import LaunchConfig
from tflaunch.core.store.history import History
from tflaunch.core.sweep.instances import (
    DOES_NOT_FIT,
    FAILED,
    FITS,
    InstanceCountError,
    instances_table,
    out_of_memory,
    parse_counts,
    summarize,
    trial_figures,
)
from tflaunch.core.sweep.plan import PlanError, Sweep, SweepPlan
from tflaunch.core.units import MIB

from .builders import fake_python, finished_record
from .fake_child import CHILD_ENV
from .faults.children import fake_python as scripted_python

GIB = 1024 * MIB


def test_counts_are_parsed_and_refused_with_what_to_type():
    assert parse_counts("1, 2,4,2") == [1, 2, 4]
    for bad in ("0", "two", "1,,2", "65"):
        with pytest.raises(InstanceCountError, match="such as 1,2,4"):
            parse_counts(bad)


def test_instances_is_an_axis_whose_first_count_is_the_baseline():
    plan = SweepPlan(LaunchConfig(model="sample:mlp"), {"instances": ["1", "2", "4"], "allocator": ["bfc"]})
    keys = [(c.key, c.instances) for c in plan.candidates()]
    assert keys == [("baseline", 1), ("instances=1 allocator=bfc", 1), ("instances=2 allocator=bfc", 2),
                    ("instances=4 allocator=bfc", 4)]
    alone = SweepPlan(LaunchConfig(model="sample:mlp"), {"instances": ["1", "2"]}).candidates()
    assert [(c.key, c.instances, c.baseline) for c in alone] == [("instances=1 (baseline)", 1, True),
                                                                ("instances=2", 2, False)]
    with pytest.raises(PlanError, match="Instances: 'x' is not a count"):
        SweepPlan(LaunchConfig(model="sample:mlp"), {"instances": ["x"]}).candidates()


def oom(record):
    record.status = RunStatus.FAILED
    record.failure = Failure("exception", "Failed in Load: RESOURCE_EXHAUSTED: OOM when allocating tensor")
    return record


def test_the_summary_takes_the_slowest_instance_and_adds_up_gpu_memory():
    fast, slow = finished_record(ready_s=1.0), finished_record(ready_s=2.0)
    fast.gpu_samples, slow.gpu_samples = [(0.5, {0: GIB})], [(0.5, {0: 3 * GIB}), (0.9, {0: 2 * GIB, 1: MIB})]
    trials = [trial_figures([fast, slow], warmup=True), trial_figures([fast, slow]), trial_figures([slow, slow])]
    row = summarize("instances=2", 2, trials)
    assert row.trials == 2 and row.ready == pytest.approx(2.02), "median of the slowest, warm-ups left out"
    assert row.gpu_per_process == {0: 3 * GIB, 1: MIB} and row.gpu_total == {0: 6 * GIB, 1: 2 * MIB}
    assert row.fit == FITS and row.rss_per_process == 400
    table = instances_table([row])
    assert "GPU 0 3.00 GiB, GPU 1 1.0 MiB" in table and "GPU 0 6.00 GiB, GPU 1 2.0 MiB" in table


def test_an_instance_out_of_memory_means_the_count_does_not_fit():
    assert out_of_memory(oom(finished_record()))
    failed = finished_record()
    failed.status, failed.failure = RunStatus.FAILED, Failure("crash", "The probe process exited with code 1.")
    assert not out_of_memory(failed) and not out_of_memory(finished_record())
    assert not out_of_memory(finished_record()), "a successful run's log mentioning OOM is not a failure"
    assert summarize("n=2", 2, [trial_figures([finished_record(), oom(finished_record())])]).fit == DOES_NOT_FIT
    other = summarize("n=2", 2, [trial_figures([finished_record(), failed])])
    assert other.fit == FAILED and other.failure and "exited with code 1" in other.failure
    assert summarize("n=8", 8, []).fit == "–"


class FakeNvml:
    """One GPU on which every child of this test process holds 1 GiB."""

    class NVMLError(Exception):
        pass

    def nvmlInit(self):  # noqa: N802 (NVML's names)
        pass

    def nvmlShutdown(self):  # noqa: N802 (NVML's names)
        pass

    def nvmlDeviceGetCount(self):  # noqa: N802 (NVML's names)
        return 1

    def nvmlDeviceGetHandleByIndex(self, i):  # noqa: N802 (NVML's names)
        return i

    def nvmlDeviceGetComputeRunningProcesses(self, handle):  # noqa: N802 (NVML's names)
        return [SimpleNamespace(pid=p.pid, usedGpuMemory=GIB) for p in psutil.Process().children(recursive=True)]


# Alone it succeeds; with a sibling (another instance of the same trial) it runs out of
# memory in load, as a second TensorFlow process does on a card the first one reserved.
CROWDED_OOM = """
import psutil
hello()
time.sleep(0.4)  # every instance of the trial has started by now, and has been sampled
me = os.path.abspath(sys.argv[0])
def command_line(process):
    try:
        return " ".join(process.cmdline())
    except psutil.Error:  # another child of the test's process ended meanwhile: not a sibling
        return ""
siblings = [p for p in psutil.Process().parent().children() if me in command_line(p)]
if len(siblings) > 1:
    for name in ("import", "devices", "load"):
        start(name)
        if name != "load":
            end(name)
    emit("error", "load", kind="exception", message="RESOURCE_EXHAUSTED: OOM when allocating tensor", detail="")
    sys.exit(1)
succeed()
"""


@pytest.fixture
def fake_nvml(monkeypatch):
    monkeypatch.setattr(cli_sweep, "GpuMemorySampler", lambda: GpuMemorySampler(FakeNvml()))


def test_cli_instances_table_says_which_count_does_not_fit(tmp_path, capsys, fake_nvml):
    python = scripted_python(tmp_path, CROWDED_OOM)
    code = main(["sweep", "--model", "sample:mlp", "--python", python, "--instances", "1,2", "--repeat", "1",
                 "--warmup", "0", "--steady", "1"])
    out = capsys.readouterr().out
    assert code == 0, out
    table = out[out.index("Ready (slowest, median)"):]
    lines = {line.split()[0]: line for line in table.splitlines() if line.startswith("instances=")}
    assert lines["instances=1"].endswith(" yes") and "1.00 GiB (GPU 0)" in lines["instances=1"]
    assert lines["instances=2"].endswith("no: out of memory")
    assert lines["instances=2"].count("GiB (GPU 0)") == 2 and "2.00 GiB (GPU 0)" in lines["instances=2"], \
        "per process and the total of both on the card"
    why = next((line for line in table.splitlines() if line.startswith("instances=2: 2 at once")), table)
    assert "did not fit" in why and "RESOURCE_EXHAUSTED" in why, table
    history = History(history_path())
    assert len(history.list_runs()) == 1 + 2 + 2, "a failed trial runs again until it fails twice"
    assert all(history.load(r.id).gpu_peaks == {0: GIB} for r in history.list_runs()), "GPU samples stored"


def test_cli_instances_json_and_help(tmp_path, capsys, fake_nvml):
    code = main(["sweep", "--model", "sample:mlp", "--python", fake_python(tmp_path), "--env", f"{CHILD_ENV}=ok",
                 "--instances", "1,2", "--repeat", "1", "--warmup", "0", "--steady", "1", "--json"])
    out = capsys.readouterr().out
    assert code == 0, out
    rows = {r["instances"]: r for r in json.loads(out)["instances"]}
    assert rows[1]["fit"] == rows[2]["fit"] == "yes" and rows[2]["trials"] == 1
    assert rows[2]["ready_slowest_median"] > 0 and rows[1]["rss_per_process_bytes"] > 0
    assert main(["sweep", "--model", "sample:mlp", "--instances", "1,x"]) == 2
    assert "such as 1,2,4" in capsys.readouterr().err
    assert main(["sweep", "--model", "sample:mlp"]) == 2
    assert "--instances 1,2,4" in capsys.readouterr().err, "nothing to vary: say both ways"
    with pytest.raises(SystemExit):
        main(["sweep", "--help"])
    assert "cuda_malloc_async" in capsys.readouterr().out.replace("\n", " ")


def test_a_sweep_review_carries_the_per_count_table():
    plan = SweepPlan(LaunchConfig(model="sample:mlp"), {"instances": ["1", "2"]}, repeat=1, warmup=0)
    sweep = Sweep(plan, plan.candidates())
    for candidate in sweep.candidates:
        records = [finished_record() for _ in range(candidate.instances)]
        for record in records:
            record.gpu_samples = [(0.5, {0: 3 * GIB})]
        sweep.figures[candidate.key] = [trial_figures(records)]
    review = sweep_review(sweep, None)
    header, rows = review.instances
    assert header[-1] == "Fit" and rows[1][:2] == ["instances=2", "2"] and rows[1][4] == "6.00 GiB (GPU 0)"
    assert "| instances=2 | 2 |" in review.markdown()
    single = SweepPlan(LaunchConfig(model="sample:mlp"), {"intra": ["1"]})
    assert sweep_review(Sweep(single, single.candidates()), None).instances is None, \
        "no per-count table for a sweep of one instance"


def test_bench_samples_gpu_memory_like_the_app(tmp_path, capsys, monkeypatch):
    from tflaunch.core.cli import bench as cli_bench

    monkeypatch.setattr(cli_bench, "GpuMemorySampler", lambda: GpuMemorySampler(FakeNvml()))
    code = main(["bench", "--model", "sample:mlp", "--python", fake_python(tmp_path), "--env", f"{CHILD_ENV}=ok",
                 "--json"])
    assert code == 0
    run = json.loads(capsys.readouterr().out)["runs"][0]
    assert run["gpu_peaks"] == {"0": GIB}
    stored = History(history_path()).load(History(history_path()).list_runs()[0].id)
    assert stored.gpu_peaks == {0: GIB}
