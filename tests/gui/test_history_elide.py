"""History's subjects elided as paths: whole folders go from the middle, the file name stays
("/tmp/…/model.keras", "…/model.keras", then "…el.keras"), measured with the font the table
draws in; and in a 1024×700 window, the text the table draws is that one, not Qt's
"/tmp…eras"."""

from __future__ import annotations

from contextlib import closing

from PySide6.QtCore import Qt
from PySide6.QtGui import QFontMetrics
from PySide6.QtWidgets import QApplication, QProxyStyle, QStyle

from tflaunch.core.paths import history_path
from tflaunch.core.store.history import History
from tflaunch.gui.history.history_table import MODEL
from tflaunch.gui.widgets.elide_delegate import elided_path

from ..builders import finished_record, store_old_script_run

PATH = "/tmp/some/long/path/model.keras"


def test_a_path_keeps_its_file_name_and_loses_whole_folders_from_the_middle(qtbot):
    metrics = QFontMetrics(QApplication.font())
    width = metrics.horizontalAdvance

    def shown(text: str, pixels: int) -> str:
        out = elided_path(text, metrics, pixels)
        assert width(out) <= pixels, (out, pixels)
        return out

    assert shown(PATH, width(PATH)) == PATH
    assert shown(PATH, width("/tmp/some/…/path/model.keras")) == "/tmp/some/…/path/model.keras"
    assert shown(PATH, width("/tmp/…/path/model.keras")) == "/tmp/…/path/model.keras"
    assert shown(PATH, width("/tmp/…/model.keras")) == "/tmp/…/model.keras"
    assert shown(PATH, width("/tmp/…/model.keras") - 1) == "…/model.keras"
    assert shown(PATH, width("…/model.keras") - 1) == "…model.keras"
    assert shown(PATH, width("…el.keras")) == "…el.keras"
    for pixels in range(width("…/model.keras"), width(PATH), 3):  # every width between: the name whole
        assert shown(PATH, pixels).endswith("/model.keras")
    script = "script: /home/me/My Projects/deep/train.py"  # a folder with a space
    assert shown(script, width("script: /home/me/…/deep/train.py")) == "script: /home/me/…/deep/train.py"
    assert shown(script, width("script: …/train.py")) == "script: …/train.py"
    program = "python proj/train.py --epochs 3 --batch 64"  # a program's command line: the words after it go
    assert shown(program, width("python …/train.py --epochs 3 --batch 64")) == "python …/train.py --epochs 3 --batch 64"
    assert shown(program, width("python …/train.py --epochs 3…")).startswith("python …/train.py --epochs")
    assert shown("sample:mlp", width("sample:mlp")) == "sample:mlp"
    assert "…" in shown("sample:a-model-built-by-code", 60), "no path: elided in the middle, as before"


class DrawnText(QProxyStyle):
    """The text a table's cells are given to draw, by row."""

    def __init__(self) -> None:
        super().__init__()  # over the application's style (a base given would be owned, and deleted, by it)
        self.texts: dict[int, tuple[str, int]] = {}

    def drawControl(self, element, option, painter, widget=None) -> None:  # noqa: N802 (Qt's name)
        if element == QStyle.ControlElement.CE_ItemViewItem and option.index.column() == MODEL:
            self.texts[option.index.row()] = (option.text, option.rect.width())
        super().drawControl(element, option, painter, widget)


def test_history_in_a_small_window_shows_the_model_file_and_the_script_name(qtbot, make_window):
    deep = "/tmp/some/long/path/to/the/experiments/2026/run-17/checkpoints/model.keras"
    with closing(History(history_path())) as history:
        history.record(finished_record(deep, at=1000.0), "cli")
        store_old_script_run(history, ["python", "/home/me/projects/vision/experiments/training/train.py"],
                             at=2000.0, ran_s=1.0)
    window = make_window(size=(1024, 700))
    view = window.history_view
    window.tabs.setCurrentWidget(view)
    qtbot.waitUntil(lambda: view.table.isVisible())
    style = DrawnText()
    view.table.setStyle(style)
    try:
        view.table.viewport().repaint()
    finally:
        view.table.setStyle(None)  # the table does not own it
    assert window.width() == 1024 and len(style.texts) == 2
    metrics, margin = view.table.fontMetrics(), 2 * (style.pixelMetric(QStyle.PixelMetric.PM_FocusFrameHMargin) + 1)
    for row, (text, cell) in style.texts.items():
        whole = view.proxy.index(row, MODEL).data()
        assert metrics.horizontalAdvance(whole) > cell, f"{whole} fits: the test shows nothing"
        assert metrics.elidedText(text, Qt.TextElideMode.ElideRight, cell - margin) == text, "drawn as given"
        assert text.endswith(("/model.keras", "/train.py")) and "…" in text, "the file name, whole"
        assert text.startswith(("/tmp/", "…/", "script: ")), text
        assert view.proxy.index(row, MODEL).data(Qt.ItemDataRole.ToolTipRole) == whole

