"""Keras 2 observed as Keras 3 is (issue 40): real programs of tests/stacks/programs, written with
`tf.keras` only, run under the launch hook on this venv's TensorFlow with tf-keras
(TF_USE_LEGACY_KERAS=1, read inside `import tensorflow`), stopped at their first step, which
must agree with the program's own clock. Also here: what cannot be observed is refused at its
import, evaluate is an inference, and a program's settings are read back.
`make test-stacks` runs the same programs on TF 2.13-2.15's own Keras 2 and on Python 3.8-3.13."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tflaunch.core.run.driver import run_sessions
from tflaunch.core.run.launch_check import launch_check
from tflaunch.core.run.record import PhaseState, RunRecord, RunStatus
from tflaunch.core.run.session import ProbeSession
from tflaunch.core.settings.config import LaunchConfig

from .own_clock import truth

PROGRAMS = Path(__file__).parent / "stacks" / "programs"
LEGACY = {"TF_USE_LEGACY_KERAS": "1"}


def measure(program: str, tmp: Path, until: str = "first_step", env: dict[str, str] | None = None,
            **settings: object) -> RunRecord:
    for source in PROGRAMS.glob("*.py"):
        (tmp / source.name).write_bytes(source.read_bytes())
    config = LaunchConfig(program=("python", program), until=until, steady=3, timeout=120, workdir=str(tmp),
                          log_level=2, extra_env=dict(env or {}), **settings)  # type: ignore[arg-type]
    assert not launch_check(config, known=None)
    return run_sessions([ProbeSession(config)])[0]


def reached(record: RunRecord) -> list[str]:
    return [n for n, p in record.phases.items() if p.state is PhaseState.DONE]


def agrees(record: RunRecord, key: str) -> bool:
    """The ready point is where the program's own clock put it (1 % or 50 ms on a busy machine;
    the stack tier holds 1 % or 20 ms)."""
    own = truth(record, key)
    assert record.ready_at is not None
    return abs(record.ready_at - own) <= max(0.01 * (own - record.launched_at), 0.05)


@pytest.mark.parametrize("program", ["fit_tfdata.py", pytest.param("tape_loop.py", marks=pytest.mark.slow)])
def test_a_tf_keras_program_is_seen_to_its_first_step(program: str, tmp_path: Path) -> None:
    record = measure(program, tmp_path, env=LEGACY)
    assert record.status is RunStatus.OK, record.headline
    assert record.stopped_at_ready
    names = reached(record)
    assert {"import", "build", "first_step", "steady"} <= set(names), names
    assert "tf-keras" in (record.environment.keras or ""), record.environment
    assert agrees(record, "first_step_end")


RESOLVE = """
import keras
from tflaunch.core.probe.observer import keras_frameworks
found = keras_frameworks.resolve("keras", keras)
assert found is not None and found.major == 3 and found.apply == "apply" and found.unobservable() is None
assert found.model is keras.Model and found.layer is keras.layers.Layer
reason = found._replace(backend="jax").unobservable()
assert reason is not None and "jax backend" in reason and found.name in reason, reason
print("resolved", found.name)
"""


@pytest.mark.slow  # real child processes; make test keeps to its 6 minutes, CI runs this tier too
def test_a_keras_on_another_backend_is_said_unobservable_by_its_own_classes() -> None:
    # The Keras 3 of this venv, resolved from its public names as the hooks resolve it (in a
    # child: this process must not import TensorFlow); its other backends (jax, torch, numpy)
    # need packages this venv has not, so the verdict is asked of it.
    done = subprocess.run([sys.executable, "-c", RESOLVE], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "resolved Keras 3." in done.stdout, done.stderr[-2000:]


def test_a_run_the_observer_refused_ends_with_its_words_not_a_guess() -> None:
    from tflaunch.core.run.events import EventParser, encode

    record = RunRecord(LaunchConfig(program=("python", "train.py")))
    parser = EventParser()
    now = record.launched_at
    for line in (encode("hello", "spawn", now, pid=1, process_age=0.01, python="3.11"),
                 encode("phase_start", "import", now + 0.1),
                 encode("phase_end", "import", now + 2.0, duration=1.9, rss=None, peak_rss=None, start=now + 0.1),
                 encode("error", "import", now + 2.0, kind="not_observable", detail="",
                        message="tflaunch cannot observe this program's first step: Keras runs on its jax backend.")):
        event = parser.parse(line)
        assert event is not None
        record.apply(event)
    record.finish(3)
    assert record.status is RunStatus.FAILED
    assert record.failure is not None and record.failure.message.startswith("tflaunch cannot observe")


@pytest.mark.slow  # a second real program; the words are the record's, tested with fit_tfdata's
def test_a_program_that_ran_to_its_end_unseen_is_not_said_to_have_stopped_before_a_step(tmp_path: Path) -> None:
    # A raw TensorFlow loop: gradients applied by hand, no Keras optimizer, so no step tflaunch knows.
    (tmp_path / "raw_loop.py").write_text(
        "import tensorflow as tf\nw = tf.Variable(1.0)\n"
        "for _ in range(3):\n    with tf.GradientTape() as t:\n        loss = w * w\n"
        "    w.assign_sub(0.1 * t.gradient(loss, w))\nprint('trained', round(float(w), 3))\n")
    record = measure("raw_loop.py", tmp_path)
    assert record.status is RunStatus.FAILED and record.failure is not None
    assert "before its first training step" not in record.failure.message
    assert "saw no training step" in record.failure.message and "mark:NAME" in record.failure.message


@pytest.mark.slow  # real child processes; make test keeps to its 6 minutes, CI runs this tier too
def test_evaluate_is_a_serving_scripts_first_inference(tmp_path: Path) -> None:
    record = measure("evaluate_only.py", tmp_path, until="first_inference")
    assert record.status is RunStatus.OK, record.headline
    assert "first" in reached(record) and "first_step" not in reached(record)
    assert agrees(record, "first_inference_end")


@pytest.mark.slow  # real child processes; make test keeps to its 6 minutes, CI runs this tier too
def test_a_programs_settings_are_read_back_from_its_tensorflow(tmp_path: Path) -> None:
    record = measure("fit_tfdata.py", tmp_path, intra=1, inter=2)
    assert record.status is RunStatus.OK, record.headline
    applied = record.settings.described
    assert applied.get("intra_op_threads") == 1 and applied.get("inter_op_threads") == 2, applied
    assert "jit_compile" not in record.settings.described, "no launch compiles a program's model"
    record = measure("fit_tfdata.py", tmp_path, until="exit", intra=1)
    assert record.settings.described.get("intra_op_threads") == 1, "read back at the exit too"


def test_keras_told_to_run_on_another_backend_is_refused_before_the_launch(tmp_path: Path) -> None:
    config = LaunchConfig(program=("python", "train.py"), workdir=str(tmp_path), extra_env={"KERAS_BACKEND": "jax"})
    (tmp_path / "train.py").write_text("import keras\n")
    problems = launch_check(config, known=None)
    assert [p.field for p in problems] == ["until"], problems
    assert "jax backend" in problems[0].message and "--until exit" in problems[0].message
    assert not launch_check(LaunchConfig(program=("python", "train.py"), workdir=str(tmp_path), until="exit",
                                         extra_env={"KERAS_BACKEND": "jax"}), known=None)
    home = tmp_path / "keras_home"
    home.mkdir()
    (home / "keras.json").write_text('{"backend": "torch"}')
    config = LaunchConfig(program=("python", "train.py"), workdir=str(tmp_path), extra_env={"KERAS_HOME": str(home)})
    assert "torch backend" in launch_check(config, known=None)[0].message


@pytest.mark.slow  # starts a warm server (an import of TensorFlow) before its run
def test_a_warm_program_run_to_its_exit_reads_its_settings_back_too(tmp_path: Path) -> None:
    """A warm child registered no read-back at its exit: a cold run to exit had its settings,
    a warm one `{}`."""
    for source in PROGRAMS.glob("*.py"):
        (tmp_path / source.name).write_bytes(source.read_bytes())
    done = subprocess.run([sys.executable, "-m", "tflaunch.core.cli.main", "bench", "--json", "--no-history", "--warm",
                           "--until", "exit", "--intra", "1", "--cwd", str(tmp_path), "--", "python", "fit_tfdata.py"],
                          capture_output=True, text=True, timeout=300)
    run = json.loads(done.stdout)["runs"][0]
    assert run["status"] == "ok" and run["warm_start"]["started"] == "warm", run.get("failure")
    assert run["settings"].get("intra_op_threads") == 1, run["settings"]
    # What watching cost a warm child: the hooks put in after the fork, and the calls it watched.
    assert run["watching"]["setup"] > 0 and run["watching"]["calls"] > 0, run["watching"]
