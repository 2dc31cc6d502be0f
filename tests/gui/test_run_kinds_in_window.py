"""The kind of a run in the window: History and the Runs dock say which runs are not plain
(an anatomy run, a warm launch that paid the warm server's start), and Compare puts them on
sides of their own (an anatomy run was listed like any other and pooled into a 6-run side)."""

from __future__ import annotations

from contextlib import closing

from tflaunch.core.paths import history_path
from tflaunch.core.store.history import History
from tflaunch.gui.history.history_table import ID_ROLE, STATUS

from ..test_run_kind import anatomy_run, warm_runs
from .conftest import NO_GPU  # noqa: F401 (the window's fixture uses it)


def test_history_runs_and_compare_show_the_kind(qtbot, make_window, screenshot):
    from ..compare_builders import side

    plain = side([1.6, 1.61, 1.62, 1.63, 1.64], at=1_700_000_000.0)
    profiled = anatomy_run(15.8, 0, at=1_700_000_010.0)
    server, warm = warm_runs([47.0, 2.5], 0, 1_700_000_020.0, server_first=True)
    with closing(History(history_path())) as history:
        ids = [history.record(r, "gui") for r in (*plain, profiled, server, warm)]
    window = make_window()
    window.tabs.setCurrentWidget(window.history_view)
    view = window.history_view
    qtbot.waitUntil(lambda: view.model.rowCount() == len(ids))
    status = {view.model.item(r, 0).data(ID_ROLE): view.model.item(r, STATUS) for r in range(view.model.rowCount())}
    assert status[ids[0]].text() == "ok" and status[ids[5]].text() == "ok, anatomy"
    assert status[ids[6]].text() == "ok, warm + server start" and status[ids[7]].text() == "ok, warm"
    assert "profiler was on" in status[ids[5]].toolTip() and "started one" in status[ids[6]].toolTip()
    screenshot(window, "history-kinds")

    window.run_list.add_record(window.history_view.load([ids[5]])[0])
    assert window.run_list.item(window.run_list.rowCount() - 1, 5).text() == "ok, anatomy"

    window.stored_runs.compare(ids[:6])
    compare = window.compare_view
    assert [s.n for s in compare.sides] == [5, 1], "the anatomy run is a side of its own"
    assert [compare.baseline.itemText(i) for i in range(compare.baseline.count())][1].endswith("(anatomy)")
    assert compare.phases.horizontalHeaderItem(1).text() == f"#{ids[5]} (anatomy)"
    screenshot(window, "compare-anatomy-apart")


def test_a_profile_is_not_saved_from_runs_of_different_kinds(qtbot, tmp_path):
    """History's Save as profile pooled an anatomy run's phases into a profile's evidence."""
    from PySide6.QtWidgets import QWidget

    from tflaunch.core.store.profiles import ProfileStore
    from tflaunch.gui.profiles.profile_saver import ProfileSaver

    from ..compare_builders import side

    parent = QWidget()
    qtbot.addWidget(parent)
    store = ProfileStore(tmp_path / "profiles")
    saver = ProfileSaver(store, parent)
    with qtbot.waitSignal(saver.message) as said:
        assert not saver.save_runs("mixed", [*side([1.6, 1.61]), anatomy_run(15.8, 3)])
    assert said.args[0].startswith("Profile not saved: the runs were measured in different ways (plain, anatomy")
    assert not store.entries()
