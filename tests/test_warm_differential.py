"""Warm against cold, case by case: every script in tests/warm_cases/ runs as a plain
`python ...` and through the warm client (`python -I -m tflaunch.core.run.warm.warm_start`, as the
app runs it), with the same interpreter, environment, working folder and kind of stdio, and
both must be seen to do the same: exit status, stdout, stderr (tracebacks included), the
files the script writes, and under a terminal what the terminal shows and the shell sees.

The outputs are compared as they are, but for what differs from run to run whoever runs it
(see `settle`): the client's one line that names the script's pid, object addresses, the time
and thread in absl's log prefix, and for the TensorFlow script the lines TensorFlow's
libraries print while `import tensorflow` loads them (a warm child's were loaded by the
server). A difference no fix of tflaunch can remove must be refused by the client with a
reason that names it (`Case.refused`); the script then runs cold. The marks on the table say
what differs today. One warm server serves the module (others start where a case's launch
needs its own); tests/warm_cases/README.md lists the cases. A normal-tier test: no TensorFlow
in the scripts but one, and a hang fails in seconds (each warm run's timeout follows its cold
run's time)."""

from __future__ import annotations

import os
import re
import resource
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Iterator
from typing import Any

import psutil
import pytest

from .warm_harness import (
    ANNOUNCED,
    CASES,
    CLIENT,
    COLD_TIMEOUT_S,
    PY,
    TERMINAL,
    WARM_ALLOWANCE_S,
    Case,
    Lab,
    _exchange,
    _kill_group,
    _read_until,
    launch,
)

C_SNIPPET = (CASES / "c_snippet.py").read_text()


def _nohup() -> None:
    """What `nohup` does before it execs the launcher: SIGHUP ignored (issue 33: a warm
    script died of a hang-up that a cold one, inheriting the ignore, survived)."""
    signal.signal(signal.SIGHUP, signal.SIG_IGN)


def _umask_027() -> None:
    os.umask(0o027)


def _lower_limits() -> None:
    resource.setrlimit(resource.RLIMIT_NOFILE, (256, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def _one_cpu() -> None:
    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})


def _nice_and_oom_score() -> None:
    os.nice(5)
    with open("/proc/self/oom_score_adj", "w") as f:
        f.write("500")


def _no_stdin() -> None:
    os.close(0)



def bug(reason: str) -> pytest.MarkDecorator:
    """A difference tflaunch can remove: the mark goes when the fix lands (strict: a fixed case fails here)."""
    return pytest.mark.xfail(strict=True, reason=reason)


def known(reason: str) -> pytest.MarkDecorator:
    """A difference no fix can remove and no client can see coming: it stays, documented."""
    return pytest.mark.xfail(strict=True, reason="inherent, and no launch shows it beforehand: " + reason)


# The cases `make test` runs: one or two of each kind, the ones the outside testers found
# first among them; the whole table runs in the slow tier (`make test-slow`, ~45 s more).
EVERY_TIER = frozenset({
    "script_with_args", "dot_slash_script", "folder_with_main", "module_with_args", "code_with_args", "orig_argv",
    "option_W_is_refused", "shadowed_package", "pool_spawn", "atexit_order", "finalizer_at_exit", "ctrl_c",
    "ctrl_z_then_fg", "dev_tty_and_foreground", "stdin_closed", "stdio_objects", "uncaught_exception",
    "keyboard_interrupt", "warnings", "exit_message", "environment", "rlimits", "blas_threads_set_in_script",
    "dispositions_under_nohup",  # sighup_under_nohup (20 s: its sleeper outlives the ignored signal) is slow
})


def case(name: str, *argv: str, marks: tuple[pytest.MarkDecorator, ...] | pytest.MarkDecorator = (),
         **options: Any) -> Any:
    marks = tuple(marks) if isinstance(marks, tuple) else (marks,)
    if name not in EVERY_TIER:
        marks = (*marks, pytest.mark.slow)
    return pytest.param(Case(name, argv, **options), id=name, marks=marks)


