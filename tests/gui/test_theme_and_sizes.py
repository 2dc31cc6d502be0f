"""The window on a dark desktop and on small screens: readable colours, plots included, and
layouts that fit 1024×700 with the numbers in view."""

from __future__ import annotations

import pyqtgraph as pg
import pytest
from PySide6.QtCore import QPointF, Qt
from PySide6.QtGui import QColor, QFontMetrics, QPalette
from PySide6.QtWidgets import QApplication, QLabel, QWidget

from tflaunch.core.paths import history_path
from tflaunch.core.report.compare import short_row_label, time_rows
from tflaunch.core.settings.config import Problem
from tflaunch.core.store.history import History
from tflaunch.gui.history.history_view import COLUMNS, MODEL, SETTINGS
from tflaunch.gui.plots.waterfall import Waterfall
from tflaunch.gui.run.run_view import WATERFALL_MIN_WIDTH
from tflaunch.gui.widgets.palette import contrast, luminance, page_background

from ..builders import finished_record

LONG_MODEL = "/home/alice/projects/vision-experiments-2026/checkpoints/resnet50_finetuned_imagenet_v2_epoch_120"
DARK = {QPalette.ColorRole.Window: "#2b2b2b", QPalette.ColorRole.WindowText: "#e0e0e0",
        QPalette.ColorRole.Base: "#1e1e1e", QPalette.ColorRole.AlternateBase: "#262626",
        QPalette.ColorRole.Text: "#e0e0e0", QPalette.ColorRole.Button: "#3a3a3a",
        QPalette.ColorRole.ButtonText: "#e0e0e0", QPalette.ColorRole.Highlight: "#2f65ca",
        QPalette.ColorRole.HighlightedText: "#ffffff", QPalette.ColorRole.ToolTipBase: "#3a3a3a",
        QPalette.ColorRole.ToolTipText: "#e0e0e0", QPalette.ColorRole.PlaceholderText: "#9a9a9a"}


def dark_palette() -> QPalette:
    """A desktop's dark theme, as Breeze Dark or Adwaita dark give it."""
    palette = QPalette()
    for role, color in DARK.items():
        palette.setColor(role, QColor(color))
    for role in (QPalette.ColorRole.WindowText, QPalette.ColorRole.Text, QPalette.ColorRole.ButtonText):
        palette.setColor(QPalette.ColorGroup.Disabled, role, QColor("#7f7f7f"))
    return palette


@pytest.fixture
def restore_palette():
    """Whatever a test does to the application's palette is undone after it."""
    app = QApplication.instance()
    before = QPalette(app.palette())
    yield app
    app.setPalette(before)


def stored_runs(count: int = 2, model: str = "sample:mlp") -> list[int]:
    history = History(history_path())
    ids = [history.record(finished_record(model=model, ready_s=1.0 + i / 2, intra=i, at=1000.0 + 10 * i), "gui")
           for i in range(count)]
    history.close()
    return ids


def plot_background(plot: pg.PlotWidget) -> QColor:
    return plot.backgroundBrush().color()


def text_colors(plot: pg.PlotWidget) -> list[QColor]:
    """Every text the plot draws: tick labels, axis titles, legend, labels in the view."""
    item = plot.getPlotItem()
    colors = [item.getAxis(side).textPen().color() for side in ("left", "bottom")]
    colors += [QColor(item.getAxis(side).labelStyle["color"]) for side in ("left", "bottom")
               if item.getAxis(side).labelText]
    if item.legend is not None:
        colors += [QColor(label.opts["color"]) for _sample, label in item.legend.items]
    colors += [QColor(t.color) for t in item.getViewBox().allChildren() if isinstance(t, pg.TextItem) and t.isVisible()]
    return colors


def label_contrast(label: QLabel) -> float:
    """The colour the label draws its text in (its foreground role's) against what it sits on:
    the window, or where it is on a tab's page, the page (the style's tab frame, not the window's
    colour: Fusion's dark page is #494949 on a #2b2b2b window), whichever is nearer the text."""
    palette = label.palette()
    text = palette.color(label.foregroundRole())
    return min(contrast(text, palette.color(QPalette.ColorRole.Window)), contrast(text, page_background(palette)))


