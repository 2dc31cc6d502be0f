"""The waterfall's duration labels stay inside the plot when its width changes after the
run is drawn (seen under Xvfb at 1024x700: "1.36 s" read "1.36", "210 ms in all" lost its end)."""

from __future__ import annotations

from tflaunch.gui.plots.waterfall import Waterfall

SPANS = {"spawn": (0.0, 0.13), "import": (0.15, 3.83), "build": (4.0, 0.19), "first_step": (4.2, 1.36)}


def _outside(plot: Waterfall) -> list[str]:
    box = plot.getPlotItem().getViewBox()
    right = box.sceneBoundingRect().right()
    return [label.toPlainText() for label in plot.labels
            if label.isVisible() and label.sceneBoundingRect().right() > right + 1]


def test_labels_fit_after_the_plot_narrows(qtbot):
    plot = Waterfall()
    qtbot.addWidget(plot)
    plot.resize(700, 240)
    plot.show()
    qtbot.waitExposed(plot)
    plot.show_spans(SPANS, gaps=[(3.98, 0.02), (4.19, 0.01)])
    qtbot.wait(20)
    assert not _outside(plot), _outside(plot)
    plot.resize(280, 240)
    qtbot.waitUntil(lambda: plot.getPlotItem().getViewBox().width() < 250)
    qtbot.wait(20)
    assert not _outside(plot), _outside(plot)
