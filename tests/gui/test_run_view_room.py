"""The run view gives the memory graph the room: the phase table and the waterfall are as
high as the table's rows and no higher, at every window size; the graph takes the rest."""

from __future__ import annotations

import pytest

from ..builders import finished_record


@pytest.mark.parametrize("size", [(1024, 700), (1600, 1000), (2560, 1440)])
def test_the_memory_graph_gets_what_the_table_does_not_need(qtbot, make_window, size):
    window = make_window(size=size)
    view = window.run_view
    for ready in (0.4, 0.5, 0.6):  # the session's runs below, as after a morning's work
        window.run_list.add_record(finished_record(ready_s=ready))
    view.show_record(finished_record())
    qtbot.wait(50)  # the splitters settle after the show
    table_area = view._phases_area
    needed = view.phases.content_height() + table_area.horizontalScrollBar().sizeHint().height()
    assert table_area.height() <= needed + 2, f"{table_area.height() - needed} px blank under the table at {size}"
    table = view.phases
    last = table.rowViewportPosition(table.rowCount() - 1) + table.rowHeight(table.rowCount() - 1)
    visible = table.viewport().mapTo(table_area.viewport(), table.viewport().rect().topLeft()).y() + last
    assert visible <= table_area.viewport().height(), f"the last phase row is cut at {size}"
    graph = view.memory.height()
    assert graph >= 150, f"the memory graph has {graph} px at {size}"
    if size != (1024, 700):
        assert graph >= table_area.height(), f"the graph ({graph} px) < the table"


def test_at_1024_the_duration_column_is_whole_beside_a_vertical_scroll_bar(qtbot, make_window):
    """Seen under Xvfb: a program's rows outgrew the table's height at 1024x700, the vertical
    scroll bar came, and the Duration column read "132 m" and "3.83 s" without their ends."""
    window = make_window(size=(1024, 700))
    view = window.run_view
    view.show_record(finished_record())
    qtbot.wait(50)
    area = view._phases_area
    needed = view.phases.columns_width(3) + area.verticalScrollBar().sizeHint().width()
    assert window.width() == 1024 and area.width() >= needed, (area.width(), needed)


def test_at_1360_every_column_is_whole_beside_a_vertical_scroll_bar(qtbot, make_window):
    window = make_window(size=(1360, 860))
    view = window.run_view
    view.show_record(finished_record())
    qtbot.wait(50)
    area = view._phases_area
    assert area.width() >= view.phases.width() + area.verticalScrollBar().sizeHint().width()


@pytest.mark.parametrize("size", [(1024, 700), (1360, 860)])
def test_no_phase_column_is_cut_or_scrolled_to_and_narrow_the_memory_is_in_the_tooltip(qtbot, make_window, size):
    """Seen in a screenshot at 1024x700: the RSS column cut at its header ("RSS") and its
    figures ("5"), reached only by a sideways scroll bar under the rows. Where the memory
    columns do not fit whole they are left out and each phase's memory is in its tooltip."""
    window = make_window(size=size)
    view = window.run_view
    record = finished_record()
    view.show_record(record)
    qtbot.waitUntil(lambda: view.phases.narrow == (size == (1024, 700)))
    area, table = view._phases_area, view.phases
    shown = [c for c in range(table.columnCount()) if not table.isColumnHidden(c)]
    assert area.horizontalScrollBar().maximum() == 0
    assert table.columns_width(table.columnCount()) + area.verticalScrollBar().sizeHint().width() <= area.width()
    if size == (1024, 700):
        assert shown == [0, 1, 2] and view._waterfall_place.width() >= 260
        row = list(table._rows).index("load")
        assert "RSS of the process tree: " in table.item(row, 0).toolTip() and " MiB at its peak." in \
            table.item(row, 0).toolTip()
    else:
        assert shown == [0, 1, 2, 3, 4] and "RSS of the process tree" not in table.item(1, 0).toolTip()
    window.resize(1360, 860) if size == (1024, 700) else window.resize(1024, 700)
    qtbot.waitUntil(lambda: view.phases.narrow == (size != (1024, 700)))  # and back on a resize
    qtbot.waitUntil(lambda: area.horizontalScrollBar().maximum() == 0)


def test_a_dragged_handle_leaves_the_memory_columns_out_as_a_narrow_window_does(qtbot, make_window):
    """Moving the handle between the table and the waterfall resizes neither: the table kept its
    memory columns in a viewport too narrow for them, cut, with no scroll bar to reach them."""
    window = make_window(size=(1400, 860))
    view = window.run_view
    record = finished_record()
    record.phases["load"].peak_rss = None  # a phase that reported one figure of the two
    view.show_record(record)
    qtbot.waitUntil(lambda: not view.phases.narrow)
    top = view._top
    top.moveSplitter(view.phases.columns_width(3) + 40, 1)  # as a drag: splitterMoved
    qtbot.waitUntil(lambda: view.phases.narrow)
    area = view._phases_area
    assert view.phases.minimumWidth() <= area.viewport().width()
    tip = view.phases.item(list(view.phases._rows).index("load"), 0).toolTip()
    assert tip.endswith(" at its end.") and "peak" not in tip.splitlines()[-1]
    top.moveSplitter(top.width() - 300, 1)
    qtbot.waitUntil(lambda: not view.phases.narrow)


def test_the_summary_says_only_the_versions_the_child_said(qtbot, make_window):
    """A child that named its Python but not its cores read "TensorFlow None · ... · None cores"."""
    from tflaunch.core.run.environment_facts import EnvironmentFacts

    window = make_window(size=(1360, 860))
    record = finished_record()
    record.environment = EnvironmentFacts({"python": "3.12.1", "cores": "many"})
    window.run_view.show_record(record)
    text = window.run_view.summary.settings.text().replace("\u200b", "")
    assert "Python 3.12.1" in text and "None" not in text and "cores" not in text


def test_rows_beyond_the_tables_height_scroll_into_view_at_1024(qtbot, make_window):
    """Seen under Xvfb: an anatomy run's fifteen rows at 1024x700 with runs docked below showed
    ten, the rest (Data, Other, Steady state) cut off with no scroll bar: the table was held to
    nine rows' height and shrunk to the area, whose scroll bar then had nothing to scroll."""
    from ..builders import record_through

    window = make_window(size=(1024, 700))
    view = window.run_view
    for ready in (0.4, 0.5, 0.6):
        window.run_list.add_record(finished_record(ready_s=ready))
    spans = [f"span_{i}" for i in range(9)]
    view.show_record(record_through(["import", "devices", "build", "compile", "first_step", *spans, "steady"]))
    qtbot.wait(50)
    area, table = view._phases_area, view.phases
    assert table.rowCount() >= 15
    bar = area.verticalScrollBar()
    assert bar.maximum() > 0, "rows cut off, and nothing to scroll to them"
    bar.setValue(bar.maximum())
    last = table.rowViewportPosition(table.rowCount() - 1) + table.rowHeight(table.rowCount() - 1)
    bottom = table.viewport().mapTo(area.viewport(), table.viewport().rect().topLeft()).y() + last
    assert bottom <= area.viewport().height(), "the last row is in view at the end of the scroll"
