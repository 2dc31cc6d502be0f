"""File > Export as trace…: the runs the current tab shows, written as a Chrome trace that
the strict loader (tests/trace_checker.py) reads back with one process per run."""

from __future__ import annotations

from tflaunch.core.paths import history_path
from tflaunch.core.store.history import History

from ..builders import finished_record
from ..trace_checker import load
from .test_file_dialogs import Dialogs


def test_the_menu_exports_the_run_shown_then_the_runs_compared(qtbot, window, monkeypatch, tmp_path):
    dialogs = Dialogs(monkeypatch)
    window.window_actions.export_trace.trigger()
    assert window.statusBar().currentMessage().startswith("Nothing to export as a trace here")
    history = History(history_path())
    ids = [history.record(finished_record(), "app"), history.record(finished_record(model="sample:cnn"), "app")]
    history.close()
    window.stored_runs.show(ids[0])
    dialogs.answers = [str(tmp_path / "one")]
    window.window_actions.export_trace.trigger()
    assert dialogs.asked[-1].endswith(f"tflaunch-run-{ids[0]}.trace.json")
    assert window.statusBar().currentMessage().startswith("Trace of 1 run written to")
    assert load(tmp_path / "one.trace.json").processes == {1: f"Run {ids[0]}: sample:mlp"}
    window.stored_runs.compare(ids)
    dialogs.answers = [str(tmp_path / "both.trace.json.gz")]
    window.window_actions.export_trace.trigger()
    trace = load(tmp_path / "both.trace.json.gz")
    assert sorted(trace.processes.values()) == [f"Run {ids[0]}: sample:mlp", f"Run {ids[1]}: sample:cnn"]
