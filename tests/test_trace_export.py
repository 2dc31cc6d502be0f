"""Runs as a Chrome trace (Perfetto): written through the exporter table, loaded back by a
strict loader (tests/trace_checker.py) that enforces per-thread nesting, and checked
against the record: every phase's slice lasts the record's duration to the microsecond."""

from __future__ import annotations

import json
import sqlite3

import pytest

from tflaunch.core.cli.main import main
from tflaunch.core.paths import history_path
from tflaunch.core.report import exports
from tflaunch.core.report.trace_export import microseconds, trace_json
from tflaunch.core.run import events as ev
from tflaunch.core.run.anatomy import checked_anatomy
from tflaunch.core.run.environment_facts import EnvironmentFacts
from tflaunch.core.run.model_facts import ModelFacts
from tflaunch.core.run.record import RunRecord
from tflaunch.core.settings.config import LaunchConfig
from tflaunch.core.store.history import History

from .builders import finished_record, tflaunch
from .trace_checker import TraceError, check_nesting, load

T0 = 1_000.0


def program_record(data_ends_after_step: bool = True) -> RunRecord:
    """A program's run whose phases overlap as real ones do: devices and compile inside
    build, data inside first_step (ending 4 µs after it when asked), devices in parts, a
    profiled first step, a mark, retraces, RSS and GPU samples."""
    record = RunRecord(LaunchConfig(program=("python", "train.py"), until="first_step", steady=5),
                       launched_at=T0)
    record.apply(ev.Hello(T0 + 0.05, "spawn", 7, 0.05, "python"))
    record.apply(ev.PhaseEnd(T0 + 0.05, "spawn", 0.05, 10, 10))

    def span(name: str, start: float, duration: float, **more) -> None:
        record.apply(ev.PhaseStart(T0 + start, name))
        record.apply(ev.PhaseEnd(T0 + start + duration, name, duration, 100, 200, start=T0 + start, **more))

    span("import", 0.05, 1.4412345)
    span("build", 1.5, 0.6)
    span("devices", 1.55, 0.2, parts={"discovery": 0.11, "settings": 0.02, "contexts": 0.0612})
    span("compile", 1.8, 0.25)
    data_end = 0.7000043 if data_ends_after_step else 0.3
    span("data", 2.3, data_end)
    span("first_step", 2.2, 0.8)
    record.apply(ev.Mark(T0 + 3.01, "first_step", "warmup_done"))
    span("steady", 3.1, 1.0, latency={"n": 10, "median": 0.1})
    record.apply(ev.PhaseEnd(T0 + 4.2, "retraces", 0.3, None, None, count=2))
    record.apply(ev.AnatomyMeasured(T0 + 3.0, "first_step", checked_anatomy({
        "window": 0.81, "phase": "first_step", "not_attributed": 0.31,
        "parts": [{"part": "tracing", "seconds": 0.3, "names": [{"name": "tf_function_trace", "seconds": 0.3}]},
                  {"part": "execution", "seconds": 0.2, "names": []}],
        "unattributed_names": []})))
    record.apply(ev.Result(T0 + 4.2, "steady", EnvironmentFacts({"tensorflow": "2.21.0", "python": "3.12.3"}),
                           ModelFacts()))
    for i in range(5):
        record.add_sample(T0 + 0.5 + i, 100_000_000 + i, {0: 5_000_000 * i})
    record.finish(0)
    return record


def written(tmp_path, runs, name="runs.trace.json"):
    path = tmp_path / name
    path.write_bytes(exports.encoded(trace_json(runs), path))
    return path


@pytest.mark.parametrize("data_ends_after_step", [True, False])
def test_a_programs_overlapping_phases_nest_per_thread_and_last_what_the_record_says(tmp_path,
                                                                                       data_ends_after_step):
    record = program_record(data_ends_after_step)
    trace = load(written(tmp_path, [(12, record)]))
    phases = trace.phase_slices(1)
    offsets = record.offsets()
    drawn = {name for name in offsets if name != "retraces"}
    assert set(phases) == drawn
    for name in drawn:
        start, duration = offsets[name]
        assert phases[name]["dur"] == microseconds(duration)
        assert abs(phases[name]["dur"] / 1e6 - duration) <= 5e-7 + 1e-12  # to the microsecond
        assert phases[name]["ts"] == microseconds(start)
    if data_ends_after_step:  # 4 µs past the step's end: it cannot share the step's thread
        assert phases["data"]["tid"] != phases["first_step"]["tid"]
    assert phases["compile"]["tid"] == phases["build"]["tid"] == phases["devices"]["tid"] == 1
    assert trace.processes[1] == "Run 12: python train.py"
    assert "2.21.0" in trace.labels[1] and "3.12.3" in trace.labels[1]


