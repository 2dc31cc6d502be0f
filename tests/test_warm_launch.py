"""Warm start for real: a server of this interpreter imports TensorFlow once and forks each
launch, which must behave as `python SCRIPT` started cold: argv, working folder,
environment, stdin, stdout/stderr, exit codes and signals; threads and multiprocessing in
the script; the launch profile's tf.config settings; a server that is not fork-safe
refuses and the launch runs cold; the server ends when idle and with its parent.

One server serves the module's launches (they share one environment, so one key)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import psutil
import pytest

from tflaunch.core.run.warm import warm_servers, warm_start
from tflaunch.core.run.warm.warm_start import WarmStartError, plan, run

PROBE_ENV = {k: v for k, v in os.environ.items() if not k.startswith(("TFLAUNCH_", "PYTEST_"))}
ENV = {**PROBE_ENV, "TF_CPP_MIN_LOG_LEVEL": "3", "TFLAUNCH_TF_CONFIG": json.dumps({"intra": 2, "inter": 0})}

SCRIPT = textwrap.dedent("""
    import os, sys
    import tensorflow as tf
    print("argv=" + repr(sys.argv[1:]))
    print("cwd=" + os.getcwd())
    print("var=" + str(os.environ.get("WARM_VAR")))
    print("stdin=" + repr(sys.stdin.read()))
    print("intra=" + str(tf.config.threading.get_intra_op_parallelism_threads()))
    print("main=" + __name__ + " file=" + __file__)
    print("warning", file=sys.stderr)
    code = sys.argv[1] if len(sys.argv) > 1 else "0"
    if code == "raise":
        raise ValueError("boom from the script")
    if code == "message":
        sys.exit("a message from sys.exit")
    if code == "sleep":
        print("sleeping", flush=True)
        import time
        time.sleep(60)
    sys.exit(int(code))
""")

THREADS_AND_PROCESSES = textwrap.dedent("""
    import multiprocessing as mp, threading, sys

    def square(x):
        return x * x

    if __name__ == "__main__":
        results = []
        workers = [threading.Thread(target=lambda i=i: results.append(square(i))) for i in range(4)]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        for method in ("fork", "spawn"):
            with mp.get_context(method).Pool(2) as pool:
                print(method, pool.map(square, [1, 2, 3]))
        late = threading.Thread(target=lambda: print("late thread done", flush=True))
        late.start()  # not joined: the interpreter waits for it at exit, and so must a warm child
        print("threads", sorted(results))
""")


@pytest.fixture(scope="module")
def scripts(tmp_path_factory):
    folder = tmp_path_factory.mktemp("warm")
    (folder / "script.py").write_text(SCRIPT)
    (folder / "pool.py").write_text(THREADS_AND_PROCESSES)
    runtime = tempfile.mkdtemp(prefix="tfl-", dir="/tmp")  # short: a socket's path has 107 bytes at most
    saved = os.environ.get("TFLAUNCH_RUNTIME_DIR")
    os.environ["TFLAUNCH_RUNTIME_DIR"] = runtime  # this module's servers, and only them
    yield folder
    warm_start.stop_servers()
    if saved is None:
        os.environ.pop("TFLAUNCH_RUNTIME_DIR", None)
    else:
        os.environ["TFLAUNCH_RUNTIME_DIR"] = saved
    shutil.rmtree(runtime, ignore_errors=True)


def launch(scripts: Path, *args: str, stdin: bytes = b"", env: dict | None = None, cwd: Path | None = None,
           script: str = "script.py") -> tuple[int, str, str]:
    """Run a script warm with pipes for its stdio; (status, stdout, stderr)."""
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    in_r, in_w = os.pipe()
    os.write(in_w, stdin)
    os.close(in_w)
    try:
        code = run(plan([sys.executable, str(scripts / script), *args], sys.executable, env or ENV,
                        str(cwd or scripts)), stdio=(in_r, out_w, err_w), idle_s=120)
    finally:
        for fd in (in_r, out_w, err_w):
            os.close(fd)
    out, err = os.read(out_r, 1 << 20).decode(), os.read(err_r, 1 << 20).decode()
    os.close(out_r)
    os.close(err_r)
    return code, out, err


def test_the_script_gets_its_own_argv_cwd_env_stdin_and_settings(scripts, tmp_path):
    code, out, err = launch(scripts, "7", "two words", stdin=b"from stdin", env={**ENV, "WARM_VAR": "42"},
                            cwd=tmp_path)
    assert code == 7, err
    assert "argv=['7', 'two words']" in out and f"cwd={tmp_path}" in out and "var=42" in out
    assert "stdin='from stdin'" in out
    assert "intra=2" in out  # the profile's tf.config, applied in the child as the launch hook does cold
    assert f"main=__main__ file={scripts / 'script.py'}" in out
    assert "warning" in err


def test_exit_codes_and_errors_as_python_reports_them(scripts):
    assert launch(scripts, "0")[0] == 0
    code, _, err = launch(scripts, "raise")
    assert code == 1 and "ValueError: boom from the script" in err and "Traceback" in err
    code, _, err = launch(scripts, "message")
    assert code == 1 and "a message from sys.exit" in err


def test_a_signal_to_the_launcher_reaches_the_script(scripts):
    command = [sys.executable, "-c", textwrap.dedent(f"""
        import os, sys, json
        from tflaunch.core.run.warm.warm_start import plan, run
        env = json.loads(os.environ["WARM_ENV"])
        print(run(plan([sys.executable, {str(scripts / 'script.py')!r}, "sleep"], sys.executable, env,
                       {str(scripts)!r}), idle_s=120), flush=True)
    """)]
    client = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, text=True,
                              env={**os.environ, "WARM_ENV": json.dumps(ENV)})
    assert client.stdout is not None
    lines = [client.stdout.readline()]
    while "sleeping" not in lines[-1]:
        assert lines[-1], lines  # the script's output ended before it slept
        lines.append(client.stdout.readline())
    client.send_signal(signal.SIGTERM)
    assert client.stdout.readline().strip() == str(128 + signal.SIGTERM)
    assert client.wait(30) == 0


def test_threads_and_multiprocessing_work_in_a_warm_child(scripts):
    code, out, err = launch(scripts, script="pool.py")
    assert code == 0, err
    assert "fork [1, 4, 9]" in out and "spawn [1, 4, 9]" in out
    assert "threads [0, 1, 4, 9]" in out and "late thread done" in out


def test_what_cannot_start_warm_is_said(scripts):
    with pytest.raises(WarmStartError, match="not the interpreter of this launch's settings"):
        plan(["/usr/bin/env", "python3", "x.py"], sys.executable, ENV)
    with pytest.raises(WarmStartError, match="-X"):
        plan([sys.executable, "-X", "importtime", "x.py"], sys.executable, ENV)
    with pytest.raises(WarmStartError, match="interactive"):
        plan([sys.executable], sys.executable, ENV)


@pytest.mark.slow  # real child processes; make test keeps to its 6 minutes, CI runs this tier too
def test_a_server_with_threads_refuses_and_the_cli_starts_cold(scripts, tmp_path, capsys):
    """A library that starts a thread at import (here a sitecustomize) makes forking unsafe:
    the launch is refused with the reason, and `tflaunch run --warm` runs it cold."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text("import threading, time\n"
                                           "threading.Thread(target=time.sleep, args=(600,), daemon=True, "
                                           "name='started-at-import').start()\n")
    env = {**ENV, "PYTHONPATH": str(site)}
    with pytest.raises(WarmStartError, match="started-at-import"):
        launch(scripts, "0", env=env)

    from tflaunch.core.cli.main import main
    from tflaunch.core.paths import profiles_dir
    from tflaunch.core.settings.config import LaunchConfig
    from tflaunch.core.store.profiles import Profile, ProfileStore

    ProfileStore(profiles_dir()).save(Profile("threads", LaunchConfig(extra_env={"PYTHONPATH": str(site)}),
                                              {"runs": 1}))
    out = tmp_path / "out.txt"
    code = main(["run", "--warm", "--profile", "threads", "--", sys.executable, "-c",
                 f"open({str(out)!r}, 'w').write('ran')"])
    assert code == 0 and out.read_text() == "ran"
    assert "warm start not possible (the warm server runs Python threads (started-at-import)" in \
        capsys.readouterr().err


