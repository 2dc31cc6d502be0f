"""One measurement at a time: while the Advisor examines, a run measures or a sweep runs,
every other start control is disabled saying what runs, and a shortcut is refused with
the reason (Ctrl+R during the Advisor started a second probe beside one of its arms)."""

from __future__ import annotations

from tflaunch.core.settings.config import LaunchConfig

from ..builders import fake_python
from ..fake_child import CHILD_ENV


def _controls(window) -> dict[str, bool]:
    return {"run": window.window_actions.run.isEnabled(), "script": window.window_actions.script.isEnabled(),
            "sweep": window.sweep_view.start_button.isEnabled(),
            "advisor": window.advisor_view.start_button.isEnabled()}


def test_while_the_advisor_examines_nothing_else_starts(qtbot, make_window, tmp_path):
    window = make_window(size=(1024, 700))
    window.use_config(LaunchConfig(model="sample:mlp", python=fake_python(tmp_path), extra_env={CHILD_ENV: "hang"},
                                   timeout=3))  # each arm hangs until its timeout
    window.tabs.setCurrentWidget(window.sweep_view)  # built, as a user who looked at it
    view = window.advisor_view
    for name, box in view.remedies.items():
        box.setChecked(name == "onednn")
    view.start()
    assert view.running
    assert _controls(window) == {"run": False, "script": False, "sweep": False, "advisor": False}
    assert window.window_actions.run.toolTip() == "Waits: the Advisor is examining"
    assert "Advisor" in window.sweep_view.start_button.toolTip()

    window.start_run()  # Ctrl+R
    assert not window.runner.running
    assert "Cannot start while the Advisor is examining" in window.statusBar().currentMessage()
    window.start_sweep()
    assert not window.sweeper.running and "one measurement at a time" in window.sweep_view.status.text()

    window.cancel_run()  # Esc: the Advisor stops after its run in progress (the hanging arm times out)
    qtbot.waitUntil(lambda: not view.running, timeout=30_000)
    assert _controls(window) == {"run": True, "script": True, "sweep": True, "advisor": True}


def test_while_a_run_measures_the_advisor_and_the_sweep_wait(qtbot, make_window, tmp_path):
    window = make_window(size=(1024, 700))
    window.use_config(LaunchConfig(model="sample:mlp", python=fake_python(tmp_path), extra_env={CHILD_ENV: "hang"},
                                   timeout=60))
    window.tabs.setCurrentWidget(window.advisor_view)
    window.tabs.setCurrentWidget(window.sweep_view)
    window.start_run()
    assert window.runner.running
    assert _controls(window) == {"run": False, "script": False, "sweep": False, "advisor": False}
    assert window.advisor_view.start_button.toolTip() == "Waits: a run of sample:mlp is measuring"
    window.advisor_view.start()
    assert not window.advisor_view.running and "one measurement at a time" in window.advisor_view.status.text()
    window.cancel_run()
    qtbot.waitUntil(lambda: not window.runner.running, timeout=30_000)
    assert _controls(window) == {"run": True, "script": True, "sweep": True, "advisor": True}
