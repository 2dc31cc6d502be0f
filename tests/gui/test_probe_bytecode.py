"""tflaunch's code in a measured child is compiled for the child's interpreter by the launch
check (the CLI's launches) and by the app's interpreter check, so that a child started with
PYTHONDONTWRITEBYTECODE does not compile the launch hook and the observer on every launch."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from tflaunch.core.run.interpreters import probe_bytecode
from tflaunch.core.run.launch_check import launch_check
from tflaunch.core.settings.child import HOOK_DIR, PROBE_DIR
from tflaunch.core.settings.config import LaunchConfig

WATCHED = (HOOK_DIR / "sitecustomize.py", PROBE_DIR / "observer" / "observe.py",
           PROBE_DIR / "observer" / "keras_hooks.py")


def bytecode(source: Path) -> Path:
    return Path(importlib.util.cache_from_source(str(source)))


@pytest.fixture
def uncompiled() -> None:
    """This interpreter's bytecode of the child's modules removed."""
    probe_bytecode.compile_for.cache_clear()
    for source in WATCHED:
        bytecode(source).unlink(missing_ok=True)


def test_the_launch_check_compiles_the_childs_modules_for_its_interpreter(uncompiled, tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text("print('hello')\n")
    config = LaunchConfig(program=("python", "train.py"), until="exit", workdir=str(tmp_path))
    assert launch_check(config, known=None) == []
    assert all(bytecode(source).is_file() for source in WATCHED), [bytecode(s) for s in WATCHED]


def test_the_apps_launch_check_leaves_the_compile_to_its_background_check(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    from tflaunch.core.run import launch_check as check_module

    compiled: list[str] = []
    monkeypatch.setattr(check_module, "compile_for", compiled.append)
    (tmp_path / "train.py").write_text("print('hello')\n")
    config = LaunchConfig(program=("python", "train.py"), until="exit", workdir=str(tmp_path))
    assert launch_check(config, known=None, compile_probe=False) == [] and compiled == []
    assert launch_check(config, known=None) == [] and compiled == [config.python]


def test_the_apps_interpreter_check_compiles_them_in_the_background(uncompiled, qtbot) -> None:
    from PySide6.QtWidgets import QWidget

    from tflaunch.gui.adapters.interpreter_check import InterpreterCheck

    window = QWidget()  # the check lives in the main window, as in the app
    qtbot.addWidget(window)
    checker = InterpreterCheck(window)
    with qtbot.waitSignals([checker.checked, checker.compiled], timeout=60_000):
        checker.check(sys.executable)
    assert all(bytecode(source).is_file() for source in WATCHED)


def test_an_interpreter_that_cannot_compile_them_is_no_error(tmp_path: Path) -> None:
    probe_bytecode.compile_for.cache_clear()
    assert probe_bytecode.compile_for(str(tmp_path / "no-such-python")) is False
