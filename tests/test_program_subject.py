"""A program as a run's subject: real TensorFlow programs (tests/programs/) launched under the
launch hook, their phases observed on the private channel, stopped at their ready point.

Each case asserts the order of the phases the program reached and figures a stopwatch would
accept; the zoo's slower members are in the slow tier (make test-slow).
"""

from __future__ import annotations

import os
import re
import stat
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from tflaunch.core.phases import merged_order
from tflaunch.core.run.driver import run_sessions
from tflaunch.core.run.events import EventParser, Mark, PhaseEnd, encode
from tflaunch.core.run.launch_check import launch_check
from tflaunch.core.run.record import PhaseState, RunRecord, RunStatus
from tflaunch.core.run.session import ProbeSession
from tflaunch.core.settings.config import LaunchConfig
from tflaunch.core.store.history import History

PROGRAMS = Path(__file__).parent / "programs"
START = ("spawn", "import")


def measure(*argv: str, until: str = "first_step", steady: int = 5, timeout: float = 120,
            workdir: Path = PROGRAMS) -> RunRecord:
    config = LaunchConfig(program=("python", *argv), until=until, steady=steady, timeout=timeout,
                          workdir=str(workdir), log_level=2)
    session = ProbeSession(config)
    problems = launch_check(config, known=None)
    if problems:
        session.refuse(problems[0].field, problems[0].message)
    return run_sessions([session])[0]


def reached(record: RunRecord) -> list[str]:
    return [n for n, p in record.phases.items() if p.state is PhaseState.DONE]


def in_order(names: list[str], *expected: str) -> bool:
    """`expected` appear in `names` in this order (others may come between)."""
    at = 0
    for name in names:
        if at < len(expected) and name == expected[at]:
            at += 1
    return at == len(expected)


def nothing_left(record: RunRecord) -> bool:
    marker_env = [p for p in psutil.process_iter(["environ"])
                  if (p.info.get("environ") or {}).get("TFLAUNCH_RUN") is not None
                  and p.pid != os.getpid() and p.pid == record.pid]
    return not marker_env


def truth(record: RunRecord, key: str) -> float | None:
    """The program's own clock: the TRUTH line it wrote to stderr."""
    for line in record.stderr_tail:
        match = re.search(rf"TRUTH {key}=([0-9.]+)", line)
        if match:
            return float(match.group(1))
    return None


def test_a_keras_fit_on_a_tf_data_pipeline_is_seen_phase_by_phase_and_stopped_at_ready() -> None:
    record = measure("fit_tfdata.py", "--steps", "400")
    assert record.status is RunStatus.OK, record.headline
    assert record.stopped_at_ready, "tflaunch, not the program, ended it"
    names = reached(record)
    # fit's first step begins when fit is called; the pipeline's set-up runs inside it.
    assert in_order(names, *START, "build", "compile", "first_step", "data", "steady"), names
    data, step = record.phases["data"], record.phases["first_step"]
    assert data.started is not None and step.started is not None and data.duration is not None
    assert step.started <= data.started and data.started + data.duration <= step.started + (step.duration or 0)
    assert "first" not in names  # no inference outside training
    assert record.latency["n"] == 5 and 0 < record.latency["median"] < record.phases["first_step"].duration
    # The ready point agrees with the program's own clock (it wrote when its first batch ended).
    own = truth(record, "first_step_end")
    assert own is not None and record.ready_at is not None
    assert abs(record.ready_at - own) < max(0.01 * (own - record.launched_at), 0.05)
    assert 0 <= record.other_time < record.time_to_ready
    assert record.status_line.startswith("Ready in") and "stopped" in record.status_line
    # What watching cost it, by its own clock: the hook's start, and fit's calls it watched.
    cost = record.watching
    assert cost is not None and cost.setup > 0 and cost.hooks > 0 and cost.calls > 0, cost
    assert any(n.startswith("Watching took") for n in record.notes), record.notes
    # Described as a model's run is, read after its first step: the GPUs TensorFlow used (none
    # here, said because TensorFlow said so), the CPU, the build.
    env = record.environment
    assert env.gpus == () and env.cpu and env.capabilities is not None and env.tensorflow, env
    assert env.cpu in record.environment_line and record.environment_line.endswith("no GPU")
    assert nothing_left(record)


