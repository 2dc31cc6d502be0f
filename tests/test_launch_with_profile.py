"""`tflaunch run --profile`: a user's unmodified script sees every setting of the profile."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from tflaunch.core.paths import profiles_dir
from tflaunch.core.settings.config import LaunchConfig
from tflaunch.core.store.profiles import Profile, ProfileStore

from .builders import TFLAUNCH

READ_BACK = textwrap.dedent("""
    import json, os, sys
    import tensorflow as tf
    gpus = tf.config.list_physical_devices("GPU")
    print("READBACK " + json.dumps({
        "intra": tf.config.threading.get_intra_op_parallelism_threads(),
        "inter": tf.config.threading.get_inter_op_parallelism_threads(),
        "xla_flags": os.environ.get("TF_XLA_FLAGS"),
        "onednn": os.environ.get("TF_ENABLE_ONEDNN_OPTS"),
        "log_level": os.environ.get("TF_CPP_MIN_LOG_LEVEL"),
        "visible": os.environ.get("CUDA_VISIBLE_DEVICES"),
        "growth_env": os.environ.get("TF_FORCE_GPU_ALLOW_GROWTH"),
        "extra": os.environ.get("MY_SETTING"),
        "growth": [tf.config.experimental.get_memory_growth(g) for g in gpus],
        "argv": sys.argv[1:],
    }), flush=True)
    sys.exit(int(sys.argv[1]))
""")


def save(name: str, config: LaunchConfig) -> None:
    ProfileStore(profiles_dir()).save(Profile(name, config, {"runs": 1}))


def run(*args, timeout=180):
    return subprocess.run([*TFLAUNCH, *args], capture_output=True, text=True, timeout=timeout)


def readback(done) -> dict:
    line = next(line for line in done.stdout.splitlines() if line.startswith("READBACK "))
    return json.loads(line[len("READBACK "):])


@pytest.mark.slow  # real child processes; make test keeps to its 6 minutes, CI runs this tier too
def test_every_setting_reaches_the_script_and_the_exit_code_comes_back(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(READ_BACK)
    save("tuned", LaunchConfig(intra=3, inter=2, xla_auto=True, onednn=False, log_level=2, visible_gpus=(0,),
                               memory_growth=True, extra_env={"MY_SETTING": "on"}))
    done = run("run", "--profile", "tuned", "--", sys.executable, str(script), "7", "--epochs", "3")
    assert done.returncode == 7, done.stderr
    seen = readback(done)
    assert seen["intra"] == 3 and seen["inter"] == 2
    assert seen["xla_flags"] == "--tf_xla_auto_jit=2 --tf_xla_cpu_global_jit"
    assert seen["onednn"] == "0" and seen["log_level"] == "2"
    assert seen["visible"] == "0" and seen["growth_env"] == "true" and seen["extra"] == "on"
    assert seen["growth"] == [], "no GPU here: nothing to set, and nothing breaks"
    assert seen["argv"] == ["7", "--epochs", "3"]


@pytest.mark.slow  # real child processes; make test keeps to its 6 minutes, CI runs this tier too
def test_a_profile_without_threads_leaves_tensorflow_defaults(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(READ_BACK)
    save("plain", LaunchConfig())
    done = run("run", "--profile", "plain", "--", sys.executable, str(script), "0")
    assert done.returncode == 0, done.stderr
    assert readback(done)["intra"] == 0 and readback(done)["xla_flags"] is None


@pytest.mark.slow  # real child processes; make test keeps to its 6 minutes, CI runs this tier too
def test_the_environments_own_sitecustomize_still_runs(tmp_path):
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    (theirs / "sitecustomize.py").write_text("import os\nos.environ['THEIRS_RAN'] = 'yes'\n")
    save("p", LaunchConfig(intra=1))
    code = ("import os, tensorflow as tf; "
            "print(os.environ.get('THEIRS_RAN'), tf.config.threading.get_intra_op_parallelism_threads())")
    env = {**__import__("os").environ, "PYTHONPATH": str(theirs)}
    done = subprocess.run([*TFLAUNCH, "run", "--profile", "p", "--", sys.executable, "-c", code],
                          capture_output=True, text=True, timeout=180, env=env)
    assert done.stdout.split() == ["yes", "1"], done.stderr


def test_a_script_killed_by_a_signal_reports_128_plus_the_signal():
    save("p", LaunchConfig())
    suicide = "import os, signal; os.kill(os.getpid(), signal.SIGTERM)"
    done = run("run", "--profile", "p", "--", sys.executable, "-c", suicide)
    assert done.returncode == 128 + 15


def test_missing_profile_or_command_is_a_clear_error():
    save("fast", LaunchConfig())
    missing = run("run", "--profile", "nope", "--", "true")
    assert missing.returncode == 2 and "no profile 'nope'" in missing.stderr and "fast" in missing.stderr
    empty = run("run", "--profile", "fast")
    assert empty.returncode == 2 and "needs a command" in empty.stderr
    not_found = run("run", "--profile", "fast", "--", "no-such-program-xyz")
    assert not_found.returncode == 2 and "no-such-program-xyz was not found" in not_found.stderr


TREE = textwrap.dedent("""
    import os, subprocess, sys, time
    helper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    with open(sys.argv[1] + ".tmp", "w") as f:
        f.write(f"{os.getpid()} {helper.pid}")
    os.replace(sys.argv[1] + ".tmp", sys.argv[1])
    time.sleep(120)
""")


# One path for the three (the signal passed on, the marker's processes ended): SIGTERM in every
# tier, the other two in the slow one.
@pytest.mark.parametrize(("name", "status"), [("SIGTERM", 143), pytest.param("SIGINT", 130, marks=pytest.mark.slow),
                                              pytest.param("SIGHUP", 129, marks=pytest.mark.slow)])
def test_a_signal_to_tflaunch_ends_the_script_and_what_it_started(tmp_path, name, status):
    """Sent to tflaunch's pid alone (kill, a job manager), a signal left the script running,
    orphaned (SIGTERM, SIGHUP) or was not passed on at all (SIGINT) (issue 43, item 4)."""
    import signal
    import time

    import psutil

    save("p", LaunchConfig())
    pids = tmp_path / "pids"
    cli = subprocess.Popen([*TFLAUNCH, "run", "--profile", "p", "--", sys.executable, "-c", TREE, str(pids)],
                           stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while not pids.exists() and cli.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        script, helper = (int(p) for p in pids.read_text().split())
        cli.send_signal(getattr(signal, name))
        _, err = cli.communicate(timeout=60)
    finally:
        cli.kill()
    assert cli.returncode == status, err
    assert f"tflaunch: {name} received; passed to the script (pid {script})" in err
    for pid in (script, helper):
        deadline = time.monotonic() + 30  # an orphan is reaped by init in its own time
        while time.monotonic() < deadline and psutil.pid_exists(pid) and \
                psutil.Process(pid).status() != psutil.STATUS_ZOMBIE:
            time.sleep(0.05)
        assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE, \
            f"{pid} still runs"