TABLE = [
    # argv forms: where the script thinks it is
    case("script_with_args", "sub/where.py", "a", "b c"),
    case("absolute_path", "{cases}/sub/where.py", "x"),
    case("script_in_cwd", "where.py", "y", cwd="sub"),
    case("dot_slash_script", "./where.py", cwd="sub"),
    case("symlinked_script", "linked.py", "z"),
    case("folder_with_main", "app", "x"),
    case("undecodable_argv_and_env", "undecodable.py", "caf\udce9", env=(("CASE_LATIN1", "\udce9t\udce9"),)),
    case("module_with_args", "-m", "pkg.tool", "a", "--flag"),
    case("module_package_main", "-m", "pkg", "x"),
    case("code_with_args", "-c", C_SNIPPET, "a", "b"),
    case("argparse_help", "cli_help.py", "--help"),
    case("orig_argv", "orig_argv.py", "a"),
    case("main_module_attributes", "main_module.py"),
    case("interpreter_state", "interpreter_state.py"),
    case("option_W_is_refused", "-W", "error", "warn.py", refused="-W"),
    case("option_u_is_refused", "-u", "interleave.py", mode="merged", refused="-u"),
    case("proc_self_cmdline", "proc_cmdline.py", "a", marks=known(
        "/proc/self/cmdline (ps, pgrep -f, psutil) is the server's 'forkserver.py --socket ... --idle ...', not "
        "'python proc_cmdline.py a': a process's argument area is fixed at exec (README)")),
    case("parent_and_session", "process_relations.py", marks=known(
        "the script's parent is the server, not the launcher, and its session the server's, so it leads a process "
        "group of its own: a group can only be joined within its session (README)")),
    case("shadowed_package", "train.py", cwd="shadow", refused="code"),
    case("blas_threads_set_in_script", "blas_threads.py", said="OPENBLAS_NUM_THREADS"),
    case("pythonpath_dot", "sub/pythonpath.py", env=(("PYTHONPATH", "."),)),
    case("tensorflow_absl_script", "tf_basics.py", "--threads", "2", "extra", tf_import_log=True),
    # processes and threads of the script
    case("pool_spawn", "mp_pool.py", "spawn"),
    case("pool_fork", "mp_pool.py", "fork"),
    case("pool_forkserver", "mp_pool.py", "forkserver"),
    case("process_pool_executor", "process_pool_executor.py"),
    case("threads", "threads.py"),
    case("own_subprocess", "own_subprocess.py", mode="merged"),
    case("atexit_order", "atexit_order.py"),
    case("finalizer_at_exit", "finalizer.py"),
    case("unclosed_file", "unclosed_file.py", outputs=("unclosed.csv",)),
    case("main_guard", "main_guard.py"),
    case("pickle_main", "pickle_main.py"),
    case("getsource", "getsource.py"),
    case("stack_depth", "stack_depth.py", marks=known(
        "inspect.stack(), traceback.print_stack() and faulthandler show the server's 6 frames under the script")),
    # signals, the terminal, stdio
    case("sigterm_to_handler", "signal_handler.py", "TERM", mode="signal", signal=signal.SIGTERM),
    case("sigusr1_to_handler", "signal_handler.py", "USR1", mode="signal", signal=signal.SIGUSR1),
    case("sigterm_default", "sleeper.py", mode="signal", signal=signal.SIGTERM),
    case("sighup_under_nohup", "sleeper.py", mode="signal", signal=signal.SIGHUP, setup=_nohup),
    case("dispositions_under_nohup", "signal_dispositions.py", setup=_nohup),
    case("signal_dispositions", "signal_dispositions.py"),
    case("keyboard_interrupt", "keyboard_interrupt.py"),
    case("ctrl_c", "sleeper.py", mode=TERMINAL, keys=(("wait", "ready\r\n"), ("type", "\x03"))),
    case("ctrl_z_then_fg", "ticker.py", mode=TERMINAL, keys=(("wait", "tick\r\n"), ("suspend", None)),
         repeats="tick"),
    case("terminal_streams", "terminal.py", mode=TERMINAL),
    case("dev_tty_and_foreground", "dev_tty.py", mode=TERMINAL, said="/dev/tty"),
    case("prompt_typed", "prompt.py", mode=TERMINAL,
         keys=(("wait", "name? "), ("type", "alice\n"), ("wait", "more? "), ("type", "\x04"))),
    case("sigwinch", "winch.py", mode=TERMINAL, keys=(("wait", "ready\r\n"), ("resize", (30, 100)))),
    case("prompt_piped", "prompt.py", stdin=b"bob\n"),
    case("stdin_piped_crlf", "read_stdin.py", stdin=b"a\nb\r\nc\rd"),
    case("stdin_empty", "read_stdin.py"),
    case("stdin_closed", "read_stdin.py", stdin=None, setup=_no_stdin),
    case("stdio_objects", "stdio_objects.py"),
    case("stdout_replaced", "stdout_replaced.py"),
    case("interleave_one_pipe", "interleave.py", mode="merged"),
    case("stdout_reconfigured", "reconfigure.py", mode="merged"),
    case("huge_output", "huge_output.py"),
    case("broken_pipe", "broken_pipe.py", mode="head"),
    case("open_fds", "open_fds.py"),
    # errors and exits
    case("uncaught_exception", "raises.py"),
    case("chained_exceptions", "chained.py"),
    case("module_traceback", "-m", "pkg", "raise"),
    case("code_traceback", "-c", "def f():\n    raise ValueError('from -c')\n\n\nf()\n"),
    case("thread_exception", "thread_exception.py"),
    case("segfault", "segfault.py"),
    case("excepthook", "excepthook.py"),
    case("warnings", "warn.py"),
    case("logging_to_stderr", "logging_setup.py"),
    case("exit_message", "exit_with.py", "message"),
    case("exit_3", "exit_with.py", "3"),
    case("exit_none", "exit_with.py", "none"),
    case("exit_256", "exit_with.py", "256"),
    case("os_exit", "exit_with.py", "os_exit"),
    # what the launcher hands down
    case("environment", "environment.py"),
    case("cwd", "cwd.py"),
    case("umask", "umask.py", setup=_umask_027),
    case("rlimits", "rlimits.py", setup=_lower_limits),
    case("affinity", "scheduling.py", setup=_one_cpu),
    case("niceness_and_oom_score", "scheduling.py", setup=_nice_and_oom_score),
    case("containment", "containment.py"),
    case("random_state", "random_state.py", mode="varies"),
    case("hash_seed", "hash_seed.py", mode="varies", marks=known(
        "every warm child has the server's hash secret: hash() and set order repeat run to run")),
]


