"""The window from the keyboard: Tab follows the screen through the settings, the tabs'
main buttons have menu items and shortcuts, and Tab in History keeps the runs selected."""

from __future__ import annotations

from itertools import pairwise

from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QApplication, QWidget

from .test_history_and_profiles import stored


def _tab_stops(panel: QWidget) -> list[QWidget]:
    """The panel's widgets in the order Tab visits them, from the first."""
    stops: list[QWidget] = []
    widget = panel.nextInFocusChain()
    for _ in range(2000):
        if panel.isAncestorOf(widget) and widget.focusPolicy() & Qt.FocusPolicy.TabFocus \
                and widget.isVisibleTo(panel) and widget.isEnabled() and widget.focusProxy() is None \
                and widget not in stops:
            stops.append(widget)
        widget = widget.nextInFocusChain()
        if widget is panel:
            break
    return stops


def test_tab_follows_the_settings_down_the_screen(qtbot, window):
    panel = window.panel
    for subject in (0, 1):
        panel.subject.setCurrentIndex(subject)
        stops = _tab_stops(panel)
        assert stops[0] is panel.subject, [type(w).__name__ for w in stops[:5]]
        for wa, wb in pairwise(stops):
            a, b = wa.mapTo(panel, QPoint(0, 0)), wb.mapTo(panel, QPoint(0, 0))
            assert b.y() > a.y() or (b.y() >= a.y() - 8 and b.x() > a.x()), (wa, wb, a, b)


def test_tab_from_the_subject_reaches_the_program_field(qtbot, window):
    panel = window.panel
    panel.subject.setCurrentIndex(1)
    window.activateWindow()
    panel.subject.setFocus()
    qtbot.waitUntil(panel.subject.hasFocus)
    qtbot.keyClick(panel.subject, Qt.Key.Key_Tab)
    assert QApplication.focusWidget() is panel.program


def _menu_item(window, text: str):
    for menu_action in window.menuBar().actions():
        for action in menu_action.menu().actions():
            if action.text().replace("&", "") == text:
                return action
    raise AssertionError(f"no menu item {text!r}")


def test_compare_sweep_and_examine_have_menu_items_and_shortcuts(qtbot, make_window):
    ids = stored(3)
    window = make_window()
    compare = _menu_item(window, "Compare selected runs")
    sweep = _menu_item(window, "Start sweep")
    examine = _menu_item(window, "Examine with the Advisor")
    shortcuts = {a.shortcut().toString() for a in (compare, sweep, examine)}
    assert "" not in shortcuts and len(shortcuts) == 3
    every = [a.shortcut() for m in window.menuBar().actions() for a in m.menu().actions() if not a.shortcut().isEmpty()]
    assert len(every) == len({s.toString() for s in every}), "no shortcut is given twice"
    # With fewer than two runs selected, Compare says how to select them.
    compare.trigger()
    assert window.tabs.currentWidget() is window.history_view
    assert "Select two or more runs" in window.statusBar().currentMessage()
    window.history_view.select_ids(ids[:2])
    qtbot.keyClick(window.history_view.table, compare.shortcut()[0].key(), compare.shortcut()[0].keyboardModifiers())
    assert window.tabs.currentWidget() is window.compare_view
    assert len(window.compare_view.runs) == 2
    assert compare.shortcut() == QKeySequence("Ctrl+M")


def test_tab_in_history_keeps_the_selection(qtbot, make_window):
    ids = stored(4)
    window = make_window()
    view = window.history_view
    window.tabs.setCurrentWidget(view)
    qtbot.waitUntil(lambda: view.model.rowCount() == 4)
    view.select_ids(ids[1:3])
    view.table.setFocus()
    qtbot.keyClick(view.table, Qt.Key.Key_Tab)
    assert sorted(view.selected_ids()) == sorted(ids[1:3])
