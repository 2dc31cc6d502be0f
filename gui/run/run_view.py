"""RunView: one run, live or finished: headline numbers, phases, waterfall, memory."""

from __future__ import annotations

import re
import time
from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, QObject, Qt, QTimer
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QFrame,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QScrollArea,
    QSplitter,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from tflaunch.core.phases import step_unit
from tflaunch.core.run.status import RunStatus
from tflaunch.core.units import format_bytes, format_duration

if TYPE_CHECKING:  # the review's modules (sweeps, comparisons) load when a review is asked for
    from tflaunch.core.report.review import Review
    from tflaunch.core.run.record import RunRecord

from ..plots.memory_plot import LiveSample, MemoryPlot
from ..plots.plot_theme import follow_palette
from ..plots.waterfall import Waterfall, live_spans
from ..widgets.palette import keep_colours, page_background, status_color
from ..widgets.text_roles import big_number, caption, headline
from .import_breakdown import ImportBreakdown
from .phase_table import PhaseTable

WATERFALL_MIN_WIDTH = 260  # px: at 1024 wide the table keeps its Duration column whole beside a scroll bar
MEMORY_MIN_HEIGHT = 150  # px


def _figure(words: str) -> tuple[QWidget, QLabel, QLabel]:
    box = QWidget()
    layout = QVBoxLayout(box)
    layout.setContentsMargins(0, 0, 16, 0)
    layout.setSpacing(0)
    value = big_number(QLabel("–"))
    label = caption(QLabel(words))
    layout.addWidget(value)
    layout.addWidget(label)
    return box, value, label


def _wrappable(text: str) -> str:
    """Let QLabel wrap long paths: it breaks lines only at spaces and zero-width spaces."""
    return text.replace("/", "/\u200b")


def _set_style(label: QLabel, style: str) -> None:
    """Only a change: each new style sheet re-polishes the label, and this runs every tick."""
    if label.styleSheet() != style:
        label.setStyleSheet(style)


_SHORT_PYTHON = re.compile(r"python=(\S+)")


def _short_python(match: re.Match[str]) -> str:
    """python=…/env/bin/python: the environment's name and the file, not the whole path."""
    parts = match.group(1).split("/")
    if len(parts) <= 4:
        return match.group(0)
    tail = "/".join(parts[-3:])
    return f"python=…/{tail if len(tail) <= 32 else '/'.join(parts[-2:])}"


