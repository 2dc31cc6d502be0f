"""The warm servers from outside: who may connect, where their sockets live, what happens
to a script when its server dies or is stopped, which launches share a server, and the cap.

Real servers (each imports TensorFlow once, ~650 MB): the module starts as few as it can.
"""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import psutil
import pytest

from tflaunch.core.run.warm import warm_servers, warm_start
from tflaunch.core.run.warm.warm_servers import WarmStartError, private_folder, server_key
from tflaunch.core.run.warm.warm_start import plan, run

from .builders import tflaunch

ENV = {**{k: v for k, v in os.environ.items() if not k.startswith(("TFLAUNCH_", "PYTEST_"))},
       "TF_CPP_MIN_LOG_LEVEL": "3"}
SLEEPER = textwrap.dedent("""
    import subprocess, sys, time
    child = subprocess.Popen(["sleep", "300"])
    open(sys.argv[1], "w").write(str(child.pid))
    print("sleeping", flush=True)
    time.sleep(300)
""")


@pytest.fixture(scope="module")
def runtime():
    folder = tempfile.mkdtemp(prefix="tfs-", dir="/tmp")  # short: a socket's path has 107 bytes at most
    saved = os.environ.get("TFLAUNCH_RUNTIME_DIR")
    os.environ["TFLAUNCH_RUNTIME_DIR"] = folder
    yield Path(folder)
    warm_servers.stop_servers()
    if saved is None:
        os.environ.pop("TFLAUNCH_RUNTIME_DIR", None)
    else:
        os.environ["TFLAUNCH_RUNTIME_DIR"] = saved