def test_a_custom_gradient_tape_loop_reports_its_first_step_and_data(tmp_path: Path) -> None:
    record = measure("gradient_tape.py", "--steps", "200")
    assert record.status is RunStatus.OK, record.headline
    names = reached(record)
    assert in_order(names, *START, "build", "data", "first_step", "steady"), names
    assert record.phases["data"].duration is not None


@pytest.mark.slow  # real child processes; make test keeps to its 6 minutes, CI runs this tier too
def test_a_serving_script_is_ready_at_its_first_signature_call(tmp_path: Path) -> None:
    measure("serve_savedmodel.py", "--dir", str(tmp_path), "--steps", "1", until="exit")  # exports the model
    record = measure("serve_savedmodel.py", "--dir", str(tmp_path), "--steps", "200", until="first_inference")
    assert record.status is RunStatus.OK, record.headline
    names = reached(record)
    assert in_order(names, *START, "load", "first", "steady"), names
    assert "first_step" not in names


# A crash in the first step in the slow tier: the phase named is the same rule as in build.
@pytest.mark.parametrize(("at", "phase"), [("build", "build"),
                                           pytest.param("first_step", "first_step", marks=pytest.mark.slow)])
def test_a_program_that_crashes_names_the_phase_and_its_error(at: str, phase: str) -> None:
    record = measure("crash_at.py", "--at", at)
    assert record.status is RunStatus.FAILED
    assert record.failure is not None and "crash_at" in record.failure.message
    assert "exited with code 1 before its first training step" in record.failure.message
    assert phase in record.phases
    assert nothing_left(record)


def test_a_program_that_never_imports_tensorflow_says_so() -> None:
    record = measure("no_tensorflow.py", until="exit")
    assert record.status is RunStatus.OK, record.headline
    assert "import" not in record.phases  # absent, never zero
    assert any("never imported TensorFlow" in note for note in record.notes)
    assert record.time_to_ready is not None and record.time_to_ready > 0.3


def test_a_program_that_exits_before_its_ready_point_names_what_it_reached_last() -> None:
    record = measure("crash_at.py", "--exit-early")
    assert record.status is RunStatus.FAILED
    assert record.failure is not None
    assert "exited with code 3" in record.failure.message
    assert "the last phase it reached was Import" in record.failure.message


def test_a_program_that_never_gets_there_times_out_naming_the_last_phase() -> None:
    started = time.monotonic()
    record = measure("no_tensorflow.py", "--steps", "100000", until="first_step", timeout=1.5)
    assert time.monotonic() - started < 30
    assert record.status is RunStatus.TIMED_OUT
    assert record.failure is not None and "before its first training step" in record.failure.message
    assert "never imported TensorFlow" in record.failure.message
    assert nothing_left(record)


def test_a_mark_is_a_ready_point_and_a_span(tmp_path: Path) -> None:
    script = tmp_path / "marked.py"
    script.write_text("import time\n"
                      "try:\n    from tflaunch_mark import mark\n"
                      "except ImportError:\n    def mark(name): import contextlib; return contextlib.nullcontext()\n"
                      "with mark('Restore weights'):\n    time.sleep(0.2)\n"
                      "mark('serving')\ntime.sleep(30)\n")
    record = measure(str(script), until="mark:serving", workdir=tmp_path)
    assert record.status is RunStatus.OK and record.stopped_at_ready, record.headline
    assert [name for name, _ in record.marks] == ["restore_weights", "serving"]
    assert record.phases["restore_weights"].duration == pytest.approx(0.2, abs=0.1)
    assert record.time_to_ready is not None and record.time_to_ready < 10


def test_the_guard_makes_marks_harmless_without_tflaunch(tmp_path: Path) -> None:
    script = tmp_path / "plain.py"
    script.write_text("try:\n    from tflaunch_mark import mark\n"
                      "except ImportError:\n    def mark(name): import contextlib; return contextlib.nullcontext()\n"
                      "with mark('x'):\n    pass\nmark('y')\nprint('fine')\n")
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.strip() == "fine"