class SummaryBar(QFrame):
    """Time to ready and peak memory in large type, and how the run ended."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        ready_box, self.ready, self.ready_caption = _figure("time to ready")
        peak_box, self.peak, _caption = _figure("peak memory (process tree)")
        self.headline = headline(QLabel("Choose a model or a program and press Run (Ctrl+R)."))
        self.headline.setWordWrap(True)
        self.headline.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.settings = caption(QLabel())
        self.settings.setWordWrap(True)
        self.settings.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        # Room for a failure message of three lines without the bar changing height.
        self.settings.setMinimumHeight(3 * self.settings.fontMetrics().lineSpacing() + 4)
        self.settings.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        text = QVBoxLayout()
        text.addWidget(self.headline)
        text.addWidget(self.settings)
        text.addStretch(1)
        layout = QHBoxLayout(self)
        layout.addWidget(ready_box)
        layout.addWidget(peak_box)
        layout.addLayout(text, 1)

    def show_record(self, record: RunRecord | None) -> None:
        if record is None:
            return
        self.ready.setText(format_duration(record.time_to_ready))
        self.ready_caption.setText("time to ready")
        self.peak.setText(format_bytes(record.peak_rss))
        # A result resting on an assumption is not shown in the colour of a clean success.
        status = "warning" if record.warnings and record.status is RunStatus.OK else record.status.value
        color = status_color(status, page_background(self.palette())).name()
        self.headline.setText(record.status_line)
        _set_style(self.headline, f"color: {color};")
        self.headline.setToolTip("\n".join(record.warnings))
        if record.failure is not None and record.status is not RunStatus.CANCELLED:
            self.settings.setText(_wrappable(record.failure.message))
            _set_style(self.settings, f"color: {color};")
            return
        env = record.environment
        # The interpreter by its last folders: a deep path wrapped the line to a fourth row
        # and pushed the phase table's last row off a 1024x700 screen (the tooltip has it whole).
        detail = [record.subject, _SHORT_PYTHON.sub(_short_python, record.config.summary())]
        if record.inputs_line:
            detail.append("inputs " + record.inputs_line)
        if record.latency.get("n"):
            unit = step_unit(record.phases)
            detail.append(f"steady {format_duration(record.latency['median'])}/{unit}")
        # The headline names each caveat in a few words; the sentence saying what to do is
        # its tooltip, so a warning cannot push the phase table off a small screen.
        versions = [text for text, figure in ((f"TensorFlow {env.tensorflow}", env.tensorflow),
                                              (f"Python {env.python}", env.python), (f"{env.cores} cores", env.cores))
                    if figure]  # only what the child said: never "None cores"
        if versions:
            detail.append(" · ".join(versions))
        notes = record.notes
        # A warm launch that started cold, or paid for its server's start, says so in the
        # headline's detail (the whole sentence is in the tooltip and the log).
        warm = record.warm_start
        if warm is not None and warm.cold_because:
            detail.append(f"started cold: {_elided(warm.cold_because)}")
        if warm is not None and warm.server_started:
            detail.append("includes the warm server's start")
        self.settings.setText(_wrappable(" · ".join(detail)))
        self.settings.setToolTip("\n".join([record.config.summary(), *notes]))
        _set_style(self.settings, "")

    def show_refusal(self, why: str) -> None:
        """No run started: the reason in the headline, in place of the last run's."""
        self.ready.setText("–")
        self.peak.setText("–")
        color = status_color("failed", page_background(self.palette())).name()
        self.headline.setText("Not started")
        _set_style(self.headline, f"color: {color};")
        self.headline.setToolTip("")
        self.settings.setText(_wrappable(why))
        self.settings.setToolTip(why)
        _set_style(self.settings, f"color: {color};")


def _elided(text: str, limit: int = 100) -> str:
    return text if len(text) <= limit else text[:limit - 1] + "…"


class _PlotPlace(QWidget):
    """Where a graph goes, keeping its least size until the graph is built into it."""

    def __init__(self, width: int, height: int) -> None:
        super().__init__()
        self.setMinimumSize(width, height)
        self.box = QVBoxLayout(self)
        self.box.setContentsMargins(0, 0, 0, 0)


