"""The anatomy of real first steps and a real first call: TensorFlow's profiler in a real
child (an extra run: ProbeSession(anatomy=True)), its trace read there, the parts here.

What must hold on this CPU: the parts name at least 90 % of the first step of a fit on
tf.data, a GradientTape loop (in a tf.function) and a custom train_step, and the parts plus
"not attributed" add up to the anatomy run's own first step. A model subject goes the same
way, with the first call as its window. History keeps the anatomy.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import pytest

from tflaunch.core.run.anatomy import attributed_share
from tflaunch.core.run.driver import run_sessions
from tflaunch.core.run.record import RunRecord, RunStatus
from tflaunch.core.run.session import ANATOMY_NOTE, ProbeSession
from tflaunch.core.settings.config import LaunchConfig
from tflaunch.core.store.history import History

PROGRAMS = Path(__file__).parent / "programs"


def anatomy_of(config: LaunchConfig) -> RunRecord:
    return run_sessions([ProbeSession(config, anatomy=True)])[0]


def adds_up(record: RunRecord, phase: str) -> None:
    anatomy = record.anatomy
    assert record.status is RunStatus.OK, record.headline
    assert anatomy is not None and anatomy.error is None, anatomy
    assert anatomy.phase == phase
    parts = math.fsum(p.seconds for p in anatomy.parts) + anatomy.not_attributed
    assert parts == pytest.approx(anatomy.window, abs=1e-6)
    # The window is the phase as the run reported it (one clock, the child's wall clock).
    assert anatomy.window == pytest.approx(record.phases[phase].duration, abs=2e-3)
    assert ANATOMY_NOTE in record.notes


# fit on tf.data in every tier; the custom loop and train_step (the same attribution on other
# programs, 10 s each) in the slow one.
@pytest.mark.parametrize("program", ["fit_tfdata.py", pytest.param("gradient_tape_function.py", marks=pytest.mark.slow),
                                     pytest.param("custom_train_step.py", marks=pytest.mark.slow)])
@pytest.mark.slow  # real child processes; make test keeps to its 6 minutes, CI runs this tier too
def test_the_first_step_of_a_program_is_attributed(program: str) -> None:
    config = LaunchConfig(program=("python", program, "--steps", "4"), workdir=str(PROGRAMS), until="first_step",
                          steady=0, log_level=2, timeout=180)
    record = anatomy_of(config)
    adds_up(record, "first_step")
    assert record.anatomy is not None
    share = attributed_share(record.anatomy)
    assert share is not None and share >= 0.9, record.anatomy
    assert {"tracing", "instantiation", "execution"} <= {p.key for p in record.anatomy.parts}


@pytest.mark.slow  # real child processes; make test keeps to its 6 minutes, CI runs this tier too
def test_the_first_call_of_a_model_is_attributed_and_kept_in_history(tmp_path: Path) -> None:
    record = anatomy_of(LaunchConfig(model="sample:mlp", steady=2, log_level=2, timeout=180))
    adds_up(record, "first")
    history = History(tmp_path / "runs.sqlite")
    run_id = history.record(record, "cli")
    kept = history.load(run_id)
    assert kept.anatomy == record.anatomy
    assert kept.to_dict()["anatomy"]["run_id"] == run_id


@pytest.mark.parametrize("grappler", [pytest.param("light", marks=pytest.mark.slow), "off"])  # one read back a tier
@pytest.mark.slow  # real child processes; make test keeps to its 6 minutes, CI runs this tier too
def test_the_grappler_setting_is_applied_and_read_back(grappler: str) -> None:
    """One meaning: tf.config.optimizer.set_experimental_options, by apply_tf_config (the probe's
    and the launch hook's), read back inside the child."""
    from tflaunch.core.probe.tf_setup import GRAPPLER_OPTIONS

    record = run_sessions([ProbeSession(LaunchConfig(model="sample:mlp", steady=1, log_level=2, grappler=grappler))])[0]
    assert record.status is RunStatus.OK, record.headline
    applied = record.settings.described["grappler"]
    assert {k: applied[k] for k in GRAPPLER_OPTIONS[grappler]} == GRAPPLER_OPTIONS[grappler]


@pytest.mark.slow  # real child processes; make test keeps to its 6 minutes, CI runs this tier too
def test_bench_anatomy_prints_the_parts_under_the_first_step_beside_the_unprofiled_one(tmp_path: Path) -> None:
    """`tflaunch bench --anatomy --until first_step -- python train.py`, as a user types it: the
    measured run without the profiler, then the extra run; its parts under First step, its JSON."""
    from tests.builders import tflaunch

    argv = ("bench", "--anatomy", "--until", "first_step", "--steady", "0", "--log-level", "2", "--cwd",
            str(PROGRAMS))
    program = ("--", "python", "custom_train_step.py", "--steps", "4")
    done = tflaunch(*argv, *program, env={**os.environ, "TFLAUNCH_DATA_DIR": str(tmp_path)})
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    step = next(i for i, line in enumerate(lines) if line.startswith("First step"))
    assert any(line.startswith("  · tracing") for line in lines[step:step + 12]), done.stdout
    assert any(line.startswith("  · not attributed") for line in lines[step:step + 12]), done.stdout
    source = next(line for line in lines if line.startswith("Anatomy of the first step from run #2"))
    assert "without the profiler" in source and "% attributed" in source


@pytest.mark.slow  # the same two runs as the text test above; this guards the JSON's shape
def test_bench_anatomy_json_keeps_the_profiler_off_the_measured_run() -> None:
    from tests.builders import tflaunch

    argv = ("bench", "--anatomy", "--until", "first_step", "--steady", "0", "--log-level", "2", "--cwd",
            str(PROGRAMS))
    program = ("--", "python", "custom_train_step.py", "--steps", "4")
    done = tflaunch(*argv, "--json", "--no-history", *program)
    data = json.loads(done.stdout)
    assert data["anatomy"]["phase"] == "first_step" and data["anatomy_problem"] is None
    assert data["runs"][0].get("anatomy") is None  # the measured run never had the profiler on
    assert data["anatomy_run"]["anatomy"]["window"] == data["anatomy"]["window"]


HOSTILE_PROGRAM = '''
import glob, os, socket, tempfile
import keras
import numpy as np
import tensorflow as tf

# Plant a trace where the anatomy's profiler writes (its folder, found as any program could),
# named to sort after the real one: the name-sorted last file was read, whole.
for folder in glob.glob(os.path.join(os.environ.get("TFLAUNCH_ANATOMY_DIR", "/nonexistent"), "trace-*")) + \\
        glob.glob(os.path.join(tempfile.gettempdir(), "tflaunch-anatomy-*")):
    run = os.path.join(folder, "plugins", "profile", "9999_12_31_23_59_59")
    os.makedirs(run, exist_ok=True)
    with open(os.path.join(run, socket.gethostname() + ".xplane.pb"), "wb") as f:
        f.write(os.urandom(1 << 20) * 8)
try:
    tf.profiler.experimental.start(tempfile.mkdtemp())
    print("OWN PROFILER STARTED", flush=True)
except Exception as exc:
    print("OWN PROFILER REFUSED:", exc, flush=True)
model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(2)])
model.compile(optimizer="sgd", loss="mse")
model.fit(np.ones((8, 4), "float32"), np.ones((8, 2), "float32"), epochs=1, batch_size=4, verbose=0)
'''


@pytest.mark.slow  # real child processes; make test keeps to its 6 minutes, CI runs this tier too
def test_the_anatomy_reads_its_own_trace_names_its_profiler_and_leaves_no_folder(tmp_path: Path) -> None:
    """A program planted a trace in the anatomy's log folder (it was read whole: 1 GiB took
    1.63 GB), started its own profiler ("Another profiler is running", naming nobody), and a
    folder was left in the temporary folder per run (issue 43, item 5)."""
    import tempfile

    (tmp_path / "train.py").write_text(HOSTILE_PROGRAM)
    before = set(Path(tempfile.gettempdir()).glob("tflaunch-anatomy-*"))
    config = LaunchConfig(program=("python", "train.py"), workdir=str(tmp_path), until="first_step", steady=0,
                          log_level=2, timeout=180)
    record = anatomy_of(config)
    assert record.status is RunStatus.OK, record.headline
    adds_up(record, "first_step")
    assert "OWN PROFILER REFUSED: Another profiler is running: tflaunch's" in "\n".join(record.stderr_tail), \
        record.stderr_tail
    assert set(Path(tempfile.gettempdir()).glob("tflaunch-anatomy-*")) == before, "no folder left behind"
