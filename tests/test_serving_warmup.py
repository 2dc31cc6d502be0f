"""TF Serving warm-up files: written from what a run feeds, parsed by TF Serving's own
PredictionLog (tensorflow-serving-api, the test extra), and replayed record by record.

The record checks run on a small SavedModel built here, in a child forked from the test
process (forked.with_tensorflow: the test process stands in for the app's, which never
imports TensorFlow); the command line runs as a user runs it, in fresh processes.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tflaunch.core.cli.main import main
from tflaunch.core.cli.serving_warmup import print_report, say_problems
from tflaunch.core.probe.failure import ProbeFailure
from tflaunch.core.probe.serving.prediction_log import OTHER_LOGS, PREDICT_LOG, PredictionLogs
from tflaunch.core.probe.serving.warmup_file import check_target, put_in_place, read_records, serving_name, warmup_path
from tflaunch.core.probe.serving.warmup_replay import replay
from tflaunch.core.run.warmup_report import WarmupError, parse_report

from .builders import tflaunch
from .forked import with_tensorflow

BUILD = '''
import sys, tensorflow as tf
class Model(tf.Module):
    def __init__(self):
        self.w = tf.Variable(tf.ones([4, 2]))
    @tf.function(input_signature=[tf.TensorSpec([None, 4], tf.float32, name="x"),
                                  tf.TensorSpec([None], tf.int32, name="ids")])
    def serve(self, x, ids):
        return {"y": tf.matmul(x, self.w) + tf.cast(ids, tf.float32)[:, None]}
    @tf.function(input_signature=[tf.TensorSpec([None, 4], tf.float32, name="x")])
    def total(self, x):
        return {"z": tf.reduce_sum(x, axis=1)}
model = Model()
tf.saved_model.save(model, sys.argv[1], signatures={"serving_default": model.serve, "sum": model.total})
'''


@pytest.fixture
def tf():
    """TensorFlow, given by with_tensorflow in the forked child; never imported here."""
    return None


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    """A SavedModel with two signatures (two inputs, one float, one int) in TF Serving's
    layout, /models/NAME/VERSION; tests write into copies of it."""
    path = tmp_path_factory.mktemp("served") / "adder" / "1"
    script = path.parent.parent / "build.py"
    script.write_text(BUILD)
    subprocess.run([sys.executable, str(script), str(path)], check=True, capture_output=True, timeout=120)
    return path


@pytest.fixture
def saved_model(built, tmp_path) -> Path:
    copy = tmp_path / "models" / "adder" / "1"
    shutil.copytree(built, copy)
    return copy


def official():
    from tensorflow_serving.apis import model_pb2, predict_pb2, prediction_log_pb2

    return prediction_log_pb2, predict_pb2, model_pb2


def request(tf, signature="serving_default", **inputs) -> bytes:
    """A record made with tensorflow-serving-api, as a user's own script would write it."""
    prediction_log_pb2, predict_pb2, _ = official()
    req = predict_pb2.PredictRequest()
    req.model_spec.name = "adder"
    req.model_spec.signature_name = signature
    for name, value in inputs.items():
        req.inputs[name].CopyFrom(tf.make_tensor_proto(value))
    return prediction_log_pb2.PredictionLog(predict_log=prediction_log_pb2.PredictLog(request=req)).SerializeToString()


@with_tensorflow
@pytest.mark.slow  # real child processes; make test keeps to its 6 minutes, CI runs this tier too
def test_records_are_tf_servings_own_prediction_logs(tf):
    prediction_log_pb2, predict_pb2, model_pb2 = official()
    logs = PredictionLogs(tf)
    data = logs.record("adder", "serving_default", {"x": tf.make_tensor_proto([[1.0, 2.0, 3.0, 4.0]]),
                                                    "ids": tf.make_tensor_proto([7], dtype=tf.int32)})
    log = prediction_log_pb2.PredictionLog.FromString(data)
    assert log.WhichOneof("log_type") == "predict_log"
    assert log.predict_log.request.model_spec.name == "adder"
    assert log.predict_log.request.model_spec.signature_name == "serving_default"
    assert tf.make_ndarray(log.predict_log.request.inputs["x"]).tolist() == [[1.0, 2.0, 3.0, 4.0]]
    assert tf.make_ndarray(log.predict_log.request.inputs["ids"]).dtype.name == "int32"
    assert log.SerializeToString(deterministic=True) == data  # nothing unknown to it, nothing reordered
    # and the other way: what tensorflow-serving-api writes, ours reads
    assert logs.parse(request(tf, "sum", x=[[1.0] * 4])).predict_log.request.model_spec.signature_name == "sum"
    # Every field declared here has upstream's number and wire type.
    mine = logs.prediction_log.DESCRIPTOR
    theirs = {m.DESCRIPTOR.full_name: m.DESCRIPTOR for m in (
        prediction_log_pb2.PredictionLog, prediction_log_pb2.PredictLog, predict_pb2.PredictRequest,
        predict_pb2.PredictRequest.InputsEntry, model_pb2.ModelSpec)}
    todo, checked = [mine], 0
    while todo:
        message = todo.pop()
        for field in message.fields:
            upstream = theirs[message.full_name].fields_by_name[field.name]
            assert field.number == upstream.number, field.full_name
            if field.name in OTHER_LOGS:  # bytes here, a message there: the same wire type
                assert upstream.message_type is not None
            else:
                assert field.type == upstream.type, field.full_name
                if field.message_type and field.message_type.full_name in theirs:
                    todo.append(field.message_type)
            checked += 1
    assert checked == 13 and mine.fields_by_name["predict_log"].number == PREDICT_LOG