def test_a_dark_desktop_gives_dark_plots_and_readable_text_and_light_comes_back(qtbot, make_window, restore_palette):
    ids = stored_runs()
    window = make_window()
    window.history_view.refresh()
    window.stored_runs.show(ids[1])
    window.stored_runs.compare(ids)
    view = window.run_view
    plots = [view.waterfall, view.memory, window.compare_view.bars, window.compare_view.memory,
             window.sweep_view.chart]
    assert all(luminance(plot_background(p)) > 0.9 for p in plots), "light desktop: white plots"

    restore_palette.setPalette(dark_palette())  # the desktop switches while the app runs
    qtbot.waitUntil(lambda: all(luminance(plot_background(p)) < 0.05 for p in plots), timeout=3000)
    qtbot.waitUntil(lambda: view.waterfall.labels and all(
        contrast(c, plot_background(view.waterfall)) >= 4.5 for c in text_colors(view.waterfall)), timeout=3000)
    for plot in plots:
        back = plot_background(plot)
        assert min(contrast(c, back) for c in text_colors(plot)) >= 4.5, plot
    big, caption = view.summary.ready, view.summary.ready_caption
    assert big.text().endswith(" s") and label_contrast(big) >= 4.5
    assert label_contrast(caption) >= 4.5 and label_contrast(caption) < label_contrast(big), "muted, still readable"
    headline = QColor(view.summary.headline.styleSheet().removeprefix("color: ").rstrip(";"))
    assert contrast(headline, page_background(view.summary.palette())) >= 4.5, "on the Run tab's page"
    status = window.history_view.model.item(0, 5)
    assert contrast(status.foreground().color(), dark_palette().color(QPalette.ColorRole.Base)) >= 4.5
    differing = window.compare_view.settings.item(0, 0)
    assert contrast(differing.foreground().color(), differing.background().color()) >= 4.5
    # The phase table's coloured names (Import in orange was about 3:1 even on white) and states.
    table, base = view.phases, dark_palette().color(QPalette.ColorRole.Base)
    for row in range(table.rowCount()):
        for col in (0, 1):
            brush = table.item(row, col).foreground()
            if brush.style() != Qt.BrushStyle.NoBrush:  # no brush: the palette's own text colour
                assert contrast(brush.color(), base) >= 4.5, table.item(row, 0).text()
    assert luminance(plot_background(Waterfall())) > 0.9, "review images draw the same classes, still light"
    window.panel.show_problems([Problem("intra", "Intra-op threads must be a whole number.")])
    error = QColor(window.panel._errors["intra"].styleSheet().removeprefix("color: ").rstrip(";"))
    assert contrast(error, window.panel.palette().color(QPalette.ColorRole.Window)) >= 4.5

    restore_palette.setPalette(QPalette(QColor("#efefef")))
    qtbot.waitUntil(lambda: all(luminance(plot_background(p)) > 0.9 for p in plots), timeout=3000)
    assert min(contrast(c, plot_background(view.waterfall)) for c in text_colors(view.waterfall)) >= 4.5
    assert label_contrast(big) >= 4.5 and label_contrast(caption) >= 4.5


def frame_extra(window) -> tuple[int, int]:
    return (window.frameGeometry().width() - window.width(), window.frameGeometry().height() - window.height())


def fit(qtbot, window, width: int, height: int) -> None:
    """The window's frame at width×height (a screen of that size)."""
    dx, dy = frame_extra(window)
    window.resize(width - dx, height - dy)
    try:
        qtbot.waitUntil(lambda: window.frameGeometry().width() <= width)
    except Exception as exc:  # pytest-qt's TimeoutError: say which part holds the window wide
        wide = sorted(((w.minimumSizeHint().width(), type(w).__name__, w.objectName(),
                        w.text()[:80] if isinstance(w, QLabel) else "")
                       for w in window.findChildren(QWidget) if w.minimumSizeHint().width() > 300), reverse=True)[:14]
        raise AssertionError(f"the window stays {window.frameGeometry().width()} px wide "
                             f"(minimum {window.minimumSizeHint().width()}); widest parts: {wide}") from exc