def test_retraces_are_a_count_in_the_args_never_a_bar(tmp_path):
    trace = load(written(tmp_path, [(12, program_record())]))
    names = [s["name"] for s in trace.process_slices(1)]
    assert not any("Retrace" in name for name in names)
    root = next(s for s in trace.process_slices(1) if s["cat"] == "run")
    assert root["args"]["retraces"] == {"count": 2, "seconds": 0.3}
    assert root["args"]["settings"]["until"] == "first_step"


@pytest.mark.parametrize("data_ends_after_step", [True, False])
def test_parts_sit_inside_their_phase_and_add_up_to_it_at_most(tmp_path, data_ends_after_step):
    record = program_record(data_ends_after_step)
    trace = load(written(tmp_path, [(12, record)]))
    slices = trace.process_slices(1)
    step = trace.phase_slices(1)["first_step"]
    anatomy = [s for s in slices if s["cat"] == "anatomy" and "part" in s["args"]]
    assert [s["args"]["part"] for s in anatomy] == ["tracing", "execution", "not_attributed"]
    # Inside the step: on its own thread when nothing else nests there, else under a copy of it.
    holders = [s for s in slices if s["cat"] == "anatomy" and "parts_of" in s["args"]]
    outer = step if not holders else holders[0]
    assert bool(holders) == (not data_ends_after_step)  # data inside the step shares its thread
    assert all(outer["tid"] == s["tid"] and outer["ts"] <= s["ts"] and s["ts"] + s["dur"] <= outer["ts"] + outer["dur"]
               for s in anatomy)
    assert sum(s["dur"] for s in anatomy) <= step["dur"]  # the profiled window (0.81 s) shrunk into 0.8 s
    devices = trace.phase_slices(1)["devices"]
    parts = [s for s in trace.children(1, devices) if s["cat"] == "part"]
    assert [s["args"]["part"] for s in parts] == ["discovery", "settings", "contexts"]
    assert [s["dur"] for s in parts] == [110_000, 20_000, 61_200]


def test_marks_and_ready_are_instants_memory_is_counters_in_bytes(tmp_path):
    record = program_record()
    trace = load(written(tmp_path, [(12, record)]))
    instants = {i["name"]: i["ts"] for i in trace.instants[1]}
    assert instants["warmup_done"] == 3_010_000
    assert instants["ready"] == microseconds(record.time_to_ready)
    assert trace.counters[1]["memory: process tree RSS bytes"][0] == (500_000, 100_000_000)
    assert [v for _, v in trace.counters[1]["memory: GPU 0 bytes"]] == [0, 5_000_000, 10_000_000, 15_000_000,
                                                                           20_000_000]


def test_several_runs_are_processes_side_by_side_gzipped_when_the_name_says(tmp_path):
    runs = [(1, finished_record()), (2, program_record()), (None, finished_record(model="sample:cnn"))]
    path = written(tmp_path, runs, "compare.trace.json.gz")
    assert path.read_bytes()[:2] == b"\x1f\x8b"
    trace = load(path)
    assert trace.processes == {1: "Run 1: sample:mlp", 2: "Run 2: python train.py", 3: "Run: sample:cnn"}
    model = trace.phase_slices(1)
    assert list(model) == ["spawn", "import", "devices", "load", "trace", "first", "steady"]
    assert {s["tid"] for s in model.values()} == {1}, "a model's phases follow each other: one thread"


def test_the_checker_refuses_what_a_viewer_would(tmp_path):
    with pytest.raises(TraceError, match="overlaps"):
        check_nesting([{"name": "a", "ts": 0, "dur": 10}, {"name": "b", "ts": 5, "dur": 10}], "t")
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({"traceEvents": [], "metadata": {}}))
    with pytest.raises(TraceError, match="metadata"):
        load(path)
    path.write_text(json.dumps({"traceEvents": [{"ph": "X", "pid": 1, "tid": 1, "name": "a", "ts": 0.5, "dur": 1}]}))
    with pytest.raises(TraceError, match="microseconds"):
        load(path)


def test_history_export_writes_a_trace_from_the_name_or_format(capsys, tmp_path):
    history = History(history_path())
    ids = [history.record(finished_record(), "cli"), history.record(program_record(), "cli")]
    history.close()
    target = tmp_path / "both.trace.json.gz"
    assert main(["history", "export", *map(str, ids), "-o", str(target)]) == 0
    assert "as TRACE to" in capsys.readouterr().err
    trace = load(target)
    assert sorted(trace.processes.values()) == [f"Run {ids[0]}: sample:mlp", f"Run {ids[1]}: python train.py"]
    stored = History(history_path()).load(ids[1])
    offsets = stored.offsets()
    pid = next(pid for pid, name in trace.processes.items() if name.endswith("train.py"))
    assert set(trace.phase_slices(pid)) == set(offsets) - {"retraces"}
    for name, piece in trace.phase_slices(pid).items():
        assert piece["dur"] == microseconds(offsets[name][1])
    plain = tmp_path / "plain.json"
    assert main(["history", "export", str(ids[0]), "--format", "trace", "-o", str(plain)]) == 0
    assert load(plain).processes == {1: f"Run {ids[0]}: sample:mlp"}


