"""The Advisor's strip plot: every run of the baseline and each arm, numbered as the
table's "#" column, its dots readable (3:1, WCAG's ratio for graphics) on a dark desktop."""

from __future__ import annotations

import pyqtgraph as pg
import pytest
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication

from tflaunch.core.settings.config import LaunchConfig
from tflaunch.gui.advisor.advisor_view import AdvisorView

from ..test_doctor_words import diagnosis

DARK = {QPalette.ColorRole.Window: "#2b2b2b", QPalette.ColorRole.WindowText: "#e0e0e0",
        QPalette.ColorRole.Base: "#1e1e1e", QPalette.ColorRole.Text: "#e0e0e0",
        QPalette.ColorRole.Button: "#3a3a3a", QPalette.ColorRole.ButtonText: "#e0e0e0"}


def wcag_contrast(a: QColor, b: QColor) -> float:
    """The contrast ratio of WCAG 2.x: (L1 + 0.05) / (L2 + 0.05) of relative luminances."""
    def luminance(color: QColor) -> float:
        def channel(c: float) -> float:
            return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4
        return 0.2126 * channel(color.redF()) + 0.7152 * channel(color.greenF()) + 0.0722 * channel(color.blueF())
    light, dark = sorted((luminance(a), luminance(b)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


@pytest.fixture
def dark_desktop():
    app = QApplication.instance()
    before = QPalette(app.palette())
    palette = QPalette(before)
    for role, colour in DARK.items():
        palette.setColor(role, QColor(colour))
    yield lambda: app.setPalette(palette)
    app.setPalette(before)


def dots(view: AdvisorView) -> list[QColor]:
    return [QColor(item.opts["brush"].color()) for item in view.strips.getPlotItem().getViewBox().allChildren()
            if isinstance(item, pg.ScatterPlotItem) and item.data.size]


def test_the_strip_plot_is_numbered_as_the_table_and_readable_on_a_dark_desktop(qtbot, dark_desktop):
    view = AdvisorView(None, LaunchConfig)
    qtbot.addWidget(view)
    view.resize(900, 700)
    view.show()
    qtbot.waitExposed(view)
    view.show_diagnosis(diagnosis())
    numbers = [view.table.item(r, 0).text() for r in range(view.table.rowCount())]
    ticks = [text for _, text in view.strips.getPlotItem().getAxis("bottom")._tickLevels[0]]
    assert ticks == [f"#{n}" for n in numbers if n] == ["#1", "#2", "#3"]
    assert view.table.horizontalHeaderItem(0).text() == "#"
    assert not view.strips.isHidden() and len(dots(view)) == 3
    dark_desktop()

    def readable() -> bool:
        background = view.strips.backgroundBrush().color()
        return background.lightnessF() < 0.2 and min(wcag_contrast(dot, background) for dot in dots(view)) >= 3.0

    qtbot.waitUntil(lambda: view.strips.backgroundBrush().color().lightnessF() < 0.2, timeout=3000)
    qtbot.waitUntil(readable, timeout=3000)
    background = view.strips.backgroundBrush().color()
    # Before: #0b57d0 on the dark background, about 2.6:1.
    assert min(wcag_contrast(dot, background) for dot in dots(view)) >= 3.0