def in_view(header, section: int) -> bool:
    return header.sectionViewportPosition(section) >= 0 and (
        header.sectionViewportPosition(section) + header.sectionSize(section) <= header.viewport().width())


def visible_rows(table) -> int:
    height = table.viewport().height()
    return sum(0 <= table.rowViewportPosition(r) and table.rowViewportPosition(r) + table.rowHeight(r) <= height
               for r in range(table.rowCount()))


def overlapping_ticks(plot: pg.PlotWidget) -> list[str]:
    """Names on the bars' axis that run into their neighbour on the same line of text."""
    axis = plot.getPlotItem().getAxis("bottom")
    metrics = QFontMetrics(axis.style.get("tickFont") or plot.font())
    view = plot.getPlotItem().getViewBox()
    lines: dict[int, list[tuple[float, float, str]]] = {}
    for x, text in axis._tickLevels[0]:
        name = text.strip()
        lines.setdefault(text.count("\n"), []).append(
            (view.mapViewToScene(QPointF(x, 0)).x(), metrics.horizontalAdvance(name), name))
    return [b[2] for line in lines.values() for a, b in zip(line, line[1:], strict=False)
            if b[0] - a[0] < (a[1] + b[1]) / 2 + 2]


def test_long_paths_never_widen_the_window(qtbot, make_window, tmp_path, monkeypatch):
    """The History and Profiles tabs name their files: a deep home folder (here 300 characters)
    once made the window 1081 px wide. The paths are elided, whole in the tooltip."""
    deep = tmp_path / "/".join(["a-rather-long-folder-name-of-a-lab-share"] * 7)
    monkeypatch.setenv("TFLAUNCH_DATA_DIR", str(deep / "data"))
    monkeypatch.setenv("TFLAUNCH_CONFIG_DIR", str(deep / "config"))
    window = make_window(size=None)
    for tab in (window.history_view, window.profiles_view):  # built, so they count
        window.tabs.setCurrentWidget(tab)
    assert window.minimumSizeHint().width() + frame_extra(window)[0] <= 1024
    fit(qtbot, window, 1024, 700)
    caption = window.profiles_view.folder
    assert str(deep) in caption.toolTip() and "…" in caption.elided_text()


@pytest.mark.parametrize("screen", [(1024, 700), (1280, 720)])
def test_the_window_fits_a_small_screen_with_every_figure_in_view(qtbot, make_window, screen):
    """1024×700, and 2560×1440 at scale 2 (1280×720 logical)."""
    ids = stored_runs(model=LONG_MODEL)
    window = make_window(size=None)
    width, height = screen
    assert window.minimumSizeHint().width() + frame_extra(window)[0] <= width
    assert window.minimumSizeHint().height() + frame_extra(window)[1] <= height
    fit(qtbot, window, width, height)
    assert window.frameGeometry().width() <= width and window.frameGeometry().height() <= height

    window.stored_runs.show(ids[0])
    qtbot.waitUntil(lambda: window.run_view.waterfall.width() >= WATERFALL_MIN_WIDTH)

    window.tabs.setCurrentWidget(window.history_view)
    history = window.history_view
    qtbot.waitUntil(lambda: history.table.viewport().width() > 0)
    header = history.table.horizontalHeader()
    for name in ("Date", "Ready", "Peak", "Status"):
        assert in_view(header, COLUMNS.index(name)), f"{name} is off-screen"
    # The model keeps its file name whole (issue 36); the settings then start in view or the
    # table scrolls sideways to them, its header with it.
    assert header.sectionSize(MODEL) >= 80
    assert header.sectionViewportPosition(SETTINGS) < header.viewport().width() \
        or history.table.horizontalScrollBar().maximum() > 0
    assert history.model.item(0, MODEL).toolTip() == LONG_MODEL, "the elided path is whole in its tooltip"

    window.stored_runs.compare(ids)
    compare = window.compare_view
    qtbot.waitUntil(lambda: compare.phases.viewport().height() > 0)
    assert in_view(compare.phases.horizontalHeader(), 1), "the difference column is whole"
    bar = compare.phases.verticalScrollBar()
    assert visible_rows(compare.phases) >= 6
    assert visible_rows(compare.phases) == compare.phases.rowCount() or bar.maximum() > 0, "every row, or a scroll"
    assert not overlapping_ticks(compare.bars)
    assert compare.legend.height() < 3 * compare.legend.fontMetrics().lineSpacing() + 8, "labels name what differs"
    assert compare.baseline.width() <= compare.width()
    assert window.frameGeometry().width() <= width and window.frameGeometry().height() <= height, "still fits"


