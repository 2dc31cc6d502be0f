"""Launch script launches: the researcher's script runs to its end (until=exit, as
`tflaunch run --profile` does) under the settings the panel shows, and the panel is left as
it was; the dialog says what it measures."""

from __future__ import annotations

import sys

import pytest

from tflaunch.core.settings.config import LaunchConfig


def _launched(window, monkeypatch) -> list[tuple[LaunchConfig, bool]]:
    started: list[tuple[LaunchConfig, bool]] = []
    monkeypatch.setattr(window.runner, "start", lambda config, warm=False, anatomy=False: started.append(
        (config, warm)))
    return started


def test_a_script_launched_while_a_program_is_measured_runs_to_its_end(qtbot, window, tmp_path, monkeypatch):
    """With Subject = Program, Until kept its `first_step`: train_fit.py --steps 4000 was stopped
    after its first step and 20 steady steps, and the panel then showed the script."""
    script = tmp_path / "train_fit.py"
    script.write_text("print('done')")
    window.use_config(LaunchConfig(program=("python", "serve.py"), until="first_step", intra=3, steady=20))
    before = window.panel.form_config()
    started = _launched(window, monkeypatch)
    window.start_script([sys.executable, str(script), "--steps", "4000"], warm=True)
    (config, warm), = started
    assert config.program == ("python", str(script), "--steps", "4000") and warm
    assert config.until == "exit", config.until
    assert config.intra == 3 and config.steady == 20  # the panel's settings apply
    assert window.panel.form_config() == before  # and the panel is as it was


def test_a_script_launched_while_a_model_is_measured_leaves_the_model(qtbot, window, tmp_path, monkeypatch):
    script = tmp_path / "train.py"
    script.write_text("print('done')")
    window.use_config(LaunchConfig(model="sample:cnn", batch=8, inter=2))
    before = window.panel.form_config()
    started = _launched(window, monkeypatch)
    window.start_script([sys.executable, str(script)])
    (config, warm), = started
    assert config.program == ("python", str(script)) and config.until == "exit" and not warm
    assert config.inter == 2 and config.batch == LaunchConfig().batch  # a program reads no batch
    assert window.panel.form_config() == before and not window.panel.is_program


def test_the_dialog_says_what_it_measures(qtbot):
    from tflaunch.gui.run.script_dialog import ScriptDialog

    dialog = ScriptDialog(sys.executable)
    qtbot.addWidget(dialog)
    words = dialog.note.text()
    assert "to its end" in words and "tflaunch run --profile" in words
    assert "settings panel" in words  # it is left as it is


@pytest.mark.slow  # real child processes; make test keeps to its 6 minutes, CI runs this tier too
def test_a_launched_training_script_prints_its_last_line(qtbot, window):
    """The real run: the script trains all its steps (its last line reaches the Log), while
    the panel goes on measuring its own program to its first step."""
    from pathlib import Path

    from tflaunch.core.run.record import RunStatus

    script = Path(__file__).parents[1] / "programs" / "fit_tfdata.py"
    window.use_config(LaunchConfig(program=("python", "serve.py"), until="first_step", steady=3))
    with qtbot.waitSignal(window.run_finished, timeout=180_000) as finished:
        window.start_script([sys.executable, str(script), "--steps", "60"])
    record = finished.args[0]
    assert record.status is RunStatus.OK and record.config.until == "exit"
    assert "trained 60 steps" in window.log.text.toPlainText()
    assert "first_step" in record.phases and record.latency.get("n") == 3  # the steady setting applies
    assert window.panel.form_config().program == ("python", "serve.py")
