"""What a page the user has not asked for costs nothing until asked for: the Sweep tab
opens without its cluster page, which is built, in its place, when a cluster sweep opens."""

from __future__ import annotations

from PySide6.QtWidgets import QComboBox


def test_the_sweep_tab_builds_its_cluster_page_only_when_a_cluster_sweep_opens(qtbot, window):
    window.tabs.setCurrentIndex(window.tabs.indexOf(window.sweep_view))
    view = window.sweep_view
    assert view._cluster is None, "the first open of the Sweep tab built the cluster page"
    merged = []
    view.cluster_merged.connect(lambda: merged.append(True))
    cluster = view.cluster  # as opening a cluster sweep's folder asks for it
    assert view.pages.indexOf(cluster) == 1 and view.cluster is cluster
    view.pages.setCurrentWidget(cluster)
    cluster.merged.emit()
    assert merged, "the cluster page's merge reaches the window through the Sweep tab"
    cluster.closed.emit()
    assert view.pages.currentIndex() == 0, "closed, the tab shows this machine's sweep again"


def test_a_page_built_later_is_wheel_guarded_like_the_first(qtbot, window):
    window.tabs.setCurrentIndex(window.tabs.indexOf(window.compare_view))
    combos = window.compare_view.findChildren(QComboBox) + window.sweep_view.findChildren(QComboBox)
    assert combos and all(combo.focusPolicy() != combo.focusPolicy().WheelFocus for combo in combos)


def test_the_run_tabs_graphs_are_built_right_after_the_first_paint(qtbot, window):
    assert window.run_view._waterfall is not None, "the window built its graphs after its first paint"
    assert window.run_view.memory.parent() is window.run_view._memory_place


def test_graphs_built_later_show_the_run_already_shown(qtbot):
    from tflaunch.gui.run.run_view import RunView

    from ..builders import finished_record

    view = RunView(graphs_later=True)
    qtbot.addWidget(view)
    assert view._waterfall is None and view._memory is None
    record = finished_record()
    view.record = record  # as show_record leaves it, had the graphs not been asked for yet
    view.build_graphs()
    assert view.memory.sample_times.size == len(record.samples)
    assert "load" in view.waterfall.bar_names