def test_a_command_that_is_not_there_or_not_executable_is_refused_before_launch(tmp_path: Path) -> None:
    missing = launch_check(LaunchConfig(program=("python", "nowhere.py"), workdir=str(tmp_path)), known=None)
    assert missing and missing[0].field == "program" and "nowhere.py was not found" in missing[0].message
    plain = tmp_path / "tool.sh"
    plain.write_text("#!/bin/sh\n")
    plain.chmod(stat.S_IRUSR | stat.S_IWUSR)
    refused = launch_check(LaunchConfig(program=(str(plain),)), known=None)
    assert refused and "not executable" in refused[0].message and "chmod +x" in refused[0].message
    unknown = launch_check(LaunchConfig(program=("no-such-command-tflaunch",)), known=None)
    assert unknown and "not found on PATH" in unknown[0].message


def test_unknown_phase_names_are_data_and_malformed_ones_are_skipped() -> None:
    parser = EventParser()
    event = parser.parse(encode("phase_end", "warm_cache", time.time(), duration=0.5, rss=None, peak_rss=None))
    assert isinstance(event, PhaseEnd) and event.phase == "warm_cache"
    assert isinstance(parser.parse(encode("mark", "load", time.time(), name="restore")), Mark)
    for bad in ("Bad Name", "", "9lives", "x" * 41):
        assert parser.parse(encode("phase_end", bad, time.time(), duration=0.1, rss=None, peak_rss=None)) is None
    assert parser.malformed == 4


def test_a_program_s_phases_and_marks_survive_the_history(tmp_path: Path) -> None:
    record = measure("no_tensorflow.py", until="exit")
    record.marks.append(("done", 0.4))
    history = History(tmp_path / "h.sqlite3")
    run_id = history.record(record, "cli")
    back = history.load(run_id)
    assert back.is_program and back.config.program == record.config.program
    assert back.phase_order == record.phase_order and back.marks == record.marks
    assert back.time_to_ready == pytest.approx(record.time_to_ready)


def test_rows_of_runs_keep_each_run_s_order_and_place_known_names_by_rank() -> None:
    model = ["spawn", "import", "devices", "load", "trace", "first", "steady"]
    program = ["spawn", "import", "restore", "devices", "build", "compile", "data", "first_step", "steady"]
    rows = merged_order([model, program])
    assert rows.index("restore") == rows.index("import") + 1
    for a, b in (("devices", "build"), ("build", "first_step"), ("trace", "first_step"), ("first", "steady")):
        assert rows.index(a) < rows.index(b), rows
    assert merged_order([program]) == program


@pytest.mark.slow
@pytest.mark.parametrize("program", ["gradient_tape_function.py", "fit_jit.py", "fit_steps_per_execution.py",
                                     "data_workers.py", "custom_train_step.py", "mark_spans.py"])
def test_the_zoo_s_training_programs_reach_their_first_step(program: str) -> None:
    record = measure(program, "--steps", "400")
    assert record.status is RunStatus.OK, record.headline
    names = reached(record)
    assert in_order(names, *START, "first_step", "steady"), names
    own = truth(record, "first_step_end")
    assert own is not None and record.ready_at is not None and record.ready_at <= own + 0.05


@pytest.mark.slow
def test_data_workers_are_not_counted_as_the_program() -> None:
    """Spawned workers inherit the hook but not the channel: one set of phases, the parent's."""
    record = measure("data_workers.py", "--steps", "400")
    assert record.status is RunStatus.OK, record.headline
    assert list(record.phases).count("import") == 1 and record.pid is not None
    assert record.malformed_lines == 0


@pytest.mark.slow
def test_a_program_s_own_spans_and_points_are_shown() -> None:
    record = measure("mark_spans.py", "--steps", "400")
    assert record.status is RunStatus.OK, record.headline
    assert "restore" in record.phases and [n for n, _ in record.marks][:2] == ["restore", "warmup_done"]


@pytest.mark.slow
def test_a_checkpoint_restore_is_the_load_phase(tmp_path: Path) -> None:
    measure("restore_then_fit.py", "--dir", str(tmp_path), "--steps", "10", until="exit")  # writes it
    record = measure("restore_then_fit.py", "--dir", str(tmp_path), "--steps", "400")
    assert record.status is RunStatus.OK, record.headline
    assert in_order(reached(record), *START, "load", "first_step"), reached(record)