@pytest.mark.slow  # real child processes; make test keeps to its 6 minutes, CI runs this tier too
def test_run_warm_says_when_its_launch_started_the_server(scripts, tmp_path, capsys):
    """The first warm launch waits for its server's import: said, so its time is not taken for
    a warm start's; the next launch reuses the server and says nothing of it."""
    from tflaunch.core.cli.main import main
    from tflaunch.core.paths import profiles_dir
    from tflaunch.core.settings.config import LaunchConfig
    from tflaunch.core.store.profiles import Profile, ProfileStore

    ProfileStore(profiles_dir()).save(Profile("own-server", LaunchConfig(extra_env={"TF_WARM_TEST": "cli"}),
                                              {"runs": 1}))
    errs = []
    for _ in range(2):
        assert main(["run", "--warm", "--profile", "own-server", "--", sys.executable, "-c", "pass"]) == 0
        errs.append(capsys.readouterr().err)
    assert warm_start.SERVER_LINE in errs[0] and "this launch waited for it" in errs[0], errs[0]
    assert warm_start.SERVER_LINE not in errs[1] and "not possible" not in errs[1], errs[1]


@pytest.mark.slow  # real child processes; make test keeps to its 6 minutes, CI runs this tier too
def test_the_server_ends_when_idle_and_with_its_parent(scripts, tmp_path):
    env = {**ENV, "TF_WARM_TEST": "idle"}  # a server of its own
    folder = warm_servers.runtime_dir()
    parent = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    try:
        assert run(plan([sys.executable, "-c", "pass"], sys.executable, env, str(tmp_path)), idle_s=1.0,
                   parent=parent.pid) == 0
        key = warm_start.server_key(sys.executable, env)
        server = warm_servers.server_pid(folder / f"{key}.sock")
        assert server is not None
        psutil.Process(server).wait(30)  # idle for a second: it ends by itself, and tidies up
        assert not (folder / f"{key}.sock").exists()

        env2 = {**ENV, "TF_WARM_TEST": "parent"}
        assert run(plan([sys.executable, "-c", "pass"], sys.executable, env2, str(tmp_path)), idle_s=600,
                   parent=parent.pid) == 0
        key2 = warm_start.server_key(sys.executable, env2)
        server2 = psutil.Process(warm_servers.server_pid(folder / f"{key2}.sock"))
        parent.kill()
        parent.wait()
        server2.wait(30)  # the app that started it is gone: so is the server
        assert not server2.is_running()
    finally:
        if parent.poll() is None:
            parent.kill()


def test_a_deep_runtime_folder_gives_way_to_one_whose_socket_paths_fit(monkeypatch, tmp_path):
    monkeypatch.delenv("TFLAUNCH_RUNTIME_DIR", raising=False)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path / ("deep" * 30)))
    folder = warm_servers.runtime_dir()
    assert folder == Path(f"/tmp/tflaunch-{os.getuid()}") and len(str(folder / ("k" * 16 + ".sock"))) < 100
    assert folder.stat().st_mode & 0o777 == 0o700
