"""RunView: one run, live or finished: headline numbers, phases, waterfall, memory."""

from __future__ import annotations

import time

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFrame, QGridLayout, QHBoxLayout, QLabel, QSplitter, QVBoxLayout, QWidget

from tflaunch.core.report.review import Review, run_review
from tflaunch.core.run.record import RunRecord, RunStatus
from tflaunch.core.units import format_bytes, format_duration

from .memory_plot import MemoryPlot
from .palette import STATUS_COLORS
from .phase_table import PhaseTable
from .waterfall import Waterfall


def _figure(caption: str) -> tuple[QWidget, QLabel]:
    box = QWidget()
    layout = QVBoxLayout(box)
    layout.setContentsMargins(0, 0, 16, 0)
    layout.setSpacing(0)
    value = QLabel("–")
    value.setObjectName("bigNumber")
    label = QLabel(caption)
    label.setObjectName("caption")
    layout.addWidget(value)
    layout.addWidget(label)
    return box, value


def _wrappable(text: str) -> str:
    """Let QLabel wrap long paths: it breaks lines only at spaces and zero-width spaces."""
    return text.replace("/", "/\u200b")


class SummaryBar(QFrame):
    """Time to ready and peak memory in large type, and how the run ended."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        ready_box, self.ready = _figure("time to ready")
        self.ready_caption = ready_box.findChild(QLabel, "caption")
        peak_box, self.peak = _figure("peak memory (process tree)")
        self.headline = QLabel("Choose a model and press Run (Ctrl+R).")
        self.headline.setWordWrap(True)
        self.headline.setObjectName("headline")
        self.headline.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.settings = QLabel()
        self.settings.setObjectName("caption")
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
        if record.is_script:  # a script reports no phases: its whole run time is the figure
            end = record.finished_at or time.time()
            self.ready.setText(format_duration(end - record.launched_at))
            self.ready_caption.setText("run time")
        else:
            self.ready.setText(format_duration(record.time_to_ready))
            self.ready_caption.setText("time to ready")
        self.peak.setText(format_bytes(record.peak_rss))
        # A result resting on an assumption is not shown in the colour of a clean success.
        color = STATUS_COLORS["warning" if record.warnings and record.status is RunStatus.OK else record.status.value]
        self.headline.setText(record.status_line)
        self.headline.setStyleSheet(f"color: {color};")
        self.headline.setToolTip("\n".join(record.warnings))
        if record.failure is not None and record.status is not RunStatus.CANCELLED:
            self.settings.setText(_wrappable(record.failure.message))
            self.settings.setStyleSheet(f"color: {color};")
            return
        env = record.environment
        detail = [record.subject, record.config.summary()]
        if record.inputs_line:
            detail.append("inputs " + record.inputs_line)
        if record.latency.get("n"):
            detail.append(f"steady {format_duration(record.latency['median'])}/call")
        # The headline names each caveat in a few words; the sentence saying what to do is
        # its tooltip, so a warning cannot push the phase table off a small screen.
        if env:
            detail.append(f"TensorFlow {env.get('tensorflow')} · Python {env.get('python')} · "
                          f"{env.get('cores')} cores")
        self.settings.setText(_wrappable(" · ".join(detail)))
        self.settings.setStyleSheet("")


class RunView(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.summary = SummaryBar()
        self.phases = PhaseTable()
        self.waterfall = Waterfall()
        self.memory = MemoryPlot()
        top = QSplitter(Qt.Orientation.Horizontal)
        top.addWidget(self.phases)
        top.addWidget(self.waterfall)
        top.setStretchFactor(0, 2)
        top.setStretchFactor(1, 3)
        top.setChildrenCollapsible(False)
        body = QSplitter(Qt.Orientation.Vertical)
        body.addWidget(top)
        body.addWidget(self.memory)
        body.setStretchFactor(1, 1)
        body.setChildrenCollapsible(False)
        layout = QGridLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.summary, 0, 0)
        layout.addWidget(body, 1, 0)
        layout.setRowStretch(1, 1)
        self.record: RunRecord | None = None

    def begin(self, record: RunRecord) -> None:
        """A new live run: clear the graphs, then follow it."""
        self.record = record
        self.memory.clear_run()
        self.waterfall.show_record(None)
        self.refresh()

    def refresh(self) -> None:
        """Cheap redraw of the live parts (called on events and on the tick timer)."""
        self.summary.show_record(self.record)
        self.phases.show_record(self.record)

    def on_phase_change(self) -> None:
        self.refresh()
        if self.record is not None:
            self.waterfall.show_record(self.record)
            self.memory.show_phases(self.record)

    def review(self) -> Review | None:
        record = self.record
        return run_review(record) if record is not None and record.finished_at is not None else None

    def show_record(self, record: RunRecord) -> None:
        """A finished run, complete."""
        self.record = record
        self.refresh()
        self.waterfall.show_record(record)
        self.memory.show_record(record)