def test_the_compare_table_shows_every_row_on_a_large_screen(qtbot, make_window):
    ids = stored_runs(3)
    window = make_window(size=(1600, 1000))
    window.stored_runs.compare(ids)
    compare = window.compare_view
    qtbot.waitUntil(lambda: visible_rows(compare.phases) == compare.phases.rowCount())
    header = compare.phases.horizontalHeader()
    assert all(in_view(header, col) for col in range(3)), "every difference column whole at 1600×1000"
    labels = [text.strip() for _x, text in compare.bars.getPlotItem().getAxis("bottom")._tickLevels[0]]
    assert labels == [short_row_label(r) for r in time_rows(compare.runs)] and not overlapping_ticks(compare.bars)


def test_settings_read_as_words_in_the_compare_view(qtbot, make_window):
    history = History(history_path())
    a, b = finished_record(), finished_record(intra=2)
    b.config = b.config.replace(onednn=False, memory_growth=True, visible_gpus=(0,))
    ids = [history.record(r, "gui") for r in (a, b)]
    window = make_window()
    window.stored_runs.compare(ids)
    table = window.compare_view.settings
    cells = {table.verticalHeaderItem(r).text(): [table.item(r, c).text() for c in range(2)]
             for r in range(table.rowCount())}
    assert cells["Intra-op threads"] == ["default (TensorFlow decides)", "2"]
    assert cells["oneDNN"] == ["default (TensorFlow decides)", "off"]
    assert cells["Memory growth"] == ["off", "on"]
    assert cells["Visible GPUs"] == ["all", "0"] and cells["Memory limit"] == ["no limit", "no limit"]
    shown = {text for values in cells.values() for text in values}
    assert not shown & {"True", "False", "None", "()", "{}"}
    assert [name for name, values in cells.items() if "0" in values] == ["Visible GPUs"], "0 only as GPU 0"
    assert cells["Inter-op threads"] == ["default (TensorFlow decides)"] * 2
    assert window.compare_view.tables.tabText(1) == "Settings (4 differ)"
    assert window.compare_view.labels == [f"#{ids[0]} intra=default onednn=default visible_gpus=all memory_growth=off",
                                          f"#{ids[1]} intra=2 onednn=off visible_gpus=0 memory_growth=on"]


def test_the_sweep_leader_row_stays_readable_when_the_desktop_turns_dark(qtbot, restore_palette):
    from tflaunch.core.settings.config import LaunchConfig
    from tflaunch.core.sweep.plan import Sweep, SweepPlan
    from tflaunch.gui.sweep.sweep_view import SweepView

    plan = SweepPlan(LaunchConfig(model="sample:mlp"), {"intra": ["1"]}, repeat=3, warmup=0, racing=False)
    sweep = Sweep(plan, plan.candidates())
    value = 1.0
    while (trial := sweep.next_trial()) is not None:
        value += 0.1
        sweep.report(trial, value)
    view = SweepView()
    qtbot.addWidget(view)
    view.show_progress(sweep, None)
    restore_palette.setPalette(dark_palette())

    def leader_readable() -> bool:
        item = view.table.item(0, 1)
        text = item.foreground().color() if item.foreground().style() != Qt.BrushStyle.NoBrush \
            else dark_palette().color(QPalette.ColorRole.Text)
        return luminance(item.background().color()) < 0.2 and contrast(text, item.background().color()) >= 4.5

    qtbot.waitUntil(leader_readable, timeout=3000)