@pytest.mark.slow
def test_a_keras_file_loaded_and_called_is_load_then_first_inference(tmp_path: Path) -> None:
    measure("serve_savedmodel.py", "--dir", str(tmp_path), "--keras-load", "--steps", "1", until="exit")
    record = measure("serve_savedmodel.py", "--dir", str(tmp_path), "--keras-load", "--steps", "200",
                     until="first_inference")
    assert record.status is RunStatus.OK, record.headline
    assert in_order(reached(record), *START, "load", "first", "steady"), reached(record)


def _folded(config: LaunchConfig, lines: list[tuple[str, str, float, dict]]) -> RunRecord:
    """A record folded from protocol lines, as a session folds a child's (no process)."""
    record = RunRecord(config, launched_at=1000.0)
    parser = EventParser()
    for event, phase, ts, fields in lines:
        parsed = parser.parse(encode(event, phase, ts, **fields))
        assert parsed is not None, (event, phase, fields)
        record.apply(parsed)
    return record


def _end(duration: float) -> dict:
    return {"duration": duration, "rss": 1 << 20, "peak_rss": 1 << 20}


def test_a_model_run_and_a_program_run_line_up_by_phase_name() -> None:
    from tflaunch.core.report.compare import deltas, rows_for
    from tflaunch.core.report.review import comparison_review

    model = _folded(LaunchConfig(steady=2), [
        ("phase_end", "spawn", 1000.05, _end(0.05)), ("phase_end", "import", 1001.5, _end(1.4)),
        ("phase_end", "devices", 1001.6, _end(0.1)), ("phase_end", "load", 1001.8, _end(0.2)),
        ("phase_end", "trace", 1001.9, _end(0.1)), ("phase_end", "first", 1002.0, _end(0.1)),
        ("phase_end", "steady", 1002.1, {**_end(0.1), "latency": {"n": 2, "median": 0.05}})])
    model.described = True
    model.finish(0)
    program = _folded(LaunchConfig(program=("python", "train.py"), steady=2), [
        ("phase_end", "spawn", 1000.05, _end(0.05)), ("phase_end", "import", 1001.6, _end(1.5)),
        ("phase_end", "build", 1001.8, _end(0.1)), ("phase_end", "first_step", 1002.5, _end(0.6)),
        ("phase_end", "steady", 1002.6, {**_end(0.1), "latency": {"n": 2, "median": 0.04}})])
    program.stopped_at_ready = True
    program.finish(None, 15)
    assert model.status is RunStatus.OK and program.status is RunStatus.OK, program.headline
    rows = rows_for([model, program])
    assert rows.index("import") < rows.index("build") < rows.index("first_step") < rows.index("ready")
    assert "trace" in rows and "load" in rows
    table = deltas([model, program])
    assert table[1]["import"].difference == pytest.approx(0.1)
    assert table[1]["trace"].difference is None and table[0]["first_step"].value is None  # "—", no delta
    review = comparison_review([model, program])
    assert review.phases is not None
    labels = [row[0] for row in review.phases[1]]  # each side's phases: the comparison's second table
    assert "First step" in labels and "Trace" in labels and "Import" in labels
    assert program.time_to_ready == pytest.approx(2.5) and program.other_time == pytest.approx(
        2.5 - 0.05 - 1.5 - 0.1 - 0.6)


def test_phases_a_child_sends_beyond_the_caps_are_counted_not_kept() -> None:
    from tflaunch.core.run.record import MAX_PHASE_NAMES

    lines = [("phase_end", f"mark_{i}", 1000.0 + i / 1000, _end(0.001)) for i in range(MAX_PHASE_NAMES + 10)]
    record = _folded(LaunchConfig(program=("python", "x.py")), lines)
    assert len(record.phases) == MAX_PHASE_NAMES and record.dropped == 11


TFLAUNCH = [sys.executable, "-m", "tflaunch.gui.main"]


def tflaunch(*args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*TFLAUNCH, *args], capture_output=True, text=True, timeout=timeout, cwd=PROGRAMS)


