"""One reading of a command line: `-- ENV/bin/python train.py` and `--python ENV/bin/python --
python train.py` are one subject (the same interpreter setting, the same warm server, the
same advice), with real second interpreters: the venv reached through a link to its folder,
a link to its python outside it (which Python starts as the base interpreter, not the venv),
and the TensorFlow 2.15 stack where this machine has it. The warm server of a tf-keras stack
imports tf-keras, as the program will, not Keras 3."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tflaunch.core.cli.arguments import config_from_args
from tflaunch.core.cli.main import build_parser
from tflaunch.core.doctor.warm_arm import interpreter
from tflaunch.core.run.launch_check import launch_check
from tflaunch.core.run.program import normal_subject, program_argv, program_problems
from tflaunch.core.run.session import ProbeSession
from tflaunch.core.run.warm.warm_servers import server_key
from tflaunch.core.run.warm.warm_start import plan
from tflaunch.core.settings.config import LaunchConfig

STACKS = Path("/root/.cache/tflaunch-stacks")
TF215 = STACKS / "py310-tf215" / "bin" / "python"
TFKERAS = STACKS / "py311-tf221-tfkeras" / "bin" / "python"
VENV = Path(sys.executable).parent.parent


@pytest.fixture
def linked_venv(tmp_path: Path) -> Path:
    """This venv's python reached through a link to the venv's folder: another path, the same
    interpreter (Python finds the venv's pyvenv.cfg through the link)."""
    (tmp_path / "env").symlink_to(VENV, target_is_directory=True)
    return tmp_path / "env" / "bin" / "python"


def _args(*argv: str) -> LaunchConfig:
    return config_from_args(build_parser().parse_args(list(argv)), model_required=True)


def test_an_interpreter_first_is_the_python_setting(linked_venv: Path, tmp_path: Path) -> None:
    typed = _args("bench", "--cwd", str(tmp_path), "--", str(linked_venv), "train.py", "--epochs", "1")
    chosen = _args("bench", "--cwd", str(tmp_path), "--python", str(linked_venv), "--", "python", "train.py",
                   "--epochs", "1")
    assert typed == chosen
    assert typed.python == str(linked_venv) and typed.program == ("python", "train.py", "--epochs", "1")
    assert program_argv(typed)[0] == str(linked_venv)


def test_a_relative_interpreter_is_read_from_the_working_folder(linked_venv: Path, tmp_path: Path) -> None:
    config = normal_subject(LaunchConfig(program=("env/bin/python", "train.py"), workdir=str(tmp_path)))
    assert config.python == str(linked_venv) and config.program == ("python", "train.py")


def test_the_same_interpreter_keeps_the_settings_spelling(linked_venv: Path) -> None:
    given = str(VENV / "bin" / "python3")  # a --python the user gave, not the default
    config = normal_subject(LaunchConfig(python=given, program=(str(linked_venv), "x.py")))
    assert config.python == given and config.program == ("python", "x.py")
    problems = program_problems(LaunchConfig(python=given, program=(str(linked_venv), "x.py")))
    assert [p.message for p in problems if "one interpreter" in p.message] == []


def test_a_link_to_the_venvs_python_outside_it_is_another_interpreter(tmp_path: Path) -> None:
    (tmp_path / "python").symlink_to(Path(sys.executable))
    link = str(tmp_path / "python")
    prefixes = [subprocess.run([p, "-c", "import sys; print(sys.prefix)"], capture_output=True, text=True,
                               check=True).stdout.strip() for p in (link, sys.executable)]
    assert prefixes[0] != prefixes[1]  # the premise: Python starts it as the base interpreter
    config = LaunchConfig(python=sys.executable + "3", program=(link, "x.py"))  # a --python the user gave
    assert normal_subject(config).program[0] == link  # left as typed, and refused with both named:
    messages = [p.message for p in program_problems(config)]
    assert any("one interpreter" in m and link in m and config.python in m for m in messages), messages


def test_the_doctor_advises_the_interpreter_the_command_named(linked_venv: Path, tmp_path: Path) -> None:
    config = _args("doctor", "--cwd", str(tmp_path), "--", str(linked_venv), "train.py")
    assert interpreter(config) == str(linked_venv)
    # The profile the warm arm saves carries that interpreter: the advice's run --warm finds it.
    assert config.replace(program=(), workdir="").python == str(linked_venv)


def test_a_warm_launch_of_an_interpreter_first_goes_to_that_interpreters_server(linked_venv: Path,
                                                                               tmp_path: Path) -> None:
    script = tmp_path / "train.py"
    script.write_text("print('hi')\n")
    session = ProbeSession(LaunchConfig(program=(str(linked_venv), str(script)), until="exit"), warm=True)
    argv, env = session.launch(0.0, 0.0)
    command = argv[argv.index("--") + 1:]
    python = argv[argv.index("--python") + 1]
    assert python == str(linked_venv)
    launch = plan(command, python, env)  # before: "not the profile's interpreter", and a cold start
    assert launch.python == str(linked_venv) and launch.argv == [str(script)]


def test_venvs_of_one_base_interpreter_have_servers_of_their_own() -> None:
    base = os.path.realpath(sys.executable)
    assert base != sys.executable  # a venv's python is a link to its base interpreter
    assert server_key(sys.executable, {}) != server_key(base, {})


@pytest.mark.skipif(not TF215.exists(), reason=f"{TF215} is not installed here (the py310-tf215 stack)")
def test_the_tf215_stacks_python_first_is_its_setting(tmp_path: Path) -> None:
    config = _args("sweep", "--vary", "intra=1,2", "--cwd", str(tmp_path), "--", str(TF215), "train.py")
    assert config.python == str(TF215) and config.program == ("python", "train.py")
    assert config == _args("sweep", "--vary", "intra=1,2", "--cwd", str(tmp_path), "--python", str(TF215), "--",
                           "python", "train.py")


@pytest.mark.slow
@pytest.mark.skipif(not TFKERAS.exists(), reason=f"{TFKERAS} is not installed here (the py311-tf221-tfkeras stack)")
def test_a_tf_keras_stacks_warm_server_imports_tf_keras_as_the_program_does(tmp_path: Path) -> None:
    """The program's tf.keras is tf-keras under TF_USE_LEGACY_KERAS=1: cold it never imports Keras 3,
    and warm it must find the same modules loaded."""
    from tflaunch.core.run.warm import warm_start

    script = tmp_path / "which_keras.py"
    script.write_text(textwrap.dedent("""
        import sys
        import tensorflow as tf
        print(tf.keras.__name__, "keras.src" in sys.modules, "tf_keras.src" in sys.modules)
    """))
    runtime = Path(os.environ.get("TMPDIR", "/tmp")) / f"tfl-k2-{os.getpid()}"
    env = {**os.environ, "TF_USE_LEGACY_KERAS": "1", "TF_CPP_MIN_LOG_LEVEL": "3",
           "TFLAUNCH_RUNTIME_DIR": str(runtime)}
    cold = subprocess.run([str(TFKERAS), str(script)], env=env, capture_output=True, text=True, timeout=300)
    assert cold.returncode == 0, cold.stderr
    warm = subprocess.run([sys.executable, "-I", "-m", "tflaunch.core.run.warm.warm_start", "--python", str(TFKERAS),
                           "--idle", "30", "--", str(TFKERAS), str(script)], env=env, capture_output=True,
                          text=True, timeout=300)
    try:
        assert warm.returncode == 0, warm.stderr
        assert "warm start not possible" not in warm.stderr, warm.stderr
        assert warm.stdout == cold.stdout and cold.stdout.endswith(" False True\n"), (warm.stdout, cold.stdout)
    finally:
        os.environ["TFLAUNCH_RUNTIME_DIR"], saved = str(runtime), os.environ.get("TFLAUNCH_RUNTIME_DIR")
        try:
            warm_start.stop_servers()
        finally:
            if saved is None:
                os.environ.pop("TFLAUNCH_RUNTIME_DIR")
            else:
                os.environ["TFLAUNCH_RUNTIME_DIR"] = saved


def test_the_launch_check_judges_the_interpreter_the_command_named(linked_venv: Path, tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text("")
    asked: list[str] = []
    config = LaunchConfig(program=(str(linked_venv), "train.py"), workdir=str(tmp_path), extra_env={
        "TF_XLA_FLAGS": "--tf_xla_auto_jit=2"})
    assert launch_check(config, known=lambda python: asked.append(python) or None) == []
    assert asked == [str(linked_venv)]  # the TF_XLA_FLAGS check asks that interpreter's TensorFlow