def cases_environment(runtime: str) -> dict[str, str]:
    """This process's environment as a user's: buffered stdio (no PYTHONUNBUFFERED), so that
    buffering shows; this module's runtime folder; the launcher's pid for process_relations.py."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TFLAUNCH_", "PYTEST_", "PYTHONUNBUFFERED"))}
    return {**env, "TFLAUNCH_RUNTIME_DIR": runtime, "CASES_LAUNCHER_PID": str(os.getpid())}


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    """A copy of the cases (what they write stays out of the repository) and one warm server."""
    folder = tmp_path_factory.mktemp("warm_cases")
    shutil.copytree(CASES, folder, symlinks=True, dirs_exist_ok=True, ignore=shutil.ignore_patterns("__pycache__"))
    runtime = tempfile.mkdtemp(prefix="tfl-", dir="/tmp")  # short: a socket's path has 107 bytes at most
    env = cases_environment(runtime)
    # Started here, so that a case's warm run is timed as a warm start.
    subprocess.run([*CLIENT, PY, "-c", "pass"], env=env, cwd=folder, capture_output=True, timeout=120, check=True)
    yield Lab(folder, env, runtime)
    servers = [p for p in psutil.process_iter(["cmdline"]) if any(runtime in arg for arg in p.info["cmdline"] or [])]
    for server in servers:
        server.terminate()
    # A server tidies up at once, then ends as an interpreter with TensorFlow ends (seconds):
    # no need to wait for that, its folder goes anyway.
    for server in psutil.wait_procs(servers, timeout=1)[1]:
        server.kill()
    shutil.rmtree(runtime, ignore_errors=True)



@pytest.mark.parametrize("c", TABLE)
def test_warm_is_seen_as_cold(c: Case, lab: Lab) -> None:
    cold = launch(c, lab, warm=False, timeout=COLD_TIMEOUT_S)
    assert not isinstance(cold.seen.status, str), f"the case itself {cold.seen.status}: {cold.seen}"
    # A hang fails in seconds, not minutes: a warm start takes no longer than its cold start,
    # plus the import of a new server's TensorFlow when the client starts one.
    warm = launch(c, lab, warm=True, timeout=WARM_ALLOWANCE_S + 3 * cold.elapsed)
    if c.refused:
        assert warm.refusal is not None and c.refused in warm.refusal, "the client did not refuse it"
    else:
        assert warm.refusal is None and warm.warm_pid is not None, f"it did not start warm: {warm.refusal}"
    if c.said:  # a difference no fork can remove, said the moment the script meets it
        shown = warm.seen.stderr + warm.seen.stdout  # a terminal shows both as one
        assert re.search(rf"tflaunch: [^\n]*{re.escape(c.said)}", shown), f"the difference was not said: {shown}"
        return
    assert warm.seen == cold.seen


def test_a_killed_server_is_said_and_takes_the_script_with_it(lab: Lab) -> None:
    """`kill -9` of the warm server while a script runs (a cold run has no server to lose):
    the client says what happened and fails, and the script does not run on unseen."""
    client = subprocess.Popen([*CLIENT, PY, "sleeper.py"], cwd=lab.folder, env=lab.env, stdin=subprocess.DEVNULL,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, process_group=0)
    assert client.stdout is not None and client.stderr is not None
    script = None
    with client:
        try:
            said = _read_until(client.stderr.fileno(), b"\n", 30)
            found = ANNOUNCED.search(said.decode())
            assert found, said
            script = int(found.group(1))
            assert b"ready" in _read_until(client.stdout.fileno(), b"ready\n", 10)
            os.kill(psutil.Process(script).ppid(), signal.SIGKILL)
            _, err, _ = _exchange(client, None, 15)
            status = client.wait(5)
            alive = psutil.pid_exists(script) and psutil.Process(script).status() != psutil.STATUS_ZOMBIE
        finally:
            _kill_group(client.pid)
            _kill_group(script)
    assert status != 0 and not alive
    assert "warm server ended" in (said + err).decode()
