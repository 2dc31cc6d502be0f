"""Every tab's main table has room at 1024x700 and 1360x860 (issue 42, item 6): an empty
Runs dock gives its room back (Compare's table showed 2.5 rows beside an empty 140 px dock),
and the first run takes it again."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QTableWidget

from tests.builders import finished_record

from ..compare_builders import sides

SIZES = [(1024, 700), (1360, 860)]


def visible_rows(table) -> float:
    return table.viewport().height() / table.verticalHeader().defaultSectionSize()


@pytest.mark.parametrize("size", SIZES)
def test_an_empty_runs_dock_gives_compare_its_room(qtbot, make_window, size):
    window = make_window(size=size)
    view = window.compare_view
    window.tabs.setCurrentWidget(view)
    view.show_runs(sides(3, runs_each=3))
    table = view.findChild(QTableWidget)  # the phases table
    qtbot.waitUntil(lambda: visible_rows(table) >= 6)
    # The empty dock keeps a header and a row, no more.
    assert window.runs_dock.height() <= 80, window.runs_dock.height()
    assert not table.horizontalScrollBar().isVisible()


def test_each_run_gives_the_dock_a_row_up_to_its_room_and_a_dragged_height_is_kept(qtbot, make_window):
    from PySide6.QtCore import Qt

    from tflaunch.gui.shell.dock_room import ROOM

    window = make_window(size=(1024, 700))
    dock, table = window.runs_dock, window.run_list
    qtbot.waitUntil(lambda: dock.height() <= 80)
    empty = dock.height()
    window.run_list.add_record(finished_record())
    qtbot.wait(50)
    assert dock.height() == empty, "one run fills the one row the empty dock kept: no empty rows under it"
    for _ in range(2):
        window.run_list.add_record(finished_record())
    row = table.verticalHeader().defaultSectionSize()
    qtbot.waitUntil(lambda: dock.height() >= empty + 2 * row - 4)
    grown = dock.height()
    for _ in range(6):
        window.run_list.add_record(finished_record())
    qtbot.wait(200)
    # No more than its room, the Log's tab bar under it included: the table scrolls.
    assert grown <= dock.height() <= ROOM - 10, (grown, dock.height())
    window.resizeDocks([dock], [empty + row], Qt.Orientation.Vertical)  # the user drags it smaller
    qtbot.waitUntil(lambda: dock.height() <= empty + row + 4)
    dragged = dock.height()
    window.run_list.add_record(finished_record())
    qtbot.wait(50)
    assert dock.height() == dragged


@pytest.mark.parametrize("size", SIZES)
def test_a_fresh_history_shows_its_settings_and_six_rows(qtbot, make_window, size):
    from tflaunch.gui.history.history_table import MODEL, SETTINGS
    from tflaunch.gui.history.history_view import SETTINGS_LEAST

    from .test_history_and_profiles import stored
    from .test_small_screen import LONG_MODEL

    stored(8, model=LONG_MODEL)
    window = make_window(size=size)
    view = window.history_view
    window.tabs.setCurrentWidget(view)
    qtbot.waitUntil(lambda: view.model.rowCount() == 8 and not view.loading)
    table = view.table
    qtbot.waitUntil(lambda: visible_rows(table) >= 6)
    # Every column in view, without scrolling sideways: the settings too (they were scrolled out).
    qtbot.waitUntil(lambda: table.horizontalScrollBar().maximum() == 0)
    assert table.columnWidth(SETTINGS) >= SETTINGS_LEAST
    if size == (1360, 860):  # room for the whole file name beside the settings
        name = LONG_MODEL.rsplit("/", 1)[1]
        assert table.columnWidth(MODEL) >= table.fontMetrics().horizontalAdvance(f"…/{name}")


def rows_in_sight(scroll, widgets) -> int:
    """How many of `widgets` (one per row of a form) are wholly in the scroll area's view."""
    viewport = scroll.viewport()
    seen = set()
    for widget in widgets:
        top = widget.mapTo(viewport, widget.rect().topLeft()).y()
        if widget.isVisible() and top >= 0 and top + widget.height() <= viewport.height():
            seen.add(top)
    return len(seen)


