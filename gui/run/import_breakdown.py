"""ImportBreakdown: a run's import X-ray: the modules import spent most on, as bars of
cumulative time with their own (self) time inside, the native libraries' share, and the
known causes of a slow import as warnings."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QRectF, QSize, Qt
from PySide6.QtGui import QColor, QPainter, QPalette
from PySide6.QtWidgets import QFrame, QLabel, QScrollArea, QSizePolicy, QVBoxLayout, QWidget

from tflaunch.core.phases import IMPORT, colour
from tflaunch.core.report.imports import (
    GROUPS_CAPTION,
    import_flags,
    import_line,
    import_notes,
    missing_xray,
    phase_gap_line,
    top_by_cumulative,
    top_by_self,
)
from tflaunch.core.units import format_duration

from ..widgets.palette import keep_colours, mix, status_color
from ..widgets.text_roles import caption

if TYPE_CHECKING:
    from tflaunch.core.run.import_facts import ModuleGroup
    from tflaunch.core.run.record import RunRecord

NAME_SHARE = 0.42  # of the width, for module names; the bars and figures take the rest
FIGURES_WIDTH = 150  # px: "1.53 s (self 568 ms)"
EMPTY = missing_xray(None)


class ImportBars(QWidget):
    """One row per module group: its name, a pale bar of cumulative time and a solid one of
    self time (both on one scale, the import's total), and the two figures."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.rows: list[ModuleGroup] = []
        self.total = 0.0
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)

    def show_rows(self, rows: list[ModuleGroup], total: float) -> None:
        self.rows, self.total = rows, total
        self.setToolTip("Pale bar: cumulative time (the module group and what it imported); "
                        "solid bar: self time (its own code, or loading its native library).")
        self.updateGeometry()
        self.update()

    def row_height(self) -> int:
        return self.fontMetrics().height() + 6

    def sizeHint(self) -> QSize:  # noqa: N802 (Qt's name)
        return QSize(420, max(1, len(self.rows)) * self.row_height())

    def minimumSizeHint(self) -> QSize:  # noqa: N802 (Qt's name)
        return QSize(300, self.sizeHint().height())

    def paintEvent(self, _event: Any) -> None:  # noqa: N802 (Qt's name)
        painter = QPainter(self)
        metrics, palette = self.fontMetrics(), self.palette()
        text = palette.color(QPalette.ColorRole.WindowText)
        solid = QColor(colour("import"))
        pale = mix(solid, palette.color(QPalette.ColorRole.Window), 0.35)
        height, width = self.row_height(), self.width()
        name_width = int(width * NAME_SHARE)
        bar_left, bar_width = name_width + 8, max(width - name_width - 16 - FIGURES_WIDTH, 20)
        for i, row in enumerate(self.rows):
            top = i * height
            painter.setPen(text)
            name = metrics.elidedText(row.name, Qt.TextElideMode.ElideLeft, name_width)
            painter.drawText(QRectF(0, top, name_width, height), Qt.AlignmentFlag.AlignVCenter, name)
            scale = bar_width / self.total if self.total > 0 else 0.0
            for seconds, color in ((row.cumulative, pale), (row.own, solid)):
                painter.fillRect(QRectF(bar_left, top + 3, max(seconds * scale, 1.0), height - 6), color)
            figures = f"{format_duration(row.cumulative)} (self {format_duration(row.own)})"
            painter.setPen(text)
            painter.drawText(QRectF(width - FIGURES_WIDTH, top, FIGURES_WIDTH, height),
                             Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignRight, figures)
        painter.end()


class ImportBreakdown(QWidget):
    """The X-ray of one run; `show_record` is cheap when nothing changed (it runs each tick)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.summary = QLabel(EMPTY)
        self.summary.setWordWrap(True)
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.own_time = caption(QLabel())
        self.own_time.setWordWrap(True)
        self.bars_caption = caption(QLabel(GROUPS_CAPTION))
        self.bars_caption.setWordWrap(True)
        self.bars = ImportBars()
        self.warnings = QLabel()
        self.notes = caption(QLabel())
        for label in (self.warnings, self.notes):
            label.setWordWrap(True)
            label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        inner = QWidget()
        layout = QVBoxLayout(inner)
        layout.setContentsMargins(8, 6, 8, 6)
        # Warnings first (what to do), notes last: the oneDNN note is on most runs and must
        # not push the bars out of a small window.
        for widget in (self.summary, self.warnings, self.bars_caption, self.bars, self.own_time, self.notes):
            layout.addWidget(widget)
        layout.addStretch(1)
        scroll = QScrollArea()
        scroll.setWidget(inner)
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.addWidget(scroll)
        self._shown: tuple[Any, ...] | None = None
        self.flags: list[str] = []
        self._record: RunRecord | None = None
        keep_colours(self, self._recolour)

    def show_record(self, record: RunRecord | None) -> None:
        imports = record.imports if record is not None else None
        python = record.config.python if record is not None else "python"
        phase = record.phase(IMPORT) if record is not None else None
        # What the words depend on: the X-ray, and without one the run's state.
        shown = (id(imports), python, id(record), phase.state if phase else None, phase.duration if phase else None,
                 record.finished_at if record is not None else None)
        if self._shown == shown:
            return
        self._shown, self._record = shown, record
        self.flags = import_flags(imports, python)
        notes = import_notes(imports)
        gap = phase_gap_line(imports, phase.duration if phase is not None else None)
        self.summary.setText("\n".join([f"{import_line(imports)} · {imports.modules:,} modules imported",
                                        *([gap] if gap else [])]) if imports else missing_xray(record))
        own = ", ".join(f"{g.name} {format_duration(g.own)}" for g in top_by_self(imports, 4))
        self.own_time.setText(f"Most time in their own code: {own}" if own else "")
        self.own_time.setVisible(bool(own))
        self.bars.show_rows(top_by_cumulative(imports), imports.total if imports else 0.0)
        self.bars.setVisible(bool(imports))
        self.bars_caption.setVisible(bool(imports))
        self.warnings.setText("\n".join(f"⚠ {flag}" for flag in self.flags))
        self.warnings.setVisible(bool(self.flags))
        self.notes.setText("\n".join(f"Note: {note}" for note in notes))
        self.notes.setVisible(bool(notes))
        self._recolour()

    def _recolour(self) -> None:
        window = self.palette().color(QPalette.ColorRole.Window)
        self.warnings.setStyleSheet(f"color: {status_color('warning', window).name()};")