@pytest.mark.slow  # real child processes; make test keeps to its 6 minutes, CI runs this tier too
def test_bench_of_a_program_prints_its_phases_stops_it_and_keeps_it_in_history(tmp_path: Path) -> None:
    done = tflaunch("bench", "--until", "first_step", "--steady", "5", "--log-level", "2", "--",
                    "python", "fit_tfdata.py", "--steps", "400")
    assert done.returncode == 0, done.stderr[-2000:]
    assert "First step" in done.stdout and "Compile" in done.stdout and "stopped the program" in done.stdout
    assert "Trace" not in done.stdout  # the probe's phase; this program reported none
    listed = tflaunch("history", "list")
    assert "python fit_tfdata.py --steps 400" in listed.stdout
    run_id = listed.stdout.split("\n")[2].split()[0]
    shown = tflaunch("history", "show", run_id)
    assert "First step" in shown.stdout and "at first step, then stopped" in shown.stdout
    image = tmp_path / "run.png"
    assert tflaunch("report", run_id, "-o", str(image)).returncode == 0 and image.stat().st_size > 10_000


def test_bench_refuses_a_missing_script_before_anything_starts() -> None:
    done = tflaunch("bench", "--", "python", "no_such_train.py")
    assert done.returncode == 2
    assert "no_such_train.py was not found" in done.stderr.strip().splitlines()[-1]


@pytest.mark.slow  # a whole sweep of a real training program
def test_a_sweep_of_a_program_ranks_its_first_step() -> None:
    import json

    done = tflaunch("sweep", "--vary", "intra=1,2", "--repeat", "2", "--warmup", "0", "--no-racing",
                    "--objective", "phase:first_step", "--steady", "2", "--log-level", "2", "--json", "--",
                    "python", "fit_tfdata.py", "--steps", "400")
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout)
    assert result["plan"]["objective"] == "phase:first_step"
    assert result["plan"]["base"]["program"] == ["python", "fit_tfdata.py", "--steps", "400"]
    medians = [r["median"] for r in result["results"]]
    assert len(medians) == 3 and all(0.05 < m < 30 for m in medians), medians  # the first step, not the whole run


@pytest.mark.slow  # every arm of the doctor, three runs each
def test_the_doctor_examines_a_program_with_the_remedies_a_launch_can_apply() -> None:
    done = tflaunch("doctor", "--only", "xla_auto,format,jit_compile,warm", "--repeat", "3", "--steady", "2",
                    "--log-level", "2", "--", "python", "fit_tfdata.py", "--steps", "400", timeout=900)
    assert done.returncode in (0, 1), done.stderr[-2000:]
    out = done.stdout
    assert "tflaunch doctor: python fit_tfdata.py" in out
    assert "xla_auto=on" in out
    assert "a program loads its own files" in out and "a program compiles its own model" in out
    assert "warm" in out and "warm start (cold" in out  # measured on the program itself, cold and warm


@pytest.mark.slow  # real child processes; make test keeps to its 6 minutes, CI runs this tier too
def test_retraces_are_counted_with_their_time(tmp_path: Path) -> None:
    script = tmp_path / "retrace.py"
    script.write_text("import tensorflow as tf\n"
                      "@tf.function\ndef f(x, n):\n    return x * n\n"
                      "for n in range(6):\n    f(tf.constant(1.0), n)  # a Python number: a new trace each time\n")
    record = measure(str(script), until="exit", workdir=tmp_path)
    assert record.status is RunStatus.OK, record.headline
    retraces = record.phases["retraces"]
    assert retraces.count == 5 and retraces.duration is not None and retraces.duration > 0
    # No step; the program's own tf.function called outside a tape is its first inference
    # (observe.py's rule since issue 40 item 2).
    assert "first_step" not in record.phases and "first" in record.phases


