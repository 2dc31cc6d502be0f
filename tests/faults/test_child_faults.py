"""A broken or hostile child, seen from the command line: each fault ends in a message that
names the cause and what to do, leaves no process behind and leaves the history intact.

The children are fake interpreters (children.py): no TensorFlow starts here.
"""

from __future__ import annotations

import json
import math
import os
import signal
import sqlite3
import subprocess
import sys
import time

import pytest

from tflaunch.core.cli.main import main as cli_main
from tflaunch.core.paths import history_path
from tflaunch.core.run import events as ev
from tflaunch.core.run.line_buffer import LineBuffer
from tflaunch.core.run.record import STDERR_TAIL_BYTES, RunRecord, RunStatus
from tflaunch.core.settings.child import PROBE_MAIN, probe_command
from tflaunch.core.settings.config import LaunchConfig
from tflaunch.core.store.history import History
from tflaunch.core.units import format_bytes, format_duration

from ..builders import TFLAUNCH, finished_record, tflaunch
from .children import assert_nothing_left, fake_python, read_note, running, wait_gone

HUGE_LINE = 50 * 1024 * 1024


def bench(python: str, *extra: str) -> subprocess.CompletedProcess:
    return tflaunch("bench", "--model", "sample:mlp", "--python", python, "--steady", "3", *extra, timeout=120)


# -- 1. absurd numbers -------------------------------------------------------------------

@pytest.mark.parametrize("fields", [
    {"event": "phase_end", "duration": 1e308},
    {"event": "phase_end", "duration": -1.0},
    {"event": "phase_end", "duration": 1.0, "rss": 1 << 60},
    {"event": "phase_end", "duration": 1.0, "peak_rss": -5},
    {"event": "phase_end", "duration": 1.0, "latency": {"median": 1e300, "n": 3}},
    {"event": "phase_end", "duration": 1.0, "latency": {"median": 0.1, "n": 1 << 40}},
    {"event": "phase_start", "ts": 1e300},
    {"event": "hello", "pid": -3, "process_age": 0.1, "python": "x"},
    {"event": "hello", "pid": 1 << 40, "process_age": 0.1, "python": "x"},
    {"event": "hello", "pid": 5, "process_age": 1e300, "python": "x"},
    {"event": "settings", "applied": {"deep": json.loads("[" * 30 + "]" * 30)}},
    {"event": "result", "environment": {"gpus": list(range(50000))}, "model": {}},
])
def test_a_value_out_of_range_skips_its_event(fields):
    obj = {"v": 1, "ts": time.time(), "phase": "load", **fields}
    parser = ev.EventParser()
    assert parser.parse(json.dumps(obj)) is None and parser.malformed == 1


def test_json_infinity_and_nan_never_reach_a_record():
    parser = ev.EventParser()
    assert parser.parse('{"v": 1, "ts": 5, "phase": "load", "event": "phase_end", "duration": Infinity}') is None
    result = parser.parse('{"v": 1, "ts": 5, "phase": "steady", "event": "result", '
                          '"environment": {"cores": NaN, "x": "' + "y" * 100_000 + '"}, "model": {"params": 1e999}}')
    assert isinstance(result, ev.Result)
    assert result.environment.cores is None and len(result.environment.described["x"]) == ev.MAX_TEXT
    assert result.model.to_dict() == {"params": None}


@pytest.mark.parametrize("value", [math.inf, -math.inf, math.nan, 1e308, 10 ** 400])
def test_formatting_never_raises(value):
    assert format_duration(value) == "invalid" and format_bytes(value) == "invalid"


def test_cli_refuses_a_1e308_duration_and_keeps_the_history(tmp_path):
    good = bench(fake_python(tmp_path / "good", "succeed()"))
    assert good.returncode == 0, good.stderr
    fake = fake_python(tmp_path / "bad", 'succeed({"load": 1e308})')
    done = bench(fake)
    assert done.returncode == 1
    assert "Traceback" not in done.stderr + done.stdout
    assert "Failed in Load: The probe finished, but phase Load never reported a usable end" in done.stderr
    assert max(len(line) for line in done.stdout.splitlines()) < 200, "no 300-digit duration in the table"
    history = History(history_path())
    runs = history.list_runs()
    assert [r.status for r in runs] == ["failed", "ok"]
    bad, earlier = history.load(runs[0].id), history.load(runs[1].id)
    assert all(p.duration is None or p.duration < 1e6 for p in bad.phases.values())
    assert earlier.status is RunStatus.OK and earlier.time_to_ready is not None
    assert_nothing_left(fake)