@pytest.mark.parametrize("size", SIZES)
def test_a_fresh_sweep_tab_shows_six_rows_of_the_plan_and_of_the_results(qtbot, make_window, size):
    window = make_window(size=size)
    view = window.sweep_view
    window.tabs.setCurrentWidget(view)
    boxes = [box for box, _values in view.form.axes.values()]
    # The Vary box showed 3 rows at 1024x700, the results table 4.5 (issue 42).
    qtbot.waitUntil(lambda: rows_in_sight(view._plan_scroll, boxes) >= 6)
    qtbot.waitUntil(lambda: visible_rows(view.table) >= 6)
    # Nothing to say yet, so no room taken: the verdict and the progress bar wait for a sweep.
    assert view.verdict.isHidden() and view.progress.isHidden()


@pytest.mark.parametrize("size", SIZES)
def test_the_advisor_and_profiles_tabs_show_six_rows_without_scrolling_sideways(qtbot, make_window, size):
    window = make_window(size=size)
    advisor = window.advisor_view
    window.tabs.setCurrentWidget(advisor)
    qtbot.waitUntil(lambda: visible_rows(advisor.table) >= 6)
    header = advisor.table.horizontalHeader()
    assert header.length() <= advisor.table.viewport().width(), "every column in view"
    profiles = window.profiles_view
    window.tabs.setCurrentWidget(profiles)
    row = profiles.list.fontMetrics().lineSpacing()
    qtbot.waitUntil(lambda: profiles.list.viewport().height() >= 6 * row)


def test_a_fresh_sweep_tab_at_1360_shows_every_results_column(qtbot, make_window):
    window = make_window(size=(1360, 860))
    view = window.sweep_view
    window.tabs.setCurrentWidget(view)
    # An empty table scrolled its last columns out of sight beside an empty chart.
    qtbot.waitUntil(lambda: view.table.horizontalHeader().length() <= view.table.viewport().width())
    assert view.chart.width() >= view.chart.minimumWidth()


def test_after_resizing_from_1360_to_1024_the_tables_keep_their_room(qtbot, make_window):
    from tflaunch.gui.history.history_table import SETTINGS
    from tflaunch.gui.history.history_view import SETTINGS_LEAST

    from .test_history_and_profiles import stored
    from .test_small_screen import LONG_MODEL

    stored(8, model=LONG_MODEL)
    window = make_window(size=(1360, 860))
    history = window.history_view
    window.tabs.setCurrentWidget(history)
    qtbot.waitUntil(lambda: history.model.rowCount() == 8 and not history.loading)
    window.resize(1024, 700)
    qtbot.waitUntil(lambda: window.width() == 1024 and window.height() == 700)
    table = history.table
    qtbot.waitUntil(lambda: table.horizontalScrollBar().maximum() == 0 and visible_rows(table) >= 6)
    assert table.columnWidth(SETTINGS) >= SETTINGS_LEAST
    assert window.runs_dock.height() <= 80, "the empty dock stays small"
    sweep = window.sweep_view
    window.tabs.setCurrentWidget(sweep)
    qtbot.waitUntil(lambda: visible_rows(sweep.table) >= 6)


def test_the_log_raised_has_room_for_its_lines_and_the_runs_get_their_height_back(qtbot, make_window):
    """Seen under Xvfb at 1024x700: the Log's tab raised in the one-run dock showed its search
    bar and one blank line of text (18 px) of a log of 13 lines."""
    from tflaunch.gui.shell.dock_room import LOG_LINES

    window = make_window(size=(1024, 700))
    window.run_list.add_record(finished_record())
    window.log.append_lines([f"line {i}" for i in range(40)])
    qtbot.waitUntil(lambda: window.runs_dock.height() <= 80)
    runs = window.runs_dock.height()
    window.log_dock.raise_()
    text = window.log.text
    qtbot.waitUntil(lambda: text.viewport().height() >= LOG_LINES * text.fontMetrics().lineSpacing())
    window.runs_dock.raise_()
    qtbot.waitUntil(lambda: abs(window.runs_dock.height() - runs) <= 4)
