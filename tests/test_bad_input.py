"""Each bad input ends in a clear message naming the input and what to do; nothing raises."""

from __future__ import annotations

import sys
import time

import psutil
import pytest

from tflaunch.core.run.driver import run_probe, run_sessions
from tflaunch.core.run.record import PhaseState, RunStatus
from tflaunch.core.run.session import ProbeSession
from tflaunch.core.run.watcher import Watcher
from tflaunch.core.settings.config import LaunchConfig


def failed(record, phase):
    assert record.status is RunStatus.FAILED, record.headline
    assert record.failed_phase == phase, record.headline
    return record.failure.message


def test_missing_path(tmp_path):
    message = failed(run_probe(LaunchConfig(model=str(tmp_path / "gone.keras"))), "load")
    assert "gone.keras does not exist" in message


def test_file_that_is_not_a_model(tmp_path):
    path = tmp_path / "weights.bin"
    path.write_bytes(b"\x00" * 100)
    assert "not a model tflaunch can load" in failed(run_probe(LaunchConfig(model=str(path))), "load")


@pytest.mark.slow  # real child processes; make test keeps to its 6 minutes, CI runs this tier too
def test_truncated_keras_file(models, tmp_path):
    data = models["mlp"]["keras"].read_bytes()
    path = tmp_path / "truncated.keras"
    path.write_bytes(data[: len(data) // 2])
    message = failed(run_probe(LaunchConfig(model=str(path))), "load")
    assert "truncated.keras" in message and "truncated or corrupt" in message


def test_saved_model_folder_without_pb(models, tmp_path):
    folder = tmp_path / "half_export"
    folder.mkdir()
    (folder / "variables").mkdir()
    assert "no saved_model.pb" in failed(run_probe(LaunchConfig(model=str(folder))), "load")


def test_mislabelled_h5_is_caught_inside_the_probe(models, tmp_path):
    """The probe checks too, for runs that skip the launcher's validation."""
    path = tmp_path / "really_keras.h5"
    path.write_bytes(models["mlp"]["keras"].read_bytes())
    config = LaunchConfig(model=str(path), timeout=120)
    record = run_sessions([ProbeSession(config)])[0]  # no launch check: straight to the child
    assert "not an HDF5 file" in failed(record, "load")
    assert record.failure.kind == "corrupt_model" and record.pid is not None, "the child itself said so"


def test_interpreter_that_does_not_exist(tmp_path):
    record = run_probe(LaunchConfig(python=str(tmp_path / "bin" / "python9")))
    assert "does not exist" in failed(record, "spawn") and "python9" in record.failure.message


def test_interpreter_without_tensorflow(python_without_tensorflow):
    record = run_probe(LaunchConfig(python=python_without_tensorflow, timeout=60))
    message = failed(record, "import")
    assert python_without_tensorflow in message and "pip install tensorflow" in message
    assert record.failure.kind == "no_tensorflow"


def fake_child(script: str) -> list[str]:
    prelude = (
        "import json, sys, time\n"
        "def emit(event, phase, **f):\n"
        "    print(json.dumps({'v': 1, 'ts': time.time(), 'phase': phase, 'event': event, **f}), flush=True)\n"
        "emit('hello', 'spawn', pid=0, process_age=0.01, python=sys.executable)\n"
        "emit('phase_end', 'spawn', duration=0.01, rss=1, peak_rss=1)\n"
    )
    return [sys.executable, "-c", prelude + script]


def test_child_that_exits_mid_phase_reports_phase_code_and_stderr(quick_config):
    script = (
        "emit('phase_start', 'import')\n"
        "print('this is not an event', flush=True)\n"
        "print('{\"v\": 1, \"broken', flush=True)\n"
        "sys.stderr.write('Fatal Python error: something broke\\n')\n"
        "sys.exit(7)\n"
    )
    record = run_probe(quick_config, command=fake_child(script))
    message = failed(record, "import")
    assert "exited with code 7" in message and "Import" in message
    assert "something broke" in record.failure.detail
    assert record.malformed_lines == 2
    assert record.phases["spawn"].state is PhaseState.DONE


@pytest.mark.slow  # real child processes; make test keeps to its 6 minutes, CI runs this tier too
def test_child_killed_mid_phase_reports_the_signal(wide_keras):
    config = LaunchConfig(model=str(wide_keras), timeout=120)

    class KillWhenLoading(Watcher):
        def changed(self, record, output):
            loading = record.phase("load")
            if record.current_phase == "load" and loading is not None and loading.state is PhaseState.RUNNING:
                psutil.Process(record.pid).kill()

    record = run_probe(config, KillWhenLoading())
    assert "killed by SIGKILL" in failed(record, "load")


def test_hung_child_and_its_own_children_are_stopped_at_the_timeout(quick_config):
    script = (
        "emit('phase_start', 'import')\n"
        "import os\n"
        "pid = os.fork()\n"
        "if pid == 0:\n    time.sleep(600)\n"
        "sys.stderr.write(f'helper {pid}\\n'); sys.stderr.flush()\n"
        "time.sleep(600)\n"
    )
    config = quick_config.replace(timeout=1.5)
    started = time.monotonic()
    record = run_probe(config, command=fake_child(script))
    assert time.monotonic() - started < 30
    assert record.status is RunStatus.TIMED_OUT and record.failed_phase == "import"
    assert "timeout" in record.failure.message
    helper = int(next(line for line in record.stderr_tail if line.startswith("helper")).split()[1])
    deadline = time.monotonic() + 5
    while psutil.pid_exists(helper) and psutil.Process(helper).status() != psutil.STATUS_ZOMBIE:
        assert time.monotonic() < deadline, "the helper process outlived the run"
        time.sleep(0.05)


def test_child_that_closes_its_pipes_and_lingers_is_timed_out(quick_config):
    script = "import os\nos.close(1); os.close(2)\ntime.sleep(600)\n"
    record = run_probe(quick_config.replace(timeout=1.5), command=fake_child(script))
    assert record.status is RunStatus.TIMED_OUT


@pytest.mark.parametrize("steady", [0])
def test_zero_steady_runs_still_finish(steady):
    record = run_probe(LaunchConfig(model="sample:mlp", steady=steady))
    assert record.status is RunStatus.OK and record.phases["steady"].latency == {"n": 0}
