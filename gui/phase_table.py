"""PhaseTable: the seven phases as rows with their live state, duration and memory."""

from __future__ import annotations

import time

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableWidget, QTableWidgetItem, QWidget

from tflaunch.core.phases import DESCRIPTIONS, LABELS, ONE_TIME, OTHER, PART_DESCRIPTIONS, TIMELINE_ROWS
from tflaunch.core.run.record import PhaseRecord, PhaseState, RunRecord
from tflaunch.core.units import format_bytes, format_duration

from .palette import PHASE_COLORS, STATE_COLORS, keep_colours, readable

COLUMNS = ("Phase", "State", "Duration", "RSS at end", "Peak RSS")
ROWS = TIMELINE_ROWS
OTHER_TIP = "Time to ready spent between phases (generating inputs, Python between steps)."


class PhaseTable(QTableWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(len(ROWS), len(COLUMNS), parent)
        self.setHorizontalHeaderLabels(COLUMNS)
        self.verticalHeader().hide()
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        # Widths from the widest text each column will ever hold: the table must not
        # shift while a duration ticks, nor squeeze a column out.
        metrics = self.fontMetrics()
        widest = ("First inference", "not reported", "999.9 µs/call", "9999.9 MiB", "9999.9 MiB")
        header = self.horizontalHeader()
        for col, (title, text) in enumerate(zip(COLUMNS, widest, strict=False)):
            width = max(metrics.horizontalAdvance(text), metrics.horizontalAdvance(title)) + 24
            header.setSectionResizeMode(col, QHeaderView.ResizeMode.Fixed)
            header.resizeSection(col, width)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setFixedWidth(header.length() + 2 * self.frameWidth())
        for row, name in enumerate(ROWS):
            for col in range(len(COLUMNS)):
                item = QTableWidgetItem()
                item.setToolTip(DESCRIPTIONS.get(name, OTHER_TIP))
                if col >= 2:
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                self.setItem(row, col, item)
            self._cell(row, 0).setText(LABELS.get(name, "Other"))
        self._record: RunRecord | None = None
        self.resizeRowsToContents()
        self.setMinimumHeight(self._content_height())
        self._colour_names()
        # Phase and state colours are chosen for the palette: a light/dark switch re-picks them.
        keep_colours(self, lambda: (self._colour_names(), self.show_record(self._record)))
        self.show_record(None)

    def _colour_names(self) -> None:
        for row, name in enumerate(ROWS):
            if name in PHASE_COLORS:
                self._cell(row, 0).setForeground(readable(PHASE_COLORS[name]))

    def _cell(self, row: int, col: int) -> QTableWidgetItem:
        item = self.item(row, col)
        assert item is not None  # every cell is made in __init__
        return item

    def _content_height(self) -> int:
        rows = sum(self.rowHeight(r) for r in range(self.rowCount()))
        return rows + self.horizontalHeader().sizeHint().height() + 2 * self.frameWidth()

    def sizeHint(self):  # noqa: N802 (Qt's name)
        hint = super().sizeHint()
        hint.setHeight(self._content_height())
        return hint

    def show_record(self, record: RunRecord | None) -> None:
        """Fill the rows from a record; a running phase shows its elapsed time so far."""
        now = time.time()
        self._record = record
        if record is not None and record.is_script:
            for row in range(len(ROWS)):
                for col, text in enumerate(("not reported", "", "", ""), start=1):
                    self._cell(row, col).setText(text)
                self._cell(row, 1).setForeground(readable(STATE_COLORS["waiting"]))
            return
        for row, name in enumerate(ROWS):
            if name == OTHER:
                other = record.other_time if record else None
                for col, text in enumerate(("", format_duration(other) if other is not None else "", "", ""), 1):
                    self._cell(row, col).setText(text)
                continue
            phase = record.phases[name] if record else None
            state = phase.state if phase else PhaseState.WAITING
            duration = phase.duration if phase else None
            if phase and state is PhaseState.RUNNING and phase.started is not None:
                duration = max(0.0, now - phase.started)
            shown = format_duration(duration) if phase else ""
            if name == "steady" and record is not None and record.latency.get("n"):
                # Per call: a total depends on how many calls were made.
                shown = f"{format_duration(record.latency['median'])}/call"
                self._cell(row, 2).setToolTip(f"Steady state: {record.steady_line}; "
                                             f"{format_duration(duration)} in all.")
            texts = (self._state_text(phase) if phase else state.value, shown,
                     format_bytes(phase.rss) if phase and phase.rss else "",
                     format_bytes(phase.peak_rss) if phase and phase.peak_rss else "")
            for col, text in enumerate(texts, start=1):
                self._cell(row, col).setText(text)
            self._cell(row, 1).setForeground(readable(STATE_COLORS[state.value]))
            if name in ("devices", "first") and record is not None:
                self._show_parts(row, name, record)

    def _show_parts(self, row: int, name: str, record: RunRecord) -> None:
        """A GPU run's devices phase in its parts, and the first call's one-time work: a
        "+" after the time, the parts in its tooltip (rows stay one line at 1024x700)."""
        parts = dict(record.phases[name].parts)
        if name == "first" and record.first_call_overhead is not None and record.phases["devices"].parts:
            parts = {ONE_TIME: record.first_call_overhead}
        cell = self._cell(row, 2)
        if not parts:
            return
        lines = [f"{record.part_label(k)}: {format_duration(v)}" + (f" — {PART_DESCRIPTIONS[k]}"
                 if k in PART_DESCRIPTIONS else "") for k, v in parts.items()]
        cell.setText(cell.text() + " +")
        cell.setToolTip(f"{LABELS[name]} in parts:\n" + "\n".join(lines))

    def _state_text(self, phase: PhaseRecord) -> str:
        """The state; for a running phase that counts its calls, how far it is ("37/100 calls")."""
        cell = self._cell(ROWS.index(phase.name), 1)
        if phase.state is not PhaseState.RUNNING or phase.progress is None:
            cell.setToolTip(DESCRIPTIONS.get(phase.name, OTHER_TIP))
            return phase.state.value
        done, total = phase.progress
        cell.setToolTip(f"{LABELS[phase.name]} running: {done} of {total} calls done.")
        text = f"{done}/{total} calls"
        # The column keeps its width (the table must not shift): the short form where it must.
        if self.fontMetrics().horizontalAdvance(text) + 12 > self.columnWidth(1):
            text = f"{done}/{total}"
        return text
