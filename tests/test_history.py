"""The run history: a real SQLite file, reopened, crashed into, and corrupted."""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import sys
import textwrap

import pytest

from tflaunch.core.run import events as ev
from tflaunch.core.run.model_facts import InputFacts
from tflaunch.core.run.record import RunRecord, RunStatus
from tflaunch.core.settings.config import LaunchConfig
from tflaunch.core.store.history import SCHEMA_VERSION, History, HistoryError

from .builders import finished_record


def test_a_run_round_trips_through_the_file(tmp_path):
    history = History(tmp_path / "h.sqlite3")
    original = finished_record()
    run_id = history.record(original, "cli")
    history.close()
    loaded = History(tmp_path / "h.sqlite3").load(run_id)
    assert loaded.status is RunStatus.OK and loaded.history_id == run_id
    assert loaded.config == original.config
    assert loaded.time_to_ready == pytest.approx(original.time_to_ready)
    assert loaded.samples == original.samples
    assert loaded.phases["steady"].latency == {"n": 3, "median": 0.001}
    assert loaded.environment.to_dict() == {"tensorflow": "2.21.0"} and loaded.model.params == 5
    assert list(loaded.stderr_tail) == ["I0000 a log line"]


def test_list_filter_and_delete(tmp_path):
    history = History(tmp_path / "h.sqlite3")
    a = history.record(finished_record("sample:mlp", 1.0), "gui")
    b = history.record(finished_record("sample:wide", 2.0, intra=2, at=2000.0), "cli")
    assert [r.id for r in history.list_runs()] == [b, a], "newest first"
    wide = history.list_runs(model="sample:wide")
    assert [r.id for r in wide] == [b] and wide[0].settings_summary == "intra=2"
    history.delete([b])
    assert [r.id for r in history.list_runs()] == [a]
    assert history._db.execute("SELECT COUNT(*) FROM samples WHERE run_id=?", (b,)).fetchone()[0] == 0


def test_a_failed_run_keeps_its_failure(tmp_path):
    history = History(tmp_path / "h.sqlite3")
    record = RunRecord(LaunchConfig(), launched_at=5.0)
    record.apply(ev.ProbeError(6.0, "load", "model_not_found", "The model x does not exist."))
    record.finish(2)
    loaded = history.load(history.record(record, "gui"))
    assert loaded.status is RunStatus.FAILED and loaded.failed_phase == "load"
    assert loaded.failure.message == "The model x does not exist."


WRITER = textwrap.dedent("""
    import sys, time
    from tflaunch.core.settings.config import LaunchConfig
    from tflaunch.core.store.history import History
    from tflaunch.core.run.record import RunRecord
    history = History(sys.argv[1])
    record = RunRecord(LaunchConfig())
    run_id = history.begin(record, "gui")
    history.add_samples(run_id, [(0.1, 1000), (0.2, 2000)])
    print(run_id, flush=True)
    time.sleep(600)
""")


def test_a_writer_killed_mid_run_leaves_an_interrupted_run_and_nothing_else_lost(tmp_path):
    path = tmp_path / "h.sqlite3"
    history = History(path)
    kept = history.record(finished_record(), "cli")
    history.close()
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(path)], stdout=subprocess.PIPE, text=True)
    run_id = int(writer.stdout.readline())
    assert History(path).load(run_id).status is RunStatus.RUNNING, "a live writer's run is left alone"
    writer.send_signal(signal.SIGKILL)
    writer.wait()
    reopened = History(path)
    assert reopened.interrupted_on_open == 1
    interrupted = reopened.load(run_id)
    assert interrupted.status is RunStatus.INTERRUPTED
    assert interrupted.samples == [(0.1, 1000), (0.2, 2000)]
    assert reopened.load(kept).status is RunStatus.OK


def test_a_corrupt_file_is_reported_and_left_untouched(tmp_path):
    path = tmp_path / "h.sqlite3"
    path.write_bytes(b"this is not a database" * 100)
    before = path.read_bytes()
    with pytest.raises(HistoryError) as error:
        History(path)
    assert str(path) in str(error.value) and "Move it aside" in str(error.value)
    assert path.read_bytes() == before


def test_a_newer_schema_is_refused(tmp_path):
    path = tmp_path / "h.sqlite3"
    with sqlite3.connect(path) as db:
        db.execute("PRAGMA user_version = 99")
    with pytest.raises(HistoryError, match="newer tflaunch"):
        History(path)


SCHEMA_1 = textwrap.dedent("""
    import sqlite3, sys
    from tflaunch.core.store import history
    db = sqlite3.connect(sys.argv[1], isolation_level=None)
    for statement in history.MIGRATIONS[0].split(";"):
        if statement.strip():
            db.execute(statement)
    db.execute("PRAGMA user_version = 1")
    db.execute("INSERT INTO runs (launched_at, source, model, status, config)"
               " VALUES (1.0, 'cli', 'old.keras', 'ok', '{}')")
""")


