"""Scrolling the settings with the mouse wheel never changes a setting the pointer passes
over; the wheel changes a control only once the user has given it focus."""

from __future__ import annotations

from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QWheelEvent
from PySide6.QtWidgets import QApplication, QWidget

from tflaunch.gui.widgets.wheel_guard import scroll_area_of


def _wheel(widget: QWidget, steps: int = -1) -> None:
    """One notch of a real wheel (120 units a notch) over the middle of `widget`."""
    centre = QPointF(widget.rect().center())
    event = QWheelEvent(centre, QPointF(widget.mapToGlobal(centre.toPoint())), QPoint(0, 0), QPoint(0, 120 * steps),
                        Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier, Qt.ScrollPhase.NoScrollPhase, False)
    QApplication.sendEvent(widget, event)


def test_the_wheel_over_a_setting_without_focus_scrolls_instead(qtbot, make_window):
    window = make_window(size=(1024, 700))  # small: the settings panel scrolls
    combo = window.panel.editors["log_level"].widget
    before = window.panel.config().log_level
    window.panel.setFocus()
    assert not combo.hasFocus()
    assert combo.focusPolicy() == Qt.FocusPolicy.StrongFocus, "the wheel alone does not give it focus"
    area = scroll_area_of(combo)
    assert area is not None and area.verticalScrollBar().maximum() > 0, "at 1024x700 the settings scroll"
    top = area.verticalScrollBar().value()
    for _ in range(3):
        _wheel(combo)
    assert window.panel.config().log_level == before, "the log level changed under a scrolling pointer"
    assert area.verticalScrollBar().value() > top, "the panel scrolled instead"

    combo.setFocus()
    qtbot.waitUntil(combo.hasFocus)
    _wheel(combo)
    assert window.panel.config().log_level != before, "a focused control still takes the wheel"


def test_the_sweep_tab_trials_keep_their_value_under_the_wheel(qtbot, make_window):
    window = make_window(size=(1024, 700))
    window.tabs.setCurrentIndex(4)  # Sweep: its page is built when first shown
    qtbot.waitUntil(lambda: hasattr(window, "sweep_view"))
    repeat = window.sweep_view.repeat
    value = repeat.value()
    window.sweep_view.setFocus()
    _wheel(repeat)
    _wheel(repeat, +1)
    _wheel(repeat, +1)
    assert repeat.value() == value, "trials per setting changed under a scrolling pointer"


def test_the_guard_comes_back_after_a_window_that_never_painted(qtbot, settings_file):
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QComboBox

    from tflaunch.core.paths import history_path, profiles_dir
    from tflaunch.core.store.history import History
    from tflaunch.core.store.profiles import ProfileStore
    from tflaunch.gui.app import create_app
    from tflaunch.gui.shell.main_window import MainWindow
    from tflaunch.gui.widgets.wheel_guard import WheelGuard

    app = create_app()
    guard = app.findChild(WheelGuard, "tflaunch-wheel-guard")
    window = MainWindow(QSettings(str(settings_file), QSettings.Format.IniFormat), History(history_path()),
                        ProfileStore(profiles_dir()))
    assert guard.aside, "aside while the window builds and first paints"
    window.deleteLater()  # never shown: no first paint to bring it back
    qtbot.waitUntil(lambda: not guard.aside, timeout=5000)
    combo = QComboBox()
    qtbot.addWidget(combo)
    combo.show()
    qtbot.waitUntil(lambda: combo.focusPolicy() == Qt.FocusPolicy.StrongFocus)


def test_a_window_closed_before_its_first_paint_gives_the_guard_back_at_once(qtbot, settings_file):
    from PySide6.QtCore import QSettings

    from tflaunch.core.paths import history_path, profiles_dir
    from tflaunch.core.store.history import History
    from tflaunch.core.store.profiles import ProfileStore
    from tflaunch.gui.app import create_app
    from tflaunch.gui.shell.main_window import MainWindow
    from tflaunch.gui.widgets.wheel_guard import WheelGuard

    guard = create_app().findChild(WheelGuard, "tflaunch-wheel-guard")
    first = MainWindow(QSettings(str(settings_file), QSettings.Format.IniFormat), History(history_path()),
                       ProfileStore(profiles_dir()))
    qtbot.addWidget(first)
    first.show()
    first.close()  # before any event: no first paint
    assert not guard.aside, "the closed window still holds the guard aside"
    second = MainWindow(QSettings(str(settings_file), QSettings.Format.IniFormat), History(history_path()),
                        ProfileStore(profiles_dir()))
    qtbot.addWidget(second)
    assert guard.aside == 1
    second.show()
    qtbot.waitUntil(lambda: not guard.aside)
    combo = second.panel.editors["log_level"].widget
    assert combo.focusPolicy() == Qt.FocusPolicy.StrongFocus
