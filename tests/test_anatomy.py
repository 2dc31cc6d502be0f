"""The anatomy's rules, on small XPlanes built here with the xplane_pb2 that TensorFlow ships
(loaded by path: it needs protobuf only, so this worker never imports TensorFlow), and its
event checked as every child's figure is."""

from __future__ import annotations

import importlib.util
import json
import math
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from tflaunch.core.probe import anatomy
from tflaunch.core.run import events as ev
from tflaunch.core.run.anatomy import anatomy_rows, attributed_share, checked_anatomy, source_line


def _xplane_pb2() -> Any:
    spec = importlib.util.find_spec("tensorflow")
    assert spec is not None and spec.submodule_search_locations
    path = Path(next(iter(spec.submodule_search_locations))) / "tsl" / "profiler" / "protobuf" / "xplane_pb2.py"
    module_spec = importlib.util.spec_from_file_location("tflaunch_test_xplane_pb2", path)
    assert module_spec is not None and module_spec.loader is not None
    module = importlib.util.module_from_spec(module_spec)
    module_spec.loader.exec_module(module)
    return module


xplane_pb2 = _xplane_pb2()
START_NS = 1_700_000_000_000_000_000  # the profile's start, ns since the epoch
MAIN, OTHER = 11, 22  # thread (line) ids


def space(main: list[tuple[str, float, float]], other: list[tuple[str, float, float]] = (),
          stats: dict[str, str] | None = None, line_offset_ns: int = 1000, base: bool = True) -> Any:
    """An XSpace whose main thread has `main` events (name, start ms, duration ms, relative to
    the profile's start), the marker at the end, and another thread with `other`."""
    xs = xplane_pb2.XSpace()
    host = xs.planes.add(id=0, name="/host:CPU")
    ids: dict[str, int] = {}

    def meta(name: str) -> int:
        if name not in ids:
            ids[name] = len(ids) + 1
            host.event_metadata[ids[name]].id = ids[name]
            host.event_metadata[ids[name]].name = name
        return ids[name]

    host.stat_metadata[1].id = 1
    host.stat_metadata[1].name = "tf_function_call"
    for line_id, name, evs in ((MAIN, "python", [*main, (anatomy.MARKER, 9999, 0)]), (OTHER, "tf_Compute", other)):
        line = host.lines.add(id=line_id, name=name, timestamp_ns=line_offset_ns)
        for ev_name, at_ms, dur_ms in evs:
            e = line.events.add(metadata_id=meta(ev_name), offset_ps=int((at_ms * 1e6 - line_offset_ns) * 1000),
                                duration_ps=int(dur_ms * 1e9))
            if stats and ev_name in stats:
                e.stats.add(metadata_id=1, int64_value=7)
    if base:
        env = xs.planes.add(id=1, name="Task Environment")
        env.stat_metadata[1].id = 1
        env.stat_metadata[1].name = "profile_start_time"
        env.stats.add(metadata_id=1, uint64_value=START_NS)
    return xs


def at(ms: float) -> float:
    return (START_NS + ms * 1e6) / 1e9


def parts(result: dict[str, Any]) -> dict[str, float]:
    return {p["part"]: round(p["seconds"] * 1000, 3) for p in result["parts"]}


def test_exclusive_time_goes_to_the_innermost_event_and_gaps_are_not_attributed() -> None:
    xs = space([
        ("train_step", 10, 900),                       # a tf.function's call: its own time is dispatch
        ("tf.function-graph_building", 20, 500),       # tracing
        ("convert_to_tensor", 30, 40),                 # a wrapper: tracing's
        ("TFE_Py_FastPathExecute_C", 100, 50),         # a wrapper around ...
        ("EagerLocalExecute: VarHandleOp", 100, 50),   # ... a variable made while tracing
        ("EagerLocalExecute: __inference_train_step_9", 600, 300),  # instantiation, around ...
        ("EagerKernelExecute", 800, 100),              # ... the execution
    ], [("StatefulPartitionedCall/MatMul:MatMul", 800, 100)], stats={"train_step": "1"})
    result = anatomy.attribute(xs, at(0), at(1000))
    assert result["window"] == pytest.approx(1.0)
    assert parts(result) == {"tracing": 100 + 450, "variables": 50, "instantiation": 200, "execution": 100}
    # 0-10 ms and 910-1000 ms: nothing on the thread; the other thread's kernel counts nowhere.
    assert result["not_attributed"] == pytest.approx(0.1)
    assert sum(p["seconds"] for p in result["parts"]) + result["not_attributed"] == pytest.approx(result["window"])