def test_a_version_1_file_is_migrated_and_keeps_its_runs(tmp_path):
    path = tmp_path / "h.sqlite3"
    subprocess.run([sys.executable, "-c", SCHEMA_1, str(path)], check=True)
    history = History(path)
    assert history._db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert [r.model for r in history.list_runs()] == ["old.keras"]
    assert not history.load(history.list_runs()[0].id).is_program


def test_a_run_of_the_old_script_subject_reads_as_a_program_run_to_its_exit(tmp_path):
    """The `script` subject is gone (one engine): its stored rows read as what they were, a
    program run to its exit, ready at its exit when it exited 0."""
    from .builders import store_old_script_run

    history = History(tmp_path / "h.sqlite3")
    ok = store_old_script_run(history, ["python", "train.py", "--epochs", "3"], at=10.0, ran_s=2.5)
    failed = store_old_script_run(history, ["python", "train.py"], at=20.0, ran_s=1.0, exit_code=3)
    loaded = history.load(ok)
    assert loaded.is_program and loaded.config.program == ("python", "train.py", "--epochs", "3")
    assert loaded.config.until == "exit" and loaded.status is RunStatus.OK
    assert loaded.time_to_ready == pytest.approx(2.5)
    bad = history.load(failed)
    assert bad.status is RunStatus.FAILED and bad.failure.message == "The script exited with code 3."
    assert bad.time_to_ready is None
    listed = {run.id: run for run in history.list_runs()}
    assert listed[ok].model == "script: train.py" and listed[ok].time_to_ready == pytest.approx(2.5)
    assert listed[failed].time_to_ready is None


SWEEP_WRITER = textwrap.dedent("""
    import sys, time
    from tflaunch.core.store.history import History
    history = History(sys.argv[1])
    print(history.create_sweep("sample:mlp", {"axes": {}}), flush=True)
    time.sleep(600)
""")


def test_a_sweep_whose_writer_died_is_marked_interrupted(tmp_path):
    path = tmp_path / "h.sqlite3"
    writer = subprocess.Popen([sys.executable, "-c", SWEEP_WRITER, str(path)], stdout=subprocess.PIPE, text=True)
    sweep_id = int(writer.stdout.readline())
    assert History(path).list_sweeps()[0][3] == "running", "a live sweep is left alone"
    writer.send_signal(signal.SIGKILL)
    writer.wait()
    assert History(path).list_sweeps()[0][:4][0] == sweep_id
    assert History(path).list_sweeps()[0][3] == "interrupted"


def test_the_model_s_facts_are_stored_as_the_probe_said_them_and_an_old_row_reads_back(tmp_path):
    """The record reads the model's facts as typed values; the history and the JSON keep the
    probe's description as it came (keys nobody reads included, in its order), and an older row
    (keys missing, a junk value where nobody reads it) loads as before."""
    parser = ev.EventParser()
    record = RunRecord(LaunchConfig(model="m.keras"), launched_at=1000.0)
    for line in ('{"v": 1, "ts": 1000.5, "phase": "load", "event": "inputs", "inputs": [{"name": "x", '
                 '"dtype": "float32", "shape": [null, 8]}], "signature": null, "signatures": []}',
                 '{"v": 1, "ts": 1001.0, "phase": "steady", "event": "result", "environment": {}, "model": {"name": '
                 '"m", "params": 12, "later": {"a": [1]}, "inputs": [{"name": "x", "fed_shape": [4, 8], "assumed": '
                 'true}], "outputs_finite": false}}'):
        record.apply(parser.parse(line))
    record.finish(0)
    said = ('{"declared_inputs": [{"name": "x", "dtype": "float32", "shape": [null, 8]}], "signature": null, '
            '"signatures": [], "name": "m", "params": 12, "later": {"a": [1]}, "inputs": [{"name": "x", '
            '"fed_shape": [4, 8], "assumed": true}], "outputs_finite": false}')
    assert (record.model.params, record.model.outputs_finite, record.fed_batch, record.assumed_inputs) == \
        (12, False, 4, ["x"])
    assert record.model.declared_inputs == (InputFacts("x", "float32", (None, 8)),)
    history = History(tmp_path / "h.sqlite3")
    run_id = history.record(record, "cli")
    with sqlite3.connect(tmp_path / "h.sqlite3") as db:
        assert db.execute("SELECT model_info FROM runs WHERE id=?", (run_id,)).fetchone()[0] == said
    assert json.dumps(record.to_dict()["model"]) == said
    assert History(tmp_path / "h.sqlite3").load(run_id).model == record.model
    with sqlite3.connect(tmp_path / "h.sqlite3") as db:  # an older row: no inputs listed, junk nobody reads
        db.execute("UPDATE runs SET model_info=? WHERE id=?", ('{"params": 5, "layers": "many"}', run_id))
    old = History(tmp_path / "h.sqlite3").load(run_id)
    assert (old.model.params, old.model.inputs, old.model.declared_inputs, old.model.format) == (5, (), None, None)
    assert old.to_dict()["model"] == {"params": 5, "layers": "many"} and old.fed_batch == old.config.batch
    assert not RunRecord(LaunchConfig()).model and RunRecord(LaunchConfig()).to_dict()["model"] == {}