@with_tensorflow
@pytest.mark.slow  # real child processes; make test keeps to its 6 minutes, CI runs this tier too
def test_every_bad_record_says_which_and_why(tf, saved_model):
    prediction_log_pb2, _, _ = official()
    logs, model = PredictionLogs(tf), tf.saved_model.load(str(saved_model))
    x, ids = [[0.5] * 4], tf.constant([3], dtype=tf.int32)
    example = tf.train.Example()
    example.features.feature["x"].float_list.value.append(1.0)
    classify = prediction_log_pb2.PredictionLog(classify_log=prediction_log_pb2.ClassifyLog())
    classify.classify_log.request.model_spec.name = "adder"
    records = [request(tf, x=x, ids=ids), request(tf, "nope", x=x), request(tf, x=tf.constant(x, tf.float64), ids=ids),
               request(tf, x=x), request(tf, x=x, ids=ids, extra=[1.0]), request(tf, x=[[0.5] * 5], ids=ids),
               example.SerializeToString(), b"\xff\xff\xff", classify.SerializeToString(), request(tf, "sum", x=x)]
    outcomes = replay(tf, logs, model, records)
    status = [o["status"] for o in outcomes]
    assert status == ["ok", "failed", "failed", "failed", "failed", "failed", "failed", "failed", "skipped", "ok"]
    reasons = [o["reason"] for o in outcomes]
    assert "names signature 'nope', which the model lacks (it has serving_default, sum)" in reasons[1]
    assert "input 'x' is float64, but signature 'serving_default' takes float32" in reasons[2]
    assert "lacks input 'ids'" in reasons[3] and "has input 'extra'" in reasons[4]
    assert "input 'x' has shape 1x5, and signature 'serving_default' takes ?x4" in reasons[5]
    assert "holds no Predict request" in reasons[6] and "is not a PredictionLog" in reasons[7]
    assert "classify_log" in reasons[8]
    assert all("tflaunch serving-warmup --force" in o["reason"] for o in outcomes if o["status"] == "failed")
    assert outcomes[0]["seconds"] > 0 and outcomes[0]["signature"] == "serving_default"