@pytest.mark.slow  # the app's warm Launch script (tests/gui/test_warm_launch_in_window.py) runs this session
def test_a_warm_launch_of_a_program_reports_its_phases_without_an_import(tmp_path: Path, monkeypatch) -> None:
    """Forked from a warm server: the same phases from build on, none for the import it did
    not pay, and a spawn that is the launch to the fork."""
    from tflaunch.core.run.warm.warm_start import stop_servers

    monkeypatch.setenv("TFLAUNCH_RUNTIME_DIR", str(tmp_path / "rt"))
    config = LaunchConfig(program=("python", "fit_tfdata.py", "--steps", "400"), workdir=str(PROGRAMS), steady=3,
                          log_level=2, timeout=120)
    try:
        records = [run_sessions([ProbeSession(config, warm=True)])[0] for _ in range(2)]
    finally:
        stop_servers()
    for record in records:
        assert record.status is RunStatus.OK and record.stopped_at_ready, record.headline
        names = reached(record)
        assert "import" not in names and in_order(names, "spawn", "build", "compile", "first_step", "steady"), names
        assert any("Started warm" in note for note in record.notes)
    # The first launch started the server and waited for its import: said in its notes and JSON.
    first, second = (r.to_dict()["warm_start"] for r in records)
    assert first["started"] == "warm" and first["server_started"] and first["server_import_s"] > 0, first
    assert not second["server_started"] and second["server_import_s"] is None, second
    assert any("this launch started one and waited for its import" in n for n in records[0].notes)
    assert not any("waited for its import" in n for n in records[1].notes)
    cold = measure("fit_tfdata.py", "--steps", "400", steady=3)
    assert records[1].phases["spawn"].duration < cold.phases["import"].duration  # no import paid


def test_a_program_asked_warm_that_starts_cold_says_why_in_notes_json_and_history(tmp_path: Path,
                                                                                  monkeypatch) -> None:
    """bench --warm ran a program cold and said nothing about why: the reason is the run's."""
    from tflaunch.core.report.table import run_table

    monkeypatch.setenv("TFLAUNCH_RUNTIME_DIR", str(tmp_path / "rt"))
    config = LaunchConfig(program=("python", "-X", "dev", "no_tensorflow.py", "--steps", "2"), workdir=str(PROGRAMS),
                          until="exit", timeout=60)
    record = run_sessions([ProbeSession(config, warm=True)])[0]
    assert record.status is RunStatus.OK, record.headline
    why = "the interpreter option -X changes how Python starts"
    assert record.warm_start.cold_because.startswith(why), record.warm_start
    assert any(n.startswith(f"Asked to start warm, started cold: {why}") for n in record.notes), record.notes
    warm = record.to_dict()["warm_start"]
    assert warm["started"] == "cold" and warm["cold_because"].startswith(why) and not warm["server_started"]
    assert f"note: Asked to start warm, started cold: {why}" in run_table(record)
    history = History(tmp_path / "h.sqlite3")
    loaded = history.load(history.record(record, "test"))
    assert loaded.warm_start == record.warm_start and loaded.notes == record.notes


def test_a_refused_program_run_keeps_the_launch_check_s_reason(tmp_path: Path) -> None:
    record = measure("nowhere.py", workdir=tmp_path)
    assert record.status is RunStatus.FAILED and record.failure is not None
    assert "nowhere.py was not found" in record.failure.message and "exited" not in record.failure.message


@pytest.mark.slow  # real child processes; make test keeps to its 6 minutes, CI runs this tier too
def test_a_model_built_from_nested_sequentials_is_build_until_its_last_layer_not_an_inference() -> None:
    """keras.io's pattern: Sequentials called on a Keras Input while a functional model is
    built. Those calls are construction: the first inference is the first real call, after the
    program's own sleep, and build ends with the last layer made, not when it was told."""
    record = measure("nested_functional.py", "--steps", "40", "--sleep", "1.0", until="first_inference")
    assert record.status is RunStatus.OK, record.headline
    names = reached(record)
    assert in_order(names, *START, "build", "first", "steady"), names
    build, first = record.phases["build"], record.phases["first"]
    assert build.started is not None and build.duration is not None and first.started is not None
    build_end, first_end = truth(record, "build_end"), truth(record, "first_inference_end")
    assert build_end is not None and first_end is not None
    # Build ends where the program's clock says it did (before its 1 s sleep), not at the call.
    assert abs(build.started + build.duration - build_end) < 0.05
    assert first.started > build_end + 0.9, "the sleep is no part of build or of the inference"
    assert abs(first.started + (first.duration or 0.0) - first_end) < 0.05
