"""The menu's Start sweep and Compare reach the tabs they stand for, and say what is
missing when they cannot act."""

from __future__ import annotations


def test_start_sweep_from_the_menu_shows_the_sweep_tab_and_why_it_waits(qtbot, window):
    window.window_actions.sweep.trigger()
    assert window.tabs.currentWidget() is window.sweep_view
    button = window.sweep_view.start_button
    if button.isEnabled():  # nothing to vary: the tab says so where the plan is read
        assert window.sweep_view.status.text().startswith("Cannot start:")
    else:
        assert window.statusBar().currentMessage() == button.toolTip()


def test_compare_from_the_menu_without_a_selection_says_how_to_select(qtbot, window):
    window.window_actions.compare.trigger()
    assert window.tabs.currentWidget() is window.history_view
    assert window.statusBar().currentMessage().startswith("Select two or more runs in History")
