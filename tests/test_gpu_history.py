"""GPU memory end to end without a GPU: samples stored as they come and loaded back (damaged
rows skipped), peaks per device on the record, in Compare, reviews and exports."""

from __future__ import annotations

import csv
import io
import sqlite3

from tflaunch.core.report.compare import memory_rows
from tflaunch.core.report.review import comparison_review, run_review
from tflaunch.core.report.run_export import ExportedRun, run_dict, to_csv
from tflaunch.core.run import events as ev
from tflaunch.core.run.environment_facts import EnvironmentFacts
from tflaunch.core.run.model_facts import ModelFacts
from tflaunch.core.store import recorder as recorder_module
from tflaunch.core.store.history import History
from tflaunch.core.store.recorder import RunRecorder
from tflaunch.core.store.rows import RunSummary
from tflaunch.core.units import MIB, format_bytes

from .builders import finished_record

GIB = 1024 * MIB
SAMPLES = [(0.5, {0: 100 * MIB}), (1.0, {0: 300 * MIB, 1: 2 * GIB}), (1.5, {0: 200 * MIB, 1: GIB})]


def gpu_record(at: float = 1000.0, visible=None):
    record = finished_record(at=at)
    if visible is not None:
        record.config = record.config.replace(visible_gpus=visible)
    record.gpu_samples = [(t, dict(used)) for t, used in SAMPLES]
    record.environment = record.environment.told({"gpus": [
        {"name": "/physical_device:GPU:0", "allocator_peak": 250 * MIB},
        {"name": "/physical_device:GPU:1", "allocator_peak": None}]})
    return record


def test_gpu_peaks_per_device_and_the_allocator_peak_by_nvml_index():
    record = gpu_record()
    assert record.gpu_peaks == {0: 300 * MIB, 1: 2 * GIB}
    assert record.allocator_peaks == {0: 250 * MIB}, "a missing allocator peak is no figure"
    # With visible GPUs set, TensorFlow's GPU:0 is the first visible one: NVML's GPU 1 here.
    assert gpu_record(visible=(1,)).allocator_peaks == {1: 250 * MIB}
    assert finished_record().gpu_peaks == {} and finished_record().allocator_peaks == {}


def test_gpu_samples_round_trip_through_the_history(tmp_path):
    history = History(tmp_path / "h.sqlite")
    run_id = history.record(gpu_record(), "test")
    loaded = history.load(run_id)
    assert loaded.gpu_samples == SAMPLES
    assert loaded.gpu_peaks == {0: 300 * MIB, 1: 2 * GIB} and loaded.allocator_peaks == {0: 250 * MIB}


def test_the_recorder_writes_gpu_samples_as_they_come_and_the_rest_at_the_end(tmp_path, monkeypatch):
    monkeypatch.setattr(recorder_module, "FLUSH_S", 0.0)
    history = History(tmp_path / "h.sqlite")
    recorder = RunRecorder(history, "test")
    record = finished_record()
    record.gpu_samples = []
    recorder.started(record)
    record.gpu_samples.append(SAMPLES[0])
    recorder.changed(record, None)
    stored = history._db.execute("SELECT t, gpu, bytes FROM gpu_samples").fetchall()
    assert stored == [(0.5, 0, 100 * MIB)], "written while the run runs: a crash loses at most FLUSH_S"
    record.gpu_samples += SAMPLES[1:]
    recorder.ended(record)
    assert history.load(record.history_id).gpu_samples == SAMPLES, "each sample once, none lost"


def test_damaged_gpu_rows_are_skipped_not_fatal(tmp_path):
    path = tmp_path / "h.sqlite"
    history = History(path)
    run_id = history.record(gpu_record(), "test")
    history.close()
    with sqlite3.connect(path) as db:
        db.executemany("INSERT INTO gpu_samples (run_id, t, gpu, bytes) VALUES (?, ?, ?, ?)", [
            (run_id, 2.0, 64, MIB),  # no machine has a GPU 64
            (run_id, 2.0, -1, MIB),
            (run_id, 2.0, 0, 1 << 51),  # more than any card holds
            (run_id, 2.0, 0, -5),
            (run_id, 2.0, "zero", MIB),
            (run_id, 2.0, 0, 1.5),
            (run_id, "later", 0, MIB),
            (run_id, 3.0, 1, 5 * MIB),  # the one good row among them
        ])
    loaded = History(path).load(run_id)
    assert loaded.gpu_samples == [*SAMPLES, (3.0, {1: 5 * MIB})]
    assert loaded.status.value == "ok"