def test_a_long_advisor_summary_never_makes_the_window_taller_than_a_small_screen(qtbot, make_window):
    """The Advisor's summary ran to ten lines at 1024 px after a thirteen-remedy examination:
    laid out below the splitter at its full height, it made the window 787 px tall on a 700 px
    screen (status bar off the screen) and cut the table to a row and a half. It scrolls now,
    beside the strips, and the table keeps six rows, its verdicts on one line each (wrapped, they
    left it three rows with a session's runs docked below), whole in their tooltips."""
    from ..test_doctor_words import diagnosis

    window = make_window(size=None)
    fit(qtbot, window, 1024, 700)
    for _ in range(5):  # a session's runs in the dock below, as after the walk that saw it
        window.run_list.add_record(finished_record())
    window.tabs.setCurrentWidget(window.advisor_view)
    view = window.advisor_view
    view.show_diagnosis(diagnosis())
    view.summary.setText(" ".join([view.summary.text()] * 6))  # as long as the thirteen remedies' summary
    qtbot.waitUntil(lambda: view.summary.minimumHeight() > 10 * view.summary.fontMetrics().lineSpacing())
    qtbot.wait(100)  # the layout's answer to the new minimum, if it were to grow the window
    assert window.minimumSizeHint().height() + frame_extra(window)[1] <= 700
    assert window.frameGeometry().height() <= 700
    assert visible_rows(view.table) >= 6, "the table shows six of its rows"
    verdict = view.table.item(1, view.table.columnCount() - 1)
    assert verdict.toolTip() == verdict.text(), "the whole verdict in its tooltip"
    label = view.strips.getPlotItem().getAxis("left")
    assert label.labelText == "Ready (s)", "the strips' unit fits their height"


def test_long_statuses_leave_the_subject_and_settings_in_view_at_1024(qtbot, make_window):
    """Seen under Xvfb after the Advisor: "ok, doctor, warm + server start" made the Status
    column 200 px wide, and at 1024x700 the Subject was cut at the table's edge, the Settings
    scrolled out of view behind a sideways scroll bar. The status is elided there now, whole
    in its tooltip."""
    from tflaunch.core.run.warm.warm_facts import WarmStart
    from tflaunch.core.run.words import WARM_MARK

    history = History(history_path())
    for i in range(8):
        record = finished_record(model=LONG_MODEL, ready_s=1.0 + i / 10, at=1000.0 + 10 * i)
        record.marks.append((WARM_MARK, record.launched_at + 0.5))
        record.warm_start = WarmStart(server_started=True, server_import_s=3.0)
        history.record(record, "doctor")
    history.close()
    window = make_window(size=None)
    fit(qtbot, window, 1024, 700)
    window.tabs.setCurrentWidget(window.history_view)
    view = window.history_view
    qtbot.waitUntil(lambda: view.model.rowCount() == 8)
    status = view.model.index(0, COLUMNS.index("Status")).data()
    assert "server start" in status, status
    qtbot.wait(50)
    header = view.table.horizontalHeader()
    for name in ("Date", "Ready", "Peak", "Status", "Subject"):
        assert in_view(header, COLUMNS.index(name)), f"{name} is not whole in view"
    assert header.sectionSize(MODEL) >= 80
    assert header.sectionViewportPosition(SETTINGS) < header.viewport().width() - 80, "the settings start in view"
    assert view.table.horizontalScrollBar().maximum() == 0, "no sideways scrolling"
    assert status in view.model.index(0, COLUMNS.index("Status")).data(Qt.ItemDataRole.ToolTipRole)