def test_every_format_list_is_made_from_the_one_table():
    assert exports.names(exports.RUNS) == ("json", "csv", "trace")
    assert exports.names(exports.REVIEW) == ("png", "svg", "md", "csv")
    assert exports.guess(exports.RUNS, "x/runs.trace.json.gz").name == "trace"
    assert exports.guess(exports.RUNS, "runs.JSON").name == "json"
    assert exports.guess(exports.REVIEW, "review-v1.2") is None
    with pytest.raises(ValueError, match="use png, svg, md or csv"):
        exports.find(exports.REVIEW, "pdf")


MARKED = """
import time
from tflaunch_mark import mark
with mark("restore"):
    time.sleep(0.2)
mark("warmup_done")
print("a line of the program's own")
"""


def test_bench_trace_of_a_real_run_loads_back_and_matches_its_stored_record(tmp_path):
    script = tmp_path / "marked.py"
    script.write_text(MARKED)
    target = tmp_path / "bench.trace.json"
    done = tflaunch("bench", "--until", "exit", "--trace", str(target), "--", "python", str(script), timeout=120)
    assert done.returncode == 0, done.stderr
    assert f"written to {target}" in done.stderr
    trace = load(target)
    (run_id,) = [int(name.split(":")[0].split()[1]) for name in trace.processes.values()]
    record = History(history_path()).load(run_id)
    phases = trace.phase_slices(1)
    assert set(phases) == set(record.offsets()) and "restore" in phases
    for name, (start, duration) in record.offsets().items():
        moved = phases[name]["args"].get("start_moved_us", 0)  # a rounding step, said (see below)
        assert (phases[name]["ts"] - moved, phases[name]["dur"]) == (microseconds(start), microseconds(duration))
    assert "warmup_done" in {i["name"] for i in trace.instants[1]}
    assert trace.counters[1]["memory: process tree RSS bytes"], "sampled while it ran"


@pytest.mark.slow
def test_bench_trace_of_a_model_with_its_anatomy_run(tmp_path):
    target = tmp_path / "mlp.trace.json.gz"
    done = tflaunch("bench", "--model", "sample:mlp", "--anatomy", "--trace", str(target), timeout=600)
    assert done.returncode == 0, done.stderr
    trace = load(target)
    assert len(trace.processes) == 2, "the measured run and the profiled one"
    assert list(trace.phase_slices(1)) == ["spawn", "import", "devices", "load", "trace", "first", "steady"]
    anatomy = [s for s in trace.process_slices(2) if s["cat"] == "anatomy"]
    first = trace.phase_slices(2)["first"]
    assert anatomy and all(first["ts"] <= s["ts"] and s["ts"] + s["dur"] <= first["ts"] + first["dur"]
                           for s in anatomy)


def test_a_start_that_rounds_a_microsecond_into_the_last_phase_moves_not_to_another_thread(tmp_path):
    """As read from a real fit_tfdata.py run: the first step's end and steady's start, by
    two clocks, rounded to overlap by 1 µs; steady went to a second thread before."""
    record = program_record(data_ends_after_step=False)
    step = record.phases["first_step"]
    step.duration += 6e-7  # ends at 3.0000006 s: 3000001 µs
    record.phases["steady"].started = step.started + step.duration - 2e-7  # 3.0000004 s: 3000000 µs
    trace = load(written(tmp_path, [(12, record)]))
    phases = trace.phase_slices(1)
    assert phases["steady"]["tid"] == phases["first_step"]["tid"] == 1
    start, duration = record.offsets()["steady"]
    assert phases["steady"]["dur"] == microseconds(duration)
    assert phases["steady"]["ts"] - microseconds(start) == phases["steady"]["args"]["start_moved_us"] == 1


def test_a_run_that_cannot_be_read_is_left_out_of_the_trace_and_said(capsys, tmp_path):
    history = History(history_path())
    good, bad = history.record(finished_record(), "cli"), history.record(finished_record(model="x"), "cli")
    history.close()
    with sqlite3.connect(history_path()) as db:
        db.execute("UPDATE runs SET peak_rss = 99999999999999999999999 WHERE id = ?", (bad,))
    target = tmp_path / "runs.trace.json"
    assert main(["history", "export", str(good), str(bad), "-o", str(target)]) == 0
    assert f"tflaunch: run {bad} cannot be read and is left out of the trace (" in capsys.readouterr().err
    assert load(target).processes == {1: f"Run {good}: sample:mlp"}


def test_a_trace_of_runs_made_on_a_cluster_is_refused_with_what_to_do_instead():
    done = tflaunch("bench", "--model", "sample:mlp", "--on", "slurm", "--trace", "x.trace.json", timeout=60)
    assert done.returncode == 2
    assert "with --on slurm, merge the sweep, then `tflaunch history export ID... -o runs.trace.json`" in done.stderr