class RunView(QWidget):
    def __init__(self, parent: QWidget | None = None, *, graphs_later: bool = False) -> None:
        """`graphs_later`: the waterfall and the memory graph are built when `build_graphs` is
        called, or when first used; the window calls it right after its first paint, which
        then does not wait for them (some 30 ms of CPU, a tenth of the window's own)."""
        super().__init__(parent)
        self.summary = SummaryBar()
        self.phases = PhaseTable()
        self._waterfall: Waterfall | None = None
        self._memory: MemoryPlot | None = None
        # The waterfall keeps a width its bars can be read at; on a narrow screen the table
        # leaves its memory columns out instead (_fit_columns). Short enough for the window
        # to fit a 700 px high screen with the runs docked below.
        self._waterfall_place = _PlotPlace(WATERFALL_MIN_WIDTH, self.phases.minimumHeight())
        self._memory_place = _PlotPlace(0, MEMORY_MIN_HEIGHT)
        phases = QScrollArea()
        phases.setWidget(self.phases)
        phases.setWidgetResizable(True)
        phases.setFrameShape(QFrame.Shape.NoFrame)
        # A program's phases can outgrow the height a 1024x700 screen leaves: the rows then
        # scroll into view instead of being cut off unseen.
        phases.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAsNeeded)
        phases.setMinimumHeight(self.phases.minimumHeight())
        # Never narrower than the Phase, State and Duration columns beside a vertical scroll bar
        # (a program's rows outgrow a small screen's height); the memory columns are left out
        # where they do not fit whole (_fit_columns), never scrolled to.
        phases.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        phases.setMinimumWidth(self.phases.columns_width(3) + phases.verticalScrollBar().sizeHint().width())
        top = self._top = QSplitter(Qt.Orientation.Horizontal)
        self._phases_area = phases
        top.addWidget(phases)
        top.addWidget(self._waterfall_place)
        top.setStretchFactor(0, 0)  # the table as wide as its columns, when there is room
        top.setStretchFactor(1, 1)
        # Room for the vertical scroll bar too: a program's rows that outgrow the height would
        # otherwise cut the Peak RSS column ("539.3 Mi" at 1360x860).
        top.setSizes([self.phases.width() + phases.verticalScrollBar().sizeHint().width(), WATERFALL_MIN_WIDTH])
        top.setChildrenCollapsible(False)
        top.splitterMoved.connect(lambda *_: self._fit_columns(dragged=True))
        body = self._body = QSplitter(Qt.Orientation.Vertical)
        body.addWidget(top)
        # The import X-ray shares the memory plot's place, on a tab at the side: a tab bar on
        # top would cost the height a 700 px screen does not have.
        self.imports = ImportBreakdown()
        self.below = QTabWidget()
        self.below.setTabPosition(QTabWidget.TabPosition.West)
        self.below.setDocumentMode(True)
        self.below.addTab(self._memory_place, "Memory")
        self.below.addTab(self.imports, "Imports")
        body.addWidget(self.below)
        body.setStretchFactor(1, 1)
        body.setChildrenCollapsible(False)
        body.installEventFilter(self)
        top.installEventFilter(self)
        layout = QGridLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.summary, 0, 0)
        layout.addWidget(body, 1, 0)
        layout.setRowStretch(1, 1)
        self.record: RunRecord | None = None
        self._refusal = ""  # why the last run asked for could not start, while no run is shown
        self._fit_table_area()
        keep_colours(self, self._recolour)  # the headline's colour, a run's or a refusal's
        if not graphs_later:
            self.build_graphs()

    @property
    def waterfall(self) -> Waterfall:
        if self._waterfall is None:
            self.build_graphs()
        assert self._waterfall is not None
        return self._waterfall

    @property
    def memory(self) -> MemoryPlot:
        if self._memory is None:
            self.build_graphs()
        assert self._memory is not None
        return self._memory

    def build_graphs(self) -> None:
        """The waterfall and the memory graph, in their places (once)."""
        if self._waterfall is not None:
            return
        self._waterfall, self._memory = Waterfall(), MemoryPlot()
        for plot, place in ((self._waterfall, self._waterfall_place), (self._memory, self._memory_place)):
            follow_palette(plot)
            plot.setMinimumSize(place.minimumSize())
            place.box.addWidget(plot)
        record = self.record
        if record is not None and record.finished_at is not None:
            self._waterfall.show_record(record)
            self._memory.show_record(record)
        self._fit_table_area()  # the graphs' least sizes came after the last fit: fit again

    def begin(self, record: RunRecord) -> None:
        """A new live run: clear the graphs, then follow it."""
        self.record, self._refusal = record, ""
        self.memory.clear_run()
        self.waterfall.show_record(None)
        self.refresh()

    def _recolour(self) -> None:
        if self.record is None and self._refusal:
            self.summary.show_refusal(self._refusal)
        else:
            self.summary.show_record(self.record)

    def show_refusal(self, why: str) -> None:
        """A run that could not start: its reason in the headline, the last run's figures cleared."""
        self._refusal = why
        self.record = None
        self.phases.show_nothing()
        self.waterfall.show_record(None)
        self.memory.clear_run()
        self.summary.show_refusal(why)

    def refresh(self) -> None:
        """Cheap redraw of the live parts (called on events and on the tick timer): a
        running run's phases grow with the clock, in the table, the waterfall and the bands."""
        record = self.record
        self.summary.show_record(record)
        self.phases.show_record(record)
        self._fit_table_area()
        self.imports.show_record(record)
        flags = len(self.imports.flags)  # said by colour and tooltip: a side tab has no room for words
        tip = f"Import X-ray: {flags} warning{'s' * (flags != 1)} about a slow import" if flags else "Import X-ray"
        if self.below.tabToolTip(1) != tip:
            self.below.setTabToolTip(1, tip)
            page = page_background(self.palette())
            self.below.tabBar().setTabTextColor(1, status_color("warning", page) if flags else QColor())
        if record is not None and record.finished_at is None:
            now = time.time()
            self.waterfall.show_live(record, now)
            self.memory.show_live_phases(live_spans(record, now))

    def on_phase_change(self) -> None:
        self.refresh()

    def add_samples(self, batch: list[LiveSample]) -> None:
        """Memory samples of the live run, as the sampler hands them over."""
        if self.record is not None and self.record.finished_at is None:
            self.memory.add_samples(batch)

    def review(self) -> Review | None:
        record = self.record
        from tflaunch.core.report.review import run_review

        return run_review(record) if record is not None and record.finished_at is not None else None

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt's name)
        """The body's splitter shares a new height in its old proportions, which can cut the
        table's last row (the headline wrapping, the graphs built after the first paint): fit again."""
        if watched is self._body and event.type() == QEvent.Type.Resize:
            # After the splitter's own share-out, which follows its filters.
            QTimer.singleShot(0, self, self._fit_table_area)  # not after the view is gone
        elif watched is self._top and event.type() == QEvent.Type.Resize:
            QTimer.singleShot(0, self, self._fit_columns)
        return False

    def _fit_columns(self, dragged: bool = False) -> None:
        """The table with its memory columns where the waterfall keeps its least width beside
        them; without them otherwise, and as wide as what is left of it. `dragged`: the user
        moved the handle between them, and the table's room is what they gave it."""
        bar = self._phases_area.verticalScrollBar().sizeHint().width()
        room = self._top.width() - self._top.handleWidth() - WATERFALL_MIN_WIDTH - bar
        if dragged:
            room = min(room, self._top.sizes()[0] - bar)
        was = self.phases.narrow
        self.phases.fit_width(room)
        if self.phases.narrow != was and not dragged:
            table = self.phases.minimumWidth() + bar
            self._top.setSizes([table, self._top.width() - self._top.handleWidth() - table])

    def _fit_table_area(self) -> None:
        """The table and the waterfall as high as the table's rows, no higher: every pixel
        they would leave blank goes to the memory graph (at 1600x1000 about 270 px were
        blank under the table while the graph had ~100 px)."""
        height = max(self.phases.content_height(), self._top.minimumSizeHint().height())
        self._top.setMaximumHeight(height)
        # A splitter keeps the share it gave before the cap: hand the excess to the graph;
        # and take what the table lacks from the graph, down to the graph's least height
        # (a program's eleven rows hid its Steady row at 1360x860).
        sizes = self._body.sizes()
        if len(sizes) == 2 and sizes[0] > height:
            self._body.setSizes([height, sizes[0] + sizes[1] - height])
        elif len(sizes) == 2 and 0 < sizes[0] < height:
            grow = min(height - sizes[0], sizes[1] - self.below.minimumSizeHint().height())
            if grow > 0:
                self._body.setSizes([sizes[0] + grow, sizes[1] - grow])

    def show_record(self, record: RunRecord) -> None:
        """A finished run, complete."""
        self.record, self._refusal = record, ""
        self.refresh()
        self.waterfall.show_record(record)
        self.memory.show_record(record)