def test_the_window_clips_events_that_began_before_it_or_end_after_it() -> None:
    xs = space([("tf.function-graph_building", 0, 600), ("EagerKernelExecute", 700, 600)])
    result = anatomy.attribute(xs, at(500), at(1000))
    assert parts(result) == {"tracing": 100, "execution": 300}
    assert result["not_attributed"] == pytest.approx(0.1)


def test_a_data_or_variable_kernel_is_its_own_part_not_execution() -> None:
    xs = space([("EagerLocalExecute: MakeIterator", 0, 100), ("EagerKernelExecute", 10, 90),
                ("EagerLocalExecute: __inference_initialize_variables_3", 100, 100), ("EagerKernelExecute", 150, 50),
                ("EagerLocalExecute: IteratorGetNextSync", 200, 20)])
    result = anatomy.attribute(xs, at(0), at(220))
    assert parts(result) == {"data": 120, "variables": 100}


def test_an_unknown_event_is_not_attributed_and_named() -> None:
    xs = space([("SomethingNew", 0, 60), ("EagerKernelExecute", 60, 40)])
    result = anatomy.attribute(xs, at(0), at(100))
    assert parts(result) == {"execution": 40}
    assert result["not_attributed"] == pytest.approx(0.06)
    assert result["unattributed_names"][0]["name"] == "SomethingNew"


@pytest.mark.parametrize(("name", "part"), [
    ("__xla_compile_cluster:_XlaCompile", "xla"), ("XlaCompilationCache::Compile", "xla"),
    ("cublasCreate_v2", "gpu_handles"), ("cudnnCreate", "gpu_handles"), ("cuDevicePrimaryCtxRetain", "gpu_handles"),
    ("cudnnFindConvolutionForwardAlgorithmEx", "gpu_autotune"), ("GpuConvAlgorithmPicker", "gpu_autotune"),
    ("cuModuleLoadDataEx", "gpu_modules"), ("cuLibraryLoadData", "gpu_modules"),
    ("cuMemAlloc_v2", "gpu_allocator"), ("BFCAllocator::Extend", "gpu_allocator"),
    ("cuMemcpyHtoDAsync_v2", "gpu_copies"), ("Grappler::remapper", "instantiation"),
    ("EagerLocalExecute: __inference_f_12", "instantiation"), ("tf.function-graph_building", "tracing"),
    ("EagerLocalExecute: AnonymousIteratorV3", "data"), ("Iterator::Root::Prefetch", "data"),
    ("EagerLocalExecute: AssignVariableOp", "variables"), ("EagerLocalExecute: MatMul", "execution"),
    ("model/dense/MatMul:_MklMatMul", "execution"), ("KernelAndDeviceFunc::Run", "execution"),
    ("convert_to_tensor", None), ("EagerExecute", None), ("my_function", "?"),
])
def test_rules_name_the_part(name: str, part: str | None) -> None:
    assert anatomy.part_of(name, {}) == part


def test_a_wrapper_at_the_top_of_the_thread_is_eager_dispatch() -> None:
    xs = space([("TFE_Py_FastPathExecute_C", 0, 50)])
    assert parts(anatomy.attribute(xs, at(0), at(50))) == {"execution": 50}


def test_times_map_through_the_line_timestamp_and_the_profile_start() -> None:
    """Events are offsets (ps) from their line's timestamp_ns, itself from the profile's start."""
    for offset in (0, 1000, 5_000_000):
        xs = space([("EagerKernelExecute", 100, 50)], line_offset_ns=offset)
        assert parts(anatomy.attribute(xs, at(100), at(150))) == {"execution": 50}


def test_no_time_base_or_no_marker_is_an_error_not_a_guess() -> None:
    assert "time base" in anatomy.attribute(space([("EagerKernelExecute", 0, 5)], base=False), at(0), at(5))["error"]
    xs = space([])
    del xs.planes[0].lines[0].events[:]
    assert "thread" in anatomy.attribute(xs, at(0), at(5))["error"]