def test_an_old_history_row_with_infinity_still_reads():
    """A run stored before values were checked: it lists and formats, no OverflowError."""
    record = finished_record()
    record.phases["load"].duration = math.inf
    record.phases["trace"].duration = 1e308
    record.ready_at = 1e308
    history = History(history_path())
    run_id = history.record(record, "cli")
    loaded = history.load(run_id)
    assert format_duration(loaded.phases["trace"].duration) == "invalid"
    done = tflaunch("report", str(run_id), "-o", str(history_path().parent / "r.md"), "--format", "md", timeout=120)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr


# -- 2. a 50 MB line -----------------------------------------------------------------------

def test_a_50_mb_stderr_line_is_cut_and_the_stored_log_is_bounded(tmp_path):
    fake = fake_python(tmp_path, f"sys.stderr.write('x' * {HUGE_LINE} + '\\n'); sys.stderr.flush()\n"
                                 "for i in range(5000): sys.stderr.write(f'chatty line {i}\\n')\n"
                                 "succeed()")
    done = bench(fake)
    assert done.returncode == 0, done.stderr[-2000:]
    with sqlite3.connect(history_path()) as db:
        (stored,) = db.execute("SELECT stderr_tail FROM runs").fetchone()
    assert len(stored.encode()) <= STDERR_TAIL_BYTES
    assert stored.splitlines()[-2:] == ["chatty line 4999", "I fake: a TensorFlow log line"]
    # What the in-memory record keeps is bounded the same way, the cut line included.
    record = RunRecord(LaunchConfig())
    for line in LineBuffer(max_line=4096).feed(b"y" * HUGE_LINE + b"\n"):
        record.add_stderr(line)
    assert list(record.stderr_tail) == ["y" * 4096 + f" … [line cut: {HUGE_LINE - 4096} more bytes]"]
    assert_nothing_left(fake)


# -- 3. processes that outlive their launcher ---------------------------------------------

def test_the_probe_dies_with_a_killed_launcher(tmp_path):
    fake = fake_python(tmp_path, "from tflaunch.core.probe.process import exit_with_parent\n"
                                 "exit_with_parent()\nhello()\nstart('import')\nnote('child', os.getpid())\n"
                                 "sum(range(10 ** 12))  # busy in C: no Python signal handler would run")
    cli = subprocess.Popen([*TFLAUNCH, "bench", "--model", "sample:mlp", "--python", fake],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        child = read_note(tmp_path, "child")
        assert running(child)
    finally:
        cli.kill()
        cli.wait()
    assert wait_gone(child), "the child outlived the launcher's kill -9"
    assert_nothing_left(fake)


def test_a_launcher_that_died_during_start_up_is_noticed(tmp_path):
    gone = subprocess.Popen(["true"])
    gone.wait()
    code = f"from tflaunch.core.probe.process import exit_with_parent; exit_with_parent({gone.pid}); print('alive')"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True).returncode == 4
    # The real probe names its launcher and checks it before anything slow is imported.
    config = json.loads(probe_command(LaunchConfig())[-1])
    assert config["launcher_pid"] == os.getpid()
    probe = subprocess.run([sys.executable, str(PROBE_MAIN), json.dumps({**config, "launcher_pid": gone.pid})],
                           capture_output=True, text=True, timeout=60)
    assert probe.returncode == 4 and '"event": "import"' not in probe.stdout
    # A launcher alive but not the parent (a wrapper script that did not exec): the probe runs.
    code = f"from tflaunch.core.probe.process import exit_with_parent; exit_with_parent({os.getpid()}); print('alive')"
    wrapped = subprocess.run(["/bin/sh", "-c", f"{sys.executable} -c \"{code}\"; true"], capture_output=True, text=True)
    assert wrapped.returncode == 0 and wrapped.stdout == "alive\n"


