"""Every setting reaches TensorFlow: read back inside the child and reported."""

from __future__ import annotations

import pytest

from tflaunch.core.run.driver import run_probe
from tflaunch.core.run.record import RunStatus
from tflaunch.core.settings.config import LaunchConfig


def run_ok(**settings):
    record = run_probe(LaunchConfig(model="sample:mlp", steady=1, **settings))
    assert record.status is RunStatus.OK, record.headline
    return dict(record.settings.described)


@pytest.mark.slow  # real child processes; make test keeps to its 6 minutes, CI runs this tier too
def test_cpu_settings_are_read_back_in_the_child():
    applied = run_ok(intra=2, inter=1, xla_auto=True, jit_compile=True, onednn=False, log_level=2,
                     extra_env={"TFLAUNCH_TEST_VAR": "hello", "TF_NUM_INTEROP_THREADS": "1"})
    assert applied["intra_op_threads"] == 2
    assert applied["inter_op_threads"] == 1
    assert applied["xla_flags"] == "--tf_xla_auto_jit=2 --tf_xla_cpu_global_jit"
    assert applied["jit_compile"] is True
    assert applied["onednn"] == "0"
    assert applied["log_level"] == "2"
    assert applied["extra_env"] == {"TFLAUNCH_TEST_VAR": "hello", "TF_NUM_INTEROP_THREADS": "1"}


def test_defaults_are_reported_as_defaults():
    applied = run_ok()
    assert applied["intra_op_threads"] == 0 and applied["inter_op_threads"] == 0
    assert applied["xla_flags"] == "none" and applied["jit_compile"] is False
    assert applied["onednn"] == "default"
    assert "/device:CPU:0" in applied["logical_devices"]


@pytest.mark.slow  # real child processes; make test keeps to its 6 minutes, CI runs this tier too
def test_gpu_settings_say_no_gpu_honestly_without_one():
    applied = run_ok(visible_gpus=(0,), memory_growth=True)
    assert applied["gpus"] == []
    assert applied["visible_gpus"] == applied["memory_growth"] == "no GPU"
    assert run_ok(memory_limit_mb=1024)["memory_limit_mb"] == "no GPU"


@pytest.mark.slow  # real child processes; make test keeps to its 6 minutes, CI runs this tier too
def test_onednn_on_is_passed_through():
    assert run_ok(onednn=True)["onednn"] == "1"


@pytest.mark.slow  # real child processes; make test keeps to its 6 minutes, CI runs this tier too
def test_batch_size_shapes_the_generated_inputs():
    record = run_probe(LaunchConfig(model="sample:mlp", steady=1, batch=7))
    assert record.status is RunStatus.OK
    assert record.model.inputs[0].shape == (None, 784)  # the signature leaves batch open
    assert record.model.inputs[0].fed_shape == (7, 784)