def test_samples_no_card_could_hold_are_not_stored(tmp_path):
    history = History(tmp_path / "h.sqlite")
    record = gpu_record()
    record.gpu_samples.append((float("nan"), {0: MIB}))
    record.gpu_samples.append((2.0, {0: 1 << 60, 3: MIB}))
    loaded = history.load(history.record(record, "test"))
    assert loaded.gpu_samples == [*SAMPLES, (2.0, {3: MIB})]


def test_compare_has_a_memory_row_per_gpu_with_units():
    rows = memory_rows([gpu_record(), finished_record(at=2000.0)])
    assert [label for label, _ in rows] == ["Peak memory", "GPU 0 memory peak", "GPU 0 TensorFlow allocator peak",
                                            "GPU 1 memory peak"]
    assert dict(rows)["GPU 1 memory peak"] == [2 * GIB, None]
    review = comparison_review([gpu_record(), finished_record(at=2000.0)])
    header, table = review.table
    assert dict(review.facts)["Peak GPU memory (process tree)"].startswith(
        f"run 1: GPU 0: {format_bytes(300 * MIB)} (TensorFlow allocator peak")
    assert dict(review.facts)["Peak GPU memory (process tree)"].endswith("; run 2: no GPU")
    assert "GPU 1 memory peak (bytes)" in review.data[0]
    assert memory_rows([finished_record()]) == [("Peak memory", [400])], "no GPU rows without GPU figures"


def test_run_review_and_exports_carry_gpu_peaks():
    record = gpu_record()
    facts = dict(run_review(record).facts)
    assert facts["Peak GPU memory (process tree)"] == (
        f"GPU 0: {format_bytes(300 * MIB)} (TensorFlow allocator peak {format_bytes(250 * MIB)}); "
        f"GPU 1: {format_bytes(2 * GIB)}")
    assert run_review(record).series[0].gpu_samples == SAMPLES
    run = ExportedRun(RunSummary(7, 1000.0, "test", "sample:mlp", "ok", None, 1.0, 400, ""), record)
    plain = ExportedRun(RunSummary(8, 2000.0, "test", "sample:mlp", "ok", None, 1.0, 400, ""), finished_record())
    rows = list(csv.DictReader(io.StringIO(to_csv([run, plain]))))
    assert rows[0]["gpu0_peak_bytes"] == str(300 * MIB) and rows[0]["gpu0_allocator_peak_bytes"] == str(250 * MIB)
    assert rows[0]["gpu1_peak_bytes"] == str(2 * GIB) and rows[1]["gpu1_peak_bytes"] == ""
    assert "gpu1_allocator_peak_bytes" not in rows[0]
    data = run_dict(run)
    assert data["gpu_peaks"] == {"0": 300 * MIB, "1": 2 * GIB} and data["allocator_peaks"] == {"0": 250 * MIB}
    assert data["gpu_memory_samples"][1] == [1.0, {"0": 300 * MIB, "1": 2 * GIB}]
    assert "gpu0_peak_bytes" not in to_csv([plain]), "no GPU columns for runs without GPUs"


def test_probe_allocator_peak_arrives_with_the_result_event():
    """The field the probe sends (describe.environment): gpus[i].allocator_peak, bytes."""
    record = finished_record()
    record.apply(ev.Result(1002.0, "steady", EnvironmentFacts(
        {"gpus": [{"name": "/physical_device:GPU:0", "allocator_peak": 7 * MIB}]}), ModelFacts()))
    assert record.allocator_peaks == {0: 7 * MIB}