def test_the_environment_a_child_said_is_read_as_typed_figures_and_kept_as_it_came(tmp_path):
    """A child's result is parsed, not checked: one that said `"gpus": 7` made the run's table, its
    JSON (both through allocator_peaks) and the profile a bench saves from it raise (TypeError: 'int'
    object is not iterable), and a version sent as a list was written into the words, the trace and
    the profile. The record reads each figure as its type, or none; the history and the JSON keep
    the description as the child said it, byte for byte."""
    from tflaunch.core.report.table import run_table
    from tflaunch.core.report.trace_export import trace_dict
    from tflaunch.core.run.environment_facts import ReportedGpu
    from tflaunch.core.store.profiles import evidence_from_runs

    said = ('{"tensorflow": ["2.21"], "python": "3.11.9", "cores": "many", "cpu": "EPYC", "gpus": 7, '
            '"cudnn": 9, "later": {"a": [1]}}')
    record = finished_record()
    record.apply(ev.EventParser().parse(ev.encode("result", "steady", 1001.5, environment=json.loads(said), model={})))
    env = record.environment
    assert (env.tensorflow, env.python, env.cores, env.cpu, env.gpus, env.cudnn) == (None, "3.11.9", None, "EPYC",
                                                                                    None, None)
    evidence = evidence_from_runs([record])
    assert evidence["gpus"] == [] and evidence["environment"]["tensorflow"] is None
    assert evidence["environment"]["cores"] is None and evidence["environment"]["python"] == "3.11.9"
    assert record.environment_line == "Python 3.11.9, EPYC, no GPU" and record.allocator_peaks == {}
    assert "Python 3.11.9, EPYC, no GPU" in run_table(record)
    [versions] = [e["args"]["versions"] for e in trace_dict([(None, record)])["traceEvents"]
                  if "versions" in e.get("args", {})]
    assert versions == {"python": "3.11.9"}
    assert json.dumps(record.to_dict()["environment"]) == said
    history = History(tmp_path / "h.sqlite3")
    run_id = history.record(record, "cli")
    with sqlite3.connect(tmp_path / "h.sqlite3") as db:
        assert db.execute("SELECT environment FROM runs WHERE id=?", (run_id,)).fetchone()[0] == said
    listed = ev.EventParser().parse(ev.encode("result", "steady", 1001.6, model={}, environment={
        "gpus": ["GPU:0", {"name": "/physical_device:GPU:0", "model": ["H100"], "compute_capability": [9, 0]}]}))
    record.apply(listed)
    assert record.environment.gpus == (ReportedGpu("/physical_device:GPU:0", None, (9, 0)),)
    assert evidence_from_runs([record])["gpus"] == ["/physical_device:GPU:0"]  # was AttributeError: 'str' ...


def test_a_cluster_trial_s_node_reads_back_typed_and_its_trial_is_kept_as_it_came():
    """A merged trial's run knows the node type and host it ran on (its stored trial, as its result
    file said it); a host that is not text reads as none, and the trial is kept as it came."""
    import csv
    import io

    from tflaunch.core.report.run_export import ExportedRun, to_csv
    from tflaunch.core.run.trial_info import TrialInfo
    from tflaunch.core.run.trial_node import TrialNode
    from tflaunch.core.store.rows import RunSummary
    from tflaunch.core.store.run_rows import record_from_data, run_data

    trial = {"candidate": "baseline", "warmup": False, "number": 1, "instance": 0, "index": 3, "node_type": "a100",
             "node": {"host": "n7", "gpu_models": ["NVIDIA A100-SXM4-80GB"], "driver": "570.86", "job_id": "12"}}
    data = json.loads(json.dumps(run_data(finished_record(), "cluster", TrialInfo(**trial))))
    assert json.loads(data["run"]["trial"]) == trial, "stored as it always was"
    record, read = record_from_data(data)
    assert record.node == TrialNode("a100", "n7") and record.kind.origin == "cluster"
    assert read == TrialInfo(**trial) and read is not None and read.host == "n7"
    data["run"]["trial"] = json.dumps({**trial, "node": {"host": ["n7", "n8"], "gpu_models": []}})
    assert record_from_data(data)[0].node == TrialNode("a100", None), "a list of hosts is no host"
    data["run"]["trial"] = json.dumps({**trial, "node": {}})
    off_host = record_from_data(data)[0]
    assert off_host.node == TrialNode("a100", None) and off_host.node.host is None
    plain = finished_record()
    assert plain.node is None and plain.kind.origin == ""
    rows = list(csv.DictReader(io.StringIO(to_csv([
        ExportedRun(RunSummary(1, 100.0, "cluster", "sample:mlp", "ok", None, 1.0, 400, ""), record),
        ExportedRun(RunSummary(2, 200.0, "cli", "sample:mlp", "ok", None, 1.0, 400, ""), plain)]))))
    assert [(r["node_type"], r["host"]) for r in rows] == [("a100", "n7"), ("", "")]