def test_the_event_is_checked_and_its_rows_add_up() -> None:
    result = anatomy.attribute(space([("tf.function-graph_building", 0, 80)]), at(0), at(100))
    line = ev.encode("anatomy", "first_step", 1.7e9, **result)
    event = ev.EventParser().parse(json.dumps(json.loads(line)))
    assert isinstance(event, ev.AnatomyMeasured)
    assert event.anatomy.phase == "first_step"
    rows = anatomy_rows(event.anatomy)
    assert [r[0] for r in rows] == ["tracing (graph building, autograph)", "not attributed"]
    assert math.fsum(r[1] for r in rows) == pytest.approx(0.1)
    assert attributed_share(event.anatomy) == pytest.approx(0.8)
    assert "80% attributed" in source_line(event.anatomy.of_run(4), 0.05)


@pytest.mark.parametrize("bad", [
    {"window": float("nan"), "parts": [], "not_attributed": 0},
    {"window": 1.0, "parts": [{"part": "tracing", "seconds": 2.0}], "not_attributed": 0},
    {"window": 1.0, "parts": [{"part": "Bad Name", "seconds": 0.1}], "not_attributed": 0},
    {"window": 1.0, "parts": [{"part": "x", "seconds": 0.1}] * 30, "not_attributed": 0},
    {"window": 1.0, "parts": [], "not_attributed": -1},
    {"window": 1.0},
])
def test_a_malformed_anatomy_is_refused(bad: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        checked_anatomy(bad)
    parser = ev.EventParser()
    assert parser.parse(ev.encode("anatomy", "first_step", 1.7e9, **bad)) is None
    assert parser.malformed == 1


def test_an_anatomy_that_failed_keeps_its_reason() -> None:
    kept = checked_anatomy({"window": 0.5, "error": "the profiler wrote no trace"})
    assert anatomy_rows(kept) == []
    assert "no parts: the profiler wrote no trace" in source_line(replace(kept, phase="first"))


def test_the_csv_export_has_the_anatomy_runs_parts_and_empty_cells_elsewhere() -> None:
    import csv
    import io

    from tests.builders import record_through
    from tflaunch.core.report.run_export import ExportedRun, to_csv
    from tflaunch.core.store.rows import RunSummary

    profiled = record_through(["import", "devices", "load", "trace", "first"])
    parts = [{"part": "tracing", "seconds": 0.6}, {"part": "execution", "seconds": 0.3}]
    profiled.anatomy = checked_anatomy({"phase": "first", "window": 1.0, "not_attributed": 0.1, "parts": parts})
    plain = record_through(["import", "devices", "load", "trace", "first"])
    rows = list(csv.DictReader(io.StringIO(to_csv([
        ExportedRun(RunSummary(1, 100.0, "cli", "sample:mlp", "ok", None, 1.0, 400, ""), profiled),
        ExportedRun(RunSummary(2, 200.0, "cli", "sample:mlp", "ok", None, 1.0, 400, ""), plain)]))))
    assert rows[0]["anatomy_phase"] == "first" and float(rows[0]["anatomy_tracing_s"]) == 0.6
    assert float(rows[0]["anatomy_not_attributed_s"]) == pytest.approx(0.1)
    assert rows[1]["anatomy_phase"] == "" and rows[1]["anatomy_tracing_s"] == ""


def test_a_wait_for_one_time_work_on_another_thread_is_that_work() -> None:
    """XLA compiles on the executor's pool while the window's thread waits in the function's
    run: the overlap is XLA's; work beside an op the thread runs itself stays execution."""
    xs = space([("KernelAndDeviceFunc::Run", 0, 100), ("EagerLocalExecute: MatMul", 100, 50)],
               [("CpuCompiler::RunBackend", 20, 50), ("JitCompiler::Compile", 30, 10), ("cuModuleLoadData", 110, 20)])
    result = anatomy.attribute(xs, at(0), at(150))
    assert parts(result) == {"xla": 50, "execution": 100}
    assert result["not_attributed"] == pytest.approx(0.0, abs=1e-6)
