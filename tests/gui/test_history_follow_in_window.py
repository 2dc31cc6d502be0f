"""The window's History tab follows the file: a run `tflaunch bench` stores in a terminal
appears within a second, and the window's own run is added when the window refreshes the
tab after it, without the tab listing every run again; F5 lists them all again."""

from __future__ import annotations

from PySide6.QtCore import Qt

from tflaunch.core.paths import history_path

from ..big_history import NEWEST, big_history
from ..builders import finished_record
from ..test_history_follow import RUNS, listed, other_process


def test_the_window_shows_runs_stored_elsewhere_and_its_own_without_listing_all_again(qtbot, make_window):
    path = big_history(history_path(), RUNS)
    window = make_window(size=(1024, 700))
    view = window.history_view
    window.tabs.setCurrentWidget(view)
    qtbot.waitUntil(lambda: not view.loading and view.model.rowCount() == RUNS, timeout=20_000)
    resets: list[int] = []
    view.model.modelReset.connect(lambda: resets.append(1))

    from_terminal = int(other_process(path, "add", NEWEST + 60))
    qtbot.waitUntil(lambda: from_terminal in listed(view), timeout=1500)
    own = window.history.record(finished_record("mine", at=NEWEST + 120), "gui")  # as the run's recorder
    window.refresh_history()  # what the window does when its run ends
    assert own in listed(view) and view.model.rowCount() == RUNS + 2 and not view.loading
    assert resets == [], "added, not listed again"
    qtbot.keyClick(view.table, Qt.Key.Key_F5)  # Refresh: every run listed again, on demand
    assert resets and view.loading
    qtbot.waitUntil(lambda: not view.loading, timeout=20_000)
    assert listed(view) == set(range(1, RUNS + 1)) | {from_terminal, own}
