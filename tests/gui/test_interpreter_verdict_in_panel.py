"""The settings panel after the interpreter check: a failed check is said in plain words,
the interpreter's own output goes to the tooltip, and the panel says Run must wait."""

from __future__ import annotations

import sys

from tflaunch.gui.adapters.interpreter_check import InterpreterCheck
from tflaunch.gui.settings.settings_panel import SettingsPanel


def _fake_python(folder):
    """An interpreter that fails as a broken environment does: a traceback, exit code 1."""
    path = folder / "python"
    path.write_text("#!/bin/sh\ncat >&2 <<'END'\nTraceback (most recent call last):\n"
                    '  File "<string>", line 2, in <module>\n'
                    "ModuleNotFoundError: No module named 'tensorflow'\nEND\nexit 1\n")
    path.chmod(0o755)
    return str(path)


def test_a_failed_check_says_what_to_do_and_that_run_must_wait(qtbot, tmp_path):
    panel = SettingsPanel()
    checker = InterpreterCheck(panel)  # as in the window: deleted with its parent, never by the collector
    qtbot.addWidget(panel)
    checker.checked.connect(panel.set_interpreter_info)
    python = _fake_python(tmp_path)
    panel.editors["python"].put(python)
    with qtbot.waitSignal(panel.runnable_changed, timeout=20000) as changed:
        checker.check(python)
    runnable, reason = changed.args
    assert not runnable and not panel.runnable and reason == panel.python_status.text()
    assert panel.python_status.text() == (
        f"{python} has no TensorFlow: No module named 'tensorflow'. Install it there ({python} -m pip install "
        "tensorflow) or choose another interpreter.")
    assert "Traceback (most recent call last)" in panel.python_status.toolTip()
    assert "<module>" in panel.python_status.toolTip()  # shown as written, not taken for markup

    panel.editors["python"].put(sys.executable)
    with qtbot.waitSignal(panel.runnable_changed, timeout=20000) as changed:
        checker.check(sys.executable)
    assert changed.args == [True, ""] and panel.runnable and "TensorFlow" in panel.python_status.text()
    checker.stop()


def test_an_interpreter_that_cannot_start_disables_run_too(qtbot, tmp_path):
    panel = SettingsPanel()
    checker = InterpreterCheck(panel)  # as in the window: deleted with its parent, never by the collector
    qtbot.addWidget(panel)
    checker.checked.connect(panel.set_interpreter_info)
    missing = str(tmp_path / "no-python")
    panel.editors["python"].put(missing)
    with qtbot.waitSignal(panel.runnable_changed, timeout=20000) as changed:
        checker.check(missing)
    assert changed.args[0] is False and panel.python_status.text().startswith(f"{missing} cannot be started (")
    assert panel.python_status.text().endswith("Give the path of a Python executable with TensorFlow.")


def test_the_window_s_run_waits_for_a_good_interpreter(qtbot, make_window, tmp_path):
    """Run stayed enabled after the interpreter check failed: it now follows the verdict."""
    window = make_window()
    run = window.window_actions.run
    assert run.isEnabled()
    python = _fake_python(tmp_path)
    with qtbot.waitSignal(window.panel.runnable_changed, timeout=20000):
        window.panel.editors["python"].put(python)
        window.panel.python_changed.emit(python)
    assert not run.isEnabled() and not window.window_actions.script.isEnabled()
    assert run.toolTip().startswith(f"Cannot run: {python} has no TensorFlow")
    with qtbot.waitSignal(window.panel.runnable_changed, timeout=20000):
        window.panel.editors["python"].put(sys.executable)
        window.panel.python_changed.emit(sys.executable)
    assert run.isEnabled()
