"""Programs a tester wrote from outside, and the cases that went wrong with them once:
each stays here (a distribution strategy's fit, steady after a mark, two optimizers, a
span named like a built-in phase, --until spelled as the program spells it, hints)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tflaunch.core.run.record import RunStatus

from .test_program_subject import measure, tflaunch

STRATEGY = """
import numpy as np, tensorflow as tf, keras
strategy = tf.distribute.MirroredStrategy(["/cpu:0"])
with strategy.scope():
    model = keras.Sequential([keras.Input((8,)), keras.layers.Dense(16), keras.layers.Dense(1)])
    model.compile("adam", "mse")
x = np.random.rand(4096, 8).astype("float32")
model.fit(x, x[:, :1], batch_size=16, epochs=1, verbose=0)
"""

SERVING_AFTER_MARK = """
import time, numpy as np, keras
from tflaunch_mark import mark
model = keras.Sequential([keras.Input((8,)), keras.layers.Dense(4)])
x = np.zeros((1, 8), "float32")
mark("Serving Ready")
for _ in range(200):
    model(x)
    time.sleep(0.002)
"""

IDLE_AFTER_MARK = """
import time
from tflaunch_mark import mark
mark("up")
time.sleep(60)
"""

TWO_OPTIMIZERS = """
import time, tensorflow as tf, keras
g, d = keras.layers.Dense(4), keras.layers.Dense(1)
g.build((None, 4)); d.build((None, 4))
opt_g, opt_d = keras.optimizers.Adam(), keras.optimizers.Adam()
x = tf.zeros((8, 4))
for _ in range(200):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(d(x))
    opt_d.apply_gradients(zip(tape.gradient(loss, d.trainable_variables), d.trainable_variables))
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(d(g(x)))
    opt_g.apply_gradients(zip(tape.gradient(loss, g.trainable_variables), g.trainable_variables))
    time.sleep(0.02)  # the rest of an iteration: steady state is from one iteration's end to the next
"""


def _program(tmp_path: Path, source: str) -> str:
    path = tmp_path / "program.py"
    path.write_text(source)
    return str(path)


@pytest.mark.slow  # real child processes; make test keeps to its 6 minutes, CI runs this tier too
def test_fit_under_a_distribution_strategy_has_no_first_inference(tmp_path: Path) -> None:
    record = measure(_program(tmp_path, STRATEGY), steady=3, workdir=tmp_path)
    assert record.status is RunStatus.OK, record.headline
    assert "first_step" in record.phases and "first" not in record.phases, list(record.phases)


@pytest.mark.slow  # real child processes; make test keeps to its 6 minutes, CI runs this tier too
def test_steady_after_a_mark_counts_the_calls_that_follow_it(tmp_path: Path) -> None:
    record = measure(_program(tmp_path, SERVING_AFTER_MARK), until="mark:Serving Ready", steady=10,
                     workdir=tmp_path)
    assert record.status is RunStatus.OK and record.stopped_at_ready, record.headline
    assert record.config.until == "mark:serving_ready"  # spelled as the program's mark() spells it
    assert record.latency["n"] == 10 and record.latency["median"] >= 0.002


def test_a_program_idle_after_its_mark_is_stopped_without_a_steady_row(tmp_path: Path) -> None:
    started = time.monotonic()
    record = measure(_program(tmp_path, IDLE_AFTER_MARK), until="mark:up", steady=10, workdir=tmp_path)
    assert record.status is RunStatus.OK and record.stopped_at_ready, record.headline
    assert "steady" not in record.phases  # absent, never zero
    assert time.monotonic() - started < 20


@pytest.mark.slow  # real child processes; make test keeps to its 6 minutes, CI runs this tier too
def test_two_optimizers_in_one_iteration_are_one_step(tmp_path: Path) -> None:
    record = measure(_program(tmp_path, TWO_OPTIMIZERS), steady=10, workdir=tmp_path)
    assert record.status is RunStatus.OK, record.headline
    assert record.latency["n"] == 10
    assert record.latency["median"] >= 0.02  # an iteration, its sleep included; not one optimizer's apply


def test_a_span_named_like_a_built_in_phase_is_kept_apart(tmp_path: Path) -> None:
    source = ("import time\nfrom tflaunch_mark import mark\n"
              "with mark('data'):\n    time.sleep(0.1)\nwith mark('load'):\n    time.sleep(0.1)\n")
    record = measure(_program(tmp_path, source), until="exit", workdir=tmp_path)
    assert {"mark_data", "mark_load"} <= set(record.phases) and "data" not in record.phases


def test_until_takes_a_mark_as_the_program_spells_it_and_says_what_went_wrong() -> None:
    from tflaunch.core.phases import normal_until

    assert normal_until("mark:Ready-To-Train") == "mark:ready_to_train"
    assert normal_until("mark:data") == "mark:mark_data" and normal_until("first_step") == "first_step"
    done = tflaunch("bench", "--until", "mark:Ready-To-Train", "--timeout", "10", "--", "python", "no_tensorflow.py")
    assert done.returncode == 1
    assert "It made no mark at all" in done.stderr.strip().splitlines()[-1]


@pytest.mark.slow  # real child processes; make test keeps to its 6 minutes, CI runs this tier too
def test_a_training_program_measured_to_its_first_inference_is_told_what_to_use() -> None:
    record = measure("fit_tfdata.py", "--steps", "20", until="first_inference")
    assert record.status is RunStatus.FAILED and record.failure is not None
    assert "measure it to --until first_step" in record.failure.message
    assert record.status_line.startswith("Failed after")  # its last phase had ended: not "in"