@with_tensorflow
@pytest.mark.slow  # real child processes; make test keeps to its 6 minutes, CI runs this tier too
def test_a_damaged_file_names_the_first_record_it_cannot_read(tf, tmp_path):
    path = tmp_path / "tf_serving_warmup_requests"
    with tf.io.TFRecordWriter(str(path)) as writer:
        for _ in range(3):
            writer.write(request(tf, x=[[0.5] * 4]))
    whole = path.read_bytes()
    path.write_bytes(whole[:-5])  # cut inside the third record
    records, damage = read_records(tf, str(path))
    assert len(records) == 2 and damage.startswith("record 3 cannot be read (truncated record at ")
    assert "truncated or is not a TFRecord file" in damage and "--force" in damage
    path.write_text("x = 1\n" * 20)  # not a TFRecord at all
    records, damage = read_records(tf, str(path))
    assert records == [] and damage.startswith("record 1 cannot be read (corrupted record at 0)")
    path.write_bytes(whole[:len(whole) // 3 + 6])  # a tail shorter than a record's header, which TF reads as the end
    records, damage = read_records(tf, str(path))
    assert len(records) == 1 and damage.startswith("record 2 cannot be read (the file ends 6 bytes into it)")
    with pytest.raises(ProbeFailure, match="no warm-up file at"):
        read_records(tf, str(tmp_path / "missing"))


def test_an_existing_file_is_kept_unless_forced(saved_model, tmp_path):
    target = Path(warmup_path(str(saved_model)))
    target.parent.mkdir()
    target.write_bytes(b"theirs")
    with pytest.raises(ProbeFailure, match="exists already.*--check.*--force") as refused:
        check_target(str(saved_model), force=False)
    assert refused.value.kind == "warmup_exists"
    assert check_target(str(saved_model), force=True) == str(target)
    new = tmp_path / "new"
    new.write_bytes(b"ours")
    with pytest.raises(ProbeFailure, match="appeared while tflaunch was writing"):  # the race after the check
        put_in_place(str(new), str(target), force=False)
    assert target.read_bytes() == b"theirs"
    put_in_place(str(new), str(target), force=True)
    assert target.read_bytes() == b"ours" and not new.exists()


def test_the_served_name_skips_a_version_folder():
    assert serving_name("/models/adder/1") == "adder"
    assert serving_name("/work/exports/adder/") == "adder"


def test_only_a_savedmodel_carries_the_file(tmp_path, capsys):
    keras_file = tmp_path / "model.keras"
    keras_file.write_bytes(b"PK")
    assert main(["serving-warmup", "--model", str(keras_file)]) == 2
    said = capsys.readouterr().err
    assert f"{keras_file} is a .keras file; only a SavedModel folder can carry" in said
    assert "model.export('FOLDER')" in said and "--export-to FOLDER" in said
    assert main(["serving-warmup", "--model", "sample:mlp"]) == 2
    assert "tflaunch sample mlp --format savedmodel" in capsys.readouterr().err


def test_more_records_than_tf_serving_reads_are_refused(saved_model, capsys):
    assert main(["serving-warmup", "--model", str(saved_model), "--records", "1001"]) == 2
    assert "TF Serving reads at most 1000 warm-up records" in capsys.readouterr().err


def test_a_malformed_answer_from_the_child_is_refused():
    good = {"action": "check", "path": "/m/assets.extra/tf_serving_warmup_requests", "records": 1, "replay_s": 0.01,
            "outcomes": [{"record": 1, "signature": "serving_default", "status": "ok", "seconds": 0.01, "reason": ""}]}
    assert parse_report(good).ok
    for bad in ({**good, "records": -1}, {**good, "outcomes": [{"record": 1, "status": "maybe"}]},
                {**good, "replay_s": float("nan")}, {**good, "outcomes": "all"}):
        with pytest.raises(WarmupError, match="malformed"):
            parse_report(bad)


def test_a_failed_record_is_printed_with_the_file_and_its_number(capsys):
    report = parse_report({
        "action": "check", "path": "/m/1/assets.extra/tf_serving_warmup_requests", "records": 2, "replay_s": 0.02,
        "outcomes": [{"record": 1, "signature": "serving_default", "status": "ok", "seconds": 0.002, "reason": ""},
                     {"record": 2, "signature": None, "status": "failed", "seconds": None,
                      "reason": "it names signature 'nope', which the model lacks. Write the file again"}]})
    say_problems(report)
    print_report(report)
    out, err = capsys.readouterr()
    assert out == "2 records: 1 replayed in 2.0 ms, 1 failed (/m/1/assets.extra/tf_serving_warmup_requests)\n"
    assert "tflaunch: /m/1/assets.extra/tf_serving_warmup_requests: record 2: it names signature 'nope'" in err


@with_tensorflow
@pytest.mark.slow  # real child processes; make test keeps to its 6 minutes, CI runs this tier too
def test_round_trip_written_read_back_and_replayed(saved_model, tf):
    """What a user runs: write from the inputs a run feeds, then check on a fresh load."""
    written = tflaunch("serving-warmup", "--model", str(saved_model), "--records", "3", timeout=180)
    assert written.returncode == 0, written.stderr
    target = Path(warmup_path(str(saved_model)))
    assert f"wrote {target}" in written.stdout and "inputs as a run feeds them: ids=1:int32, x=1x4:float32" \
        in written.stdout
    prediction_log_pb2, _, _ = official()
    records = [prediction_log_pb2.PredictionLog.FromString(r.numpy()) for r in tf.data.TFRecordDataset(str(target))]
    assert len(records) == 3
    req = records[0].predict_log.request
    assert (req.model_spec.name, req.model_spec.signature_name) == ("adder", "serving_default")
    assert sorted(req.inputs) == ["ids", "x"] and tf.make_ndarray(req.inputs["x"]).shape == (1, 4)
    assert not list(target.parent.glob("*.tmp"))
    checked = tflaunch("serving-warmup", "--check", "--model", str(saved_model), timeout=180)
    assert checked.returncode == 0, checked.stderr
    assert checked.stdout.startswith("3 records, all replayed in ") and str(target) in checked.stdout
    before = target.read_bytes()
    again = tflaunch("serving-warmup", "--model", str(saved_model))  # refused before any child starts
    assert again.returncode == 2 and "exists already" in again.stderr and target.read_bytes() == before


@with_tensorflow
@pytest.mark.slow  # a real replay of a damaged file; every bad record's words are tested without TensorFlow
def test_check_of_a_bad_file_fails_naming_file_record_and_cause(saved_model, tf, tmp_path):
    bad = tmp_path / "warmup"
    with tf.io.TFRecordWriter(str(bad)) as writer:
        writer.write(request(tf, x=[[0.5] * 4], ids=tf.constant([1], tf.int32)))
        writer.write(request(tf, "nope", x=[[0.5] * 4]))
    checked = tflaunch("serving-warmup", "--check", "--model", str(saved_model), "--file", str(bad), "--json",
                       timeout=180)
    assert checked.returncode == 1
    assert f"{bad}: record 2: it names signature 'nope', which the model lacks" in checked.stderr
    assert "TF Serving stops loading a model at the first warm-up record that fails" in checked.stderr
    answer = json.loads(checked.stdout)
    assert answer["status"] == "failed" and [o["status"] for o in answer["serving_warmup"]["outcomes"]] == ["ok",
                                                                                                          "failed"]


@pytest.mark.slow
def test_a_keras_model_is_exported_then_given_the_file(models, tmp_path):
    out = tmp_path / "export"
    done = tflaunch("serving-warmup", "--model", str(models["mlp"]["keras"]), "--export-to", str(out), timeout=300)
    assert done.returncode == 0, done.stderr
    assert "exported" in done.stderr and Path(warmup_path(str(out / "mlp_savedmodel"))).is_file()
    checked = tflaunch("serving-warmup", "--check", "--model", str(out / "mlp_savedmodel"), timeout=180)
    assert checked.returncode == 0 and checked.stdout.startswith("1 record, all replayed in "), checked.stderr


@with_tensorflow
@pytest.mark.slow  # a second real replay; the round trip replays in the fast tier
def test_a_check_that_replayed_nothing_is_not_a_success(saved_model, tf, tmp_path):
    """Issue 33: every record skipped (not a Predict request) exited 0, as if proven."""
    prediction_log_pb2, _, _ = official()
    only = tmp_path / "warmup"
    with tf.io.TFRecordWriter(str(only)) as writer:
        writer.write(prediction_log_pb2.PredictionLog(classify_log=prediction_log_pb2.ClassifyLog())
                     .SerializeToString())
    checked = tflaunch("serving-warmup", "--check", "--model", str(saved_model), "--file", str(only), "--json",
                       timeout=180)
    assert checked.returncode == 1, checked.stderr
    assert json.loads(checked.stdout)["status"] == "failed"


@pytest.mark.slow  # real child processes; make test keeps to its 6 minutes, CI runs this tier too
def test_a_warmup_file_that_is_a_fifo_is_refused_not_waited_on(saved_model, tmp_path):
    fifo = tmp_path / "warmup"
    os.mkfifo(fifo)
    checked = tflaunch("serving-warmup", "--check", "--model", str(saved_model), "--file", str(fifo), timeout=180)
    assert checked.returncode != 0 and "is a FIFO (named pipe), not a regular file" in checked.stderr


def test_the_warm_up_child_is_one_engine_s_child_a_timeout_ends_its_whole_group(tmp_path):
    """The serving warm-up writer is started, timed out and ended by the driver, as every
    run's child: a writer that hangs with a helper process (a data loader's worker) is
    ended with its group at --timeout, and says so as a WarmupError."""
    import uuid

    from tflaunch.core.run.serving_warmup import run_warmup
    from tflaunch.core.settings.config import LaunchConfig

    from .builders import fake_python
    from .fake_child import CHILD_ENV, MARKER_ENV
    from .faults.children import assert_nothing_left

    marker = uuid.uuid4().hex
    config = LaunchConfig(model=str(tmp_path), python=fake_python(tmp_path), timeout=3,
                          extra_env={CHILD_ENV: "hang", MARKER_ENV: marker})
    with pytest.raises(WarmupError) as raised:
        run_warmup(config, "write", {})
    assert raised.value.kind == "timeout" and "--timeout" in raised.value.message
    assert_nothing_left(marker)


def test_a_malformed_or_missing_answer_is_a_warmup_error_naming_the_cause(tmp_path):
    from tflaunch.core.run.serving_warmup import run_warmup
    from tflaunch.core.settings.config import LaunchConfig

    from .faults.children import fake_python

    answers = {"malformed": 'emit("serving_warmup", "first", records="many")', "silent": "print('hi')",
               "error": 'emit("error", "load", kind="model_not_found", message="No model at /x.", detail="")'}
    for name, body in answers.items():
        config = LaunchConfig(model=str(tmp_path), python=fake_python(tmp_path / name, f"hello()\n{body}"), timeout=30)
        with pytest.raises(WarmupError) as raised:
            run_warmup(config, "write", {})
        kind = {"malformed": "malformed_answer", "silent": "probe_failed", "error": "model_not_found"}[name]
        assert raised.value.kind == kind, (name, raised.value.message)