DOUBLE_FORK = """
hello()
if os.fork() == 0:
    os.setsid()  # leaves the run's process group
    if os.fork() == 0:
        note("grandchild", os.getpid())
        time.sleep(600)  # holding the run's stdout and stderr open
    os._exit(0)
os.wait()
read = os.path.join(os.path.dirname(sys.argv[0]), "grandchild")
while not os.path.exists(read):
    time.sleep(0.01)
succeed()
"""


def test_a_double_forked_grandchild_does_not_outlive_the_run(tmp_path):
    fake = fake_python(tmp_path, DOUBLE_FORK)
    started = time.monotonic()
    done = bench(fake, "--timeout", "60")
    took = time.monotonic() - started
    assert done.returncode == 0, done.stderr
    assert took < 20, f"the run waited {took:.1f} s for a grandchild holding its pipes"
    assert wait_gone(read_note(tmp_path, "grandchild")), "the grandchild survived the run"
    assert_nothing_left(fake)


# -- 4. smaller items ---------------------------------------------------------------------

@pytest.mark.parametrize("flag, value", [("--intra", "5000"), ("--inter", "-1"), ("--inter", "1025")])
def test_thread_counts_are_bounded(capsys, flag, value):
    assert cli_main(["bench", "--model", "sample:mlp", flag, value]) == 2
    err = capsys.readouterr().err
    assert f"tflaunch: {flag}: " in err and "must be a whole number from 0 to 1024" in err and value in err


@pytest.mark.parametrize("config", [LaunchConfig(intra=5000), LaunchConfig(inputs={"x": "ax3"}),
                                    LaunchConfig(imports=("/no/such/file.py",))])
def test_setting_problems_are_worded_for_the_app_too(config):
    """The app shows these next to its controls: no command-line options in them."""
    problems = config.validate(check_model=False)
    assert problems and all("--" not in p.message for p in problems), problems


def test_a_timeout_of_nan_is_a_usage_error(capsys):
    assert cli_main(["bench", "--model", "sample:mlp", "--timeout", "nan"]) == 2
    err = capsys.readouterr().err
    assert "--timeout" in err and "finite number of seconds" in err


def test_a_kill_9_from_outside_says_memory_may_have_run_out(tmp_path):
    fake = fake_python(tmp_path, "hello()\nstart('import')\nend('import')\nstart('load')\n"
                                 "os.kill(os.getpid(), 9)")
    done = bench(fake)
    assert done.returncode == 1
    assert "Failed in Load: The probe process was killed by SIGKILL during phase Load." in done.stderr
    assert "out-of-memory killer (peak memory was" in done.stderr and "journalctl -k" in done.stderr
    assert_nothing_left(fake)


@pytest.mark.parametrize("sig, peak_share, hinted", [
    (signal.SIGSEGV, 0.01, False), (signal.SIGSEGV, 0.9, True), (signal.SIGABRT, 0.95, True),
    (signal.SIGTERM, 0.95, False),
])
def test_a_crash_near_the_memory_limit_says_so(sig, peak_share, hinted):
    import psutil

    record = RunRecord(LaunchConfig(), launched_at=time.time())
    record.apply(ev.PhaseEnd(time.time(), "spawn", 0.01, 1, int(psutil.virtual_memory().total * peak_share)))
    record.finish(None, sig)
    assert sig.name in record.failure.message
    assert ("may have run out of memory" in record.failure.message) is hinted


@pytest.mark.parametrize("body", [None, "#!/bin/sh\necho 'this is not python'\nexit 0\n"])
def test_an_interpreter_that_is_not_python_is_named_as_such(tmp_path, body):
    python = "/bin/echo"
    if body is not None:
        python = str(tmp_path / "not-python")
        (tmp_path / "not-python").write_text(body)
        os.chmod(python, 0o755)
    done = bench(python)
    assert done.returncode == 1
    assert f"Failed in Spawn: {python} exited with code 0 without starting tflaunch's probe" in done.stderr
    assert "it is not a Python interpreter" in done.stderr and "--python" in done.stderr