def _client(tmp_path: Path, script: str, *args: str, env: dict | None = None) -> subprocess.Popen:
    (tmp_path / "script.py").write_text(script)
    return subprocess.Popen([sys.executable, "-m", "tflaunch.core.run.warm.warm_start", "--python", sys.executable,
                             "--", sys.executable, "script.py", *args], cwd=tmp_path, env={**(env or ENV),
                             "TFLAUNCH_RUNTIME_DIR": os.environ["TFLAUNCH_RUNTIME_DIR"]},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _wait_for(client: subprocess.Popen, word: str) -> None:
    assert client.stdout is not None
    line = client.stdout.readline()
    while word not in line:
        assert line, client.stderr.read() if client.stderr else ""
        line = client.stdout.readline()


def _quick(env: dict, cwd: Path, code: str = "pass") -> int:
    return run(plan([sys.executable, "-c", code], sys.executable, env, str(cwd)), stdio=(0, 1, 2), idle_s=120)


@pytest.mark.parametrize("how", ["kill -9", "warm stop"])
@pytest.mark.slow  # real child processes; make test keeps to its 6 minutes, CI runs this tier too
def test_a_server_that_dies_takes_the_script_s_group_and_the_client_says_so(runtime, tmp_path, how):
    pids = tmp_path / "pids"
    client = _client(tmp_path, SLEEPER, str(pids))
    _wait_for(client, "sleeping")
    line = client.stderr.readline() if client.stderr else ""
    if line.startswith(warm_start.SERVER_LINE):  # this launch started the server: said first
        line = client.stderr.readline() if client.stderr else ""
    script = int(line.rsplit(" ", 1)[-1])
    grandchild = int(pids.read_text())
    if how == "kill -9":
        server = psutil.Process(script).ppid()
        os.kill(server, signal.SIGKILL)
    else:
        assert warm_servers.stop_servers() >= 1
    out, err = client.communicate(timeout=30)
    assert client.returncode == -signal.SIGTERM, err  # as a shell sees it: 143, "Terminated"
    said = "the warm server ended during the run" if how == "kill -9" else "the warm server was stopped"
    assert said in err and f"pid {script}" in err, err
    for pid in (script, grandchild):
        assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE, \
            f"{pid} outlived its server"


COUNTER = textwrap.dedent("""
    import signal, subprocess, sys, time
    child = subprocess.Popen(["sleep", "300"])
    open(sys.argv[1], "w").write(str(child.pid))
    got = []
    signal.signal(signal.SIGTERM, lambda number, frame: got.append(number))
    print("sleeping", flush=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not got:
        time.sleep(0.05)
    time.sleep(1)  # a second signal, were one forwarded twice, arrives in this second
    open(sys.argv[1] + ".seen", "w").write(str(len(got)))
    child.kill()
""")


@pytest.mark.parametrize("signal_number", [signal.SIGTERM, signal.SIGKILL])
@pytest.mark.slow  # real child processes; make test keeps to its 6 minutes, CI runs this tier too
def test_a_signal_to_tflaunch_s_group_reaches_a_warm_script_once_as_a_cold_one(runtime, tmp_path, signal_number):
    """The warm script leads a group in the server's session (no process can join a group of
    another session), so what reaches it from the launcher's group is what matters: `kill
    -TERM -PGID` (a job manager, a shell ending a job) reaches it once, as it reaches a cold
    script that is in the group; SIGKILL, which no launcher can forward, ends it too (its
    client's connection closes, and the server ends the script's group with it)."""
    pids = tmp_path / "pids"
    (tmp_path / "script.py").write_text(COUNTER)
    client = subprocess.Popen([sys.executable, "-m", "tflaunch.core.run.warm.warm_start", "--python", sys.executable,
                               "--", sys.executable, "script.py", str(pids)], cwd=tmp_path,
                              env={**ENV, "TFLAUNCH_RUNTIME_DIR": os.environ["TFLAUNCH_RUNTIME_DIR"]},
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, process_group=0)
    _wait_for(client, "sleeping")
    script = next(int(line.rsplit(" ", 1)[-1]) for line in iter(client.stderr.readline, "")  # type: ignore[union-attr]
                  if line.startswith(warm_start.CHILD_LINE))
    grandchild = int(pids.read_text())
    os.killpg(client.pid, signal_number)
    client.communicate(timeout=30)
    if signal_number == signal.SIGTERM:
        assert (tmp_path / "pids.seen").read_text() == "1", "the script got SIGTERM more or less than once"
        assert client.returncode == 0  # the script handled it and ended normally; so does its launcher
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(_running(pid) for pid in (script, grandchild)):
        time.sleep(0.1)
    assert not [pid for pid in (script, grandchild) if _running(pid)], "the warm script or its child outlived it"


def _running(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def test_only_this_user_may_connect_even_when_the_folder_is_opened(runtime, tmp_path):
    if os.geteuid() != 0:
        pytest.skip("another uid is needed to connect as someone else: run as root (CI does)")
    assert _quick(ENV, tmp_path) == 0
    [server] = [s for s in warm_servers.running_servers() if s.python == sys.executable][:1]
    marker = tmp_path / "ran"
    tmp_path.chmod(0o777)
    os.chmod(runtime, 0o755)  # what an outside tester did: the mode no longer protects the socket
    os.chmod(server.socket, 0o777)
    stranger = textwrap.dedent(f"""
        import os, socket, json
        os.setgid(65534); os.setuid(65534)
        s = socket.socket(socket.AF_UNIX); s.connect({str(server.socket)!r})
        request = json.dumps({{"argv": ["-c", "open({str(marker)!r}, 'w')"], "cwd": "/", "env": {{}}}}) + "\\n"
        try:
            socket.send_fds(s, [request.encode()], [0, 1, 2])
            print("closed" if s.recv(4096) == b"" else "answered")
        except (BrokenPipeError, ConnectionResetError):
            print("closed")
    """)
    try:
        answer = subprocess.run([sys.executable, "-c", stranger], capture_output=True, text=True, timeout=30)
    finally:
        os.chmod(runtime, 0o700)
    assert answer.stdout.strip() == "closed", answer  # connected, then closed without a word
    time.sleep(0.5)
    assert not marker.exists()
    assert "refused a connection from uid 65534" in server.log.read_text()
    assert _quick(ENV, tmp_path) == 0, "the server still serves its user"


def test_the_runtime_folder_is_never_reached_through_a_link_or_someone_else_s(tmp_path):
    theirs = tmp_path / "theirs"
    theirs.mkdir(mode=0o755)
    link = tmp_path / "tflaunch-link"
    link.symlink_to(theirs)
    with pytest.raises(WarmStartError, match="symbolic link"):
        private_folder(link)
    assert stat.S_IMODE(theirs.stat().st_mode) == 0o755, "the link's target was not touched"
    loose = tmp_path / "loose"
    loose.mkdir()
    loose.chmod(0o755)
    with pytest.raises(WarmStartError, match="chmod 700"):
        private_folder(loose)
    if os.geteuid() == 0:
        other = tmp_path / "other"
        other.mkdir(mode=0o700)
        os.chown(other, 65534, 65534)
        with pytest.raises(WarmStartError, match="belongs to uid 65534"):
            private_folder(other)
    fresh = private_folder(tmp_path / "fresh")
    assert stat.S_IMODE(fresh.stat().st_mode) == 0o700


@pytest.mark.slow  # real child processes; make test keeps to its 6 minutes, CI runs this tier too
def test_an_unrelated_variable_shares_a_server_one_read_at_import_does_not(runtime, tmp_path):
    out = tmp_path / "seen"
    code = (f"import os; open({str(out)!r}, 'w').write(os.environ.get('RUN_NAME', '') + "
            "os.environ.get('WRAPT_DISABLE_EXTENSIONS', '-'))")
    assert _quick({**ENV, "RUN_NAME": "a"}, tmp_path, code) == 0
    before = {s.pid for s in warm_servers.running_servers()}
    assert _quick({**ENV, "RUN_NAME": "b"}, tmp_path, code) == 0
    assert out.read_text() == "b-", "the child sees its own launch's variables"
    assert {s.pid for s in warm_servers.running_servers()} == before, "a run name makes no new server"
    assert server_key(sys.executable, {**ENV, "RUN_NAME": "a"}) == server_key(sys.executable, {**ENV, "RUN_NAME": "b"})
    assert server_key(sys.executable, {**ENV, "TF_X": "a"}) != server_key(sys.executable, {**ENV, "TF_X": "b"})

    # wrapt reads WRAPT_DISABLE_EXTENSIONS while TensorFlow imports, through os.environ:
    # the server saw it, refuses a launch that sets it otherwise, and one keyed on it serves.
    assert _quick({**ENV, "RUN_NAME": "c", "WRAPT_DISABLE_EXTENSIONS": "1"}, tmp_path, code) == 0
    assert out.read_text() == "c1"
    after = warm_servers.running_servers()
    assert len({s.pid for s in after} - before) == 1


def test_status_shows_memory_and_idle_time_and_the_cap_stops_the_oldest_idle(runtime, tmp_path):
    assert _quick(ENV, tmp_path) == 0
    servers = warm_servers.running_servers()
    assert servers and all(s.memory > 50 * 2 ** 20 and s.idle_s is not None and s.running == 0 for s in servers)
    status = tflaunch("warm", "status", timeout=60)
    assert status.returncode == 0 and "MiB" in status.stdout and "idle" in status.stdout, status
    # Servers report idle time to a tenth of a second and make_room reads it again a moment
    # later: two servers idle within that of each other are equally the oldest (a clean clone
    # once stopped the other of two such).
    most = max(s.idle_s or 0.0 for s in servers)
    oldest_ones = {s.pid for s in servers if (s.idle_s or 0.0) >= most - 0.25}
    stopped = warm_servers.make_room(max_servers=len(servers))
    assert len(stopped) == 1 and stopped[0].pid in oldest_ones, (stopped, servers)
    oldest = stopped[0]
    psutil.Process(oldest.pid).wait(30) if psutil.pid_exists(oldest.pid) else None
    assert oldest.pid not in {s.pid for s in warm_servers.running_servers()}


@pytest.mark.slow  # real child processes; make test keeps to its 6 minutes, CI runs this tier too
def test_a_bad_query_or_request_is_answered_not_obeyed(runtime, tmp_path):
    assert _quick(ENV, tmp_path) == 0
    [server] = warm_servers.running_servers()[:1]
    state = warm_servers.query_state(server.socket)
    assert state["pid"] == server.pid and state["running"] == 0
    import socket

    with socket.socket(socket.AF_UNIX) as sock:
        sock.connect(str(server.socket))
        sock.sendall(json.dumps({"argv": "not a list"}).encode() + b"\n")
        assert b"malformed" in sock.recv(4096)
