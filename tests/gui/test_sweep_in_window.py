"""A real small sweep driven through the Sweep tab."""

from __future__ import annotations

import psutil

from tflaunch.core.paths import history_path
from tflaunch.core.settings.config import LaunchConfig
from tflaunch.core.store.history import History

from ..builders import slow_python

SWEEP_TIMEOUT_MS = 300_000


def plan_intra(window, values="1,2", repeat=2, warmup=1, racing=False):
    box, edit = window.sweep_view._axes["intra"]
    box.setChecked(True)
    edit.setText(values)
    window.sweep_view.repeat.setValue(repeat)
    window.sweep_view.warmup.setValue(warmup)
    window.sweep_view.racing.setChecked(racing)


def test_a_sweep_runs_shows_its_results_and_keeps_a_clear_winner(qtbot, window, screenshot, tmp_path):
    window.use_config(LaunchConfig(model="sample:mlp", steady=1, python=slow_python(tmp_path),
                                   extra_env={"DELAY": "3"}))
    window.sweep_view.env_axis.setText("DELAY=0")
    window.sweep_view.repeat.setValue(3)
    window.sweep_view.warmup.setValue(0)
    window.sweep_view.racing.setChecked(False)
    assert "2 settings (the baseline included) × (0 warm-up + 3) = 6 trials" in window.sweep_view.estimate.text()
    with qtbot.waitSignal(window.sweeper.finished, timeout=SWEEP_TIMEOUT_MS) as finished:
        window.sweep_view.start_button.click()
        assert not window.run_action.isEnabled() and window.cancel_action.isEnabled()
    sweep, status = finished.args
    assert status == "done" and sweep.trials_run == 6
    view = window.sweep_view
    assert view.table.rowCount() == 2 and view.table.item(0, 1).text() == "env.DELAY=0"
    assert view.progress.value() == 6 and view.verdict.text().startswith("Winner: env.DELAY=0: ")
    medians = [view.table.item(r, 2).text() for r in range(2)]
    assert all(m.endswith((" s", " ms")) for m in medians)
    assert view.save_button.isEnabled() and window.run_action.isEnabled()
    screenshot(window, "sweep")
    assert window.save_sweep_winner("swept")
    assert window.profiles.load("swept").evidence["sweep"]["trials"] == 6
    history = History(history_path())
    (sweep_id, _, _, stored_status, summary), = history.list_sweeps()
    assert stored_status == "done" and summary == view.verdict.text()
    assert window.history_view.model.rowCount() == 6


def test_a_sweep_of_two_trials_per_setting_names_no_winner(qtbot, window):
    window.use_config(LaunchConfig(model="sample:mlp", steady=1))
    plan_intra(window, values="1", repeat=2, warmup=0)
    with qtbot.waitSignal(window.sweeper.finished, timeout=SWEEP_TIMEOUT_MS):
        window.sweep_view.start_button.click()
    view = window.sweep_view
    assert view.verdict.text().startswith("No winner: not enough runs.")
    notes = {view.table.item(r, 1).text(): view.table.item(r, 7).text() for r in range(view.table.rowCount())}
    assert notes["intra=1"] == "not enough runs" and not view.save_button.isEnabled()


def test_cancelling_a_sweep_keeps_its_finished_trials_and_leaves_no_probe(qtbot, window):
    window.use_config(LaunchConfig(model="sample:mlp", steady=1))
    plan_intra(window, repeat=5, warmup=0)
    pids = []

    def on_trial(trial, record):
        if window.sweeper.sweep.trials_run >= 2 and not pids:
            pids.append(window.sweeper._processes[0])
            window.cancel_run()

    window.sweeper.trial_started.connect(on_trial)
    with qtbot.waitSignal(window.sweeper.finished, timeout=SWEEP_TIMEOUT_MS) as finished:
        window.start_sweep()
    sweep, status = finished.args
    assert status == "cancelled" and sweep.trials_run == 2
    assert History(history_path()).list_sweeps()[0][3] == "cancelled"
    runs = History(history_path()).list_runs()
    assert sorted(r.status for r in runs) == ["cancelled", "ok", "ok"], \
        "the two finished trials stay in history, and the cancelled one says so"
    assert not [p for p in psutil.Process().children(recursive=True) if "core/probe" in " ".join(p.cmdline())]
    assert "cancelled" in window.sweep_view.status.text() and window.run_action.isEnabled()


def test_a_bad_plan_is_refused_with_the_reason(window):
    window.sweep_view.env_axis.setText("=a,b")
    window.start_sweep()
    assert window.sweep_view.status.text().startswith("Cannot start: Write the environment variable")
    window.sweep_view.env_axis.clear()
    plan_intra(window, values="x")
    window.start_sweep()
    assert "'x' is not a value for intra" in window.sweep_view.status.text()
    assert window.run_action.isEnabled()
