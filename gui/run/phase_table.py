"""PhaseTable: a run's phases as rows with their live state, duration and memory.

A run gets a row for each phase it reached and, while a model runs, for each it has still to
report (phases.phase_rows decides which); rows are rebuilt only when the names change."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableWidget, QTableWidgetItem, QWidget

from tflaunch.core.phases import (
    DEVICES,
    ONE_TIME,
    OTHER,
    PART_DESCRIPTIONS,
    RETRACES,
    STEADY,
    colour,
    description,
    label,
    phase_rows,
    row_label,
    step_unit,
    timeline_rows,
)
from tflaunch.core.report.nesting import depth, parents
from tflaunch.core.run.anatomy import Anatomy, anatomy_rows, short_label, source_line
from tflaunch.core.run.reads import phase_reads
from tflaunch.core.run.status import PhaseState
from tflaunch.core.units import format_bytes, format_duration

from ..widgets.palette import STATE_COLORS, keep_colours, readable

if TYPE_CHECKING:
    from tflaunch.core.run.record import PhaseRecord, RunRecord

COLUMNS = ("Phase", "State", "Duration", "RSS at end", "Peak RSS")
MEMORY = (3, 4)  # left out where the table has no room for them whole (fit_width)
EMPTY_ROWS = ("spawn",)  # before any run: the phase every run starts with
OTHER_TIP = "Time to ready spent between phases (generating inputs, Python between steps)."


def nested_label(label: str, level: int) -> str:
    """A phase's name, indented under the phase it ran inside (level: how many it is in)."""
    return label if level <= 0 else "\u2002" * (level - 1) + "└ " + label


ANATOMY = "anatomy:"  # a sub-row's prefix: no phase name has a colon (phases.NAME)


def rows_of(record: RunRecord | None) -> tuple[str, ...]:
    """The rows a record is shown in: its phases (phase_rows), with an anatomy run's parts
    under their phase."""
    rows = EMPTY_ROWS if record is None else tuple(timeline_rows(phase_rows([record])))
    anatomy = record.anatomy if record is not None else None
    if anatomy is None or anatomy.phase not in rows:
        return rows
    at = rows.index(anatomy.phase) + 1
    subs = tuple(f"{ANATOMY}{i}" for i in range(len(anatomy_rows(anatomy))))
    return rows[:at] + subs + rows[at:]


class PhaseTable(QTableWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(len(EMPTY_ROWS), len(COLUMNS), parent)
        self._rows: tuple[str, ...] = ()
        self.setHorizontalHeaderLabels(COLUMNS)
        self.verticalHeader().hide()
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        # Widths from the widest text each column will ever hold: the table must not
        # shift while a duration ticks, nor squeeze a column out.
        metrics = self.fontMetrics()
        widest = (nested_label("First inference", 1), "not reported", "999.9 µs/call", "9999.9 MiB", "9999.9 MiB")
        header = self.horizontalHeader()
        for col, (title, text) in enumerate(zip(COLUMNS, widest, strict=False)):
            width = max(metrics.horizontalAdvance(text), metrics.horizontalAdvance(title)) + 24
            header.setSectionResizeMode(col, QHeaderView.ResizeMode.Fixed)
            header.resizeSection(col, width)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setFixedWidth(header.length() + 2 * self.frameWidth())
        self.full_width = self.width()  # every column shown
        self.narrow = False  # the memory columns left out (fit_width)
        self._record: RunRecord | None = None
        self._nothing = False  # no run and no phases: the last run asked for was refused
        self._set_rows(EMPTY_ROWS)
        # Phase and state colours are chosen for the palette: a light/dark switch re-picks them.
        keep_colours(self, lambda: (self._colour_names(), self.show_record(self._record)))
        self.show_record(None)

    def _set_rows(self, rows: tuple[str, ...]) -> None:
        if rows == self._rows:
            return
        self._rows = rows
        self.setRowCount(len(rows))
        for row, name in enumerate(rows):
            for col in range(len(COLUMNS)):
                item = QTableWidgetItem()
                item.setToolTip(OTHER_TIP if name == OTHER else "" if name.startswith(ANATOMY) else description(name))
                if col >= 2:
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                self.setItem(row, col, item)
            if not name.startswith(ANATOMY):
                self._cell(row, 0).setText(row_label(name))
        self.resizeRowsToContents()
        # As high as every row: the scroll area around it (run_view) scrolls the rest into view.
        # Held to fewer rows, the area shrank the table to its own height and the rows beyond
        # were cut off with nothing to scroll (its own scroll bar is off).
        self.setMinimumHeight(self.content_height())
        self.updateGeometry()
        self._colour_names()

    def fit_width(self, room: int) -> None:
        """Show the memory columns only where the table has `room` for all of them whole. At
        1024x700 it has some 355 px of its 506: a column cut at its header ("RSS") or reached
        by scrolling sideways was what a screenshot showed. Narrower, each phase's memory is in
        its name's tooltip, and the memory graph below draws it."""
        narrow = room < self.full_width
        if narrow == self.narrow:
            return
        self.narrow = narrow
        for col in MEMORY:
            self.setColumnHidden(col, narrow)
        self.setFixedWidth(self.horizontalHeader().length() + 2 * self.frameWidth())
        self.show_record(self._record)

    def columns_width(self, count: int) -> int:
        """Pixels from the table's left edge to the end of its first `count` columns."""
        header = self.horizontalHeader()
        return self.frameWidth() + sum(header.sectionSize(col) for col in range(count))

    def show_nothing(self) -> None:
        """No rows: a run refused before it started has no phases, a model's or a program's
        (the table keeps its height; the headline says why)."""
        self._record, self._nothing = None, True
        self._rows = ()
        self.setRowCount(0)

    def _colour_names(self) -> None:
        for row, name in enumerate(self._rows):
            if not name.startswith(ANATOMY):  # an anatomy row is coloured as it is filled
                self._cell(row, 0).setForeground(readable(colour(name)))

    def _cell(self, row: int, col: int) -> QTableWidgetItem:
        item = self.item(row, col)
        assert item is not None  # every cell is made in __init__
        return item

    def content_height(self) -> int:
        rows = sum(self.rowHeight(r) for r in range(self.rowCount()))
        return rows + self.horizontalHeader().sizeHint().height() + 2 * self.frameWidth()

    def sizeHint(self):  # noqa: N802 (Qt's name)
        hint = super().sizeHint()
        hint.setHeight(self.content_height())
        return hint

    def show_record(self, record: RunRecord | None) -> None:
        """Fill the rows from a record; a running phase shows its elapsed time so far."""
        if record is None and self._nothing:  # a refusal stays without rows until a run is shown
            return
        self._nothing = False
        now = time.time()
        self._record = record
        self._set_rows(rows_of(record))
        inside = parents(record, now) if record is not None and record.is_program else {}
        anatomy = record.run_anatomy if record is not None else None
        for row, name in enumerate(self._rows):
            if name.startswith(ANATOMY) and anatomy is not None:
                self._show_anatomy_row(row, int(name[len(ANATOMY):]), anatomy)
                continue
            if name != OTHER:
                text = nested_label(label(name), depth(name, inside))
                if self._cell(row, 0).text() != text:
                    self._cell(row, 0).setText(text)
            if name == OTHER:
                other = record.other_time if record else None
                for col, text in enumerate(("", format_duration(other) if other is not None else "", "", ""), 1):
                    self._cell(row, col).setText(text)
                continue
            phase = record.phase(name) if record else None
            state = phase.state if phase else PhaseState.WAITING
            duration = phase.duration if phase else None
            if phase and state is PhaseState.RUNNING and phase.started is not None:
                duration = max(0.0, now - phase.started)
            shown = format_duration(duration) if phase else ""
            if name == RETRACES and phase is not None and phase.count is not None:
                shown = f"{phase.count} · {format_duration(duration)}"
            if name == STEADY and record is not None and record.latency.get("n"):
                # Per call: a total depends on how many calls were made.
                unit = step_unit(record.phases)
                shown = f"{format_duration(record.latency['median'])}/{unit}"
                self._cell(row, 2).setToolTip(f"Steady state: {record.steady_line}; "
                                             f"{format_duration(duration)} in all.")
            texts = (self._state_text(phase) if phase else state.value, shown,
                     format_bytes(phase.rss) if phase and phase.rss else "",
                     format_bytes(phase.peak_rss) if phase and phase.peak_rss else "")
            for col, text in enumerate(texts, start=1):
                self._cell(row, col).setText(text)
            self._cell(row, 1).setForeground(readable(STATE_COLORS[state.value]))
            # What the phase read from storage, in the tooltip of its name: the row stays one
            # line at 1024x700, and a cold start's reads are one hover away.
            reads = f"\nRead from storage: {phase_reads(phase)}" if phase and phase.read_bytes is not None else ""
            within = f"\nRan inside {label(inside[name])}." if name in inside else ""
            figures = [f"{text} at its {when}" for text, when in ((texts[2], "end"), (texts[3], "peak")) if text]
            memory = f"\nRSS of the process tree: {', '.join(figures)}." if self.narrow and figures else ""
            self._cell(row, 0).setToolTip(description(name) + within + reads + memory)
            if phase is not None and record is not None and name in (DEVICES, record.ready_phase):
                self._show_parts(row, name, record)

    def _show_parts(self, row: int, name: str, record: RunRecord) -> None:
        """A GPU run's devices phase in its parts, and the first call's one-time work: a
        "+" after the time, the parts in its tooltip (rows stay one line at 1024x700)."""
        parts = dict(record.phases[name].parts)
        devices = record.phases.get(DEVICES)
        if name == record.ready_phase and record.first_call_overhead is not None and devices and devices.parts:
            parts = {ONE_TIME: record.first_call_overhead}
        cell = self._cell(row, 2)
        if not parts:
            return
        lines = [f"{record.part_label(k)}: {format_duration(v)}" + (f" — {PART_DESCRIPTIONS[k]}"
                 if k in PART_DESCRIPTIONS else "") for k, v in parts.items()]
        cell.setText(cell.text() + " +")
        cell.setToolTip(f"{label(name)} in parts:\n" + "\n".join(lines))

    def _show_anatomy_row(self, row: int, index: int, anatomy: Anatomy) -> None:
        """A part of the anatomy run's first step (or call): its time and share of the window;
        which run it came from and what made it in the tooltip."""
        label, seconds, what = anatomy_rows(anatomy)[index]
        window = anatomy.window
        tip = f"{source_line(anatomy)}\n{label}: {format_duration(seconds)}" + (f" ({what})" if what else "")
        for col, text in enumerate((f"  · {short_label(label)}", f"{seconds / window:.0%}" if window else "",
                                    format_duration(seconds), "", "")):
            self._cell(row, col).setText(text)
            self._cell(row, col).setToolTip(tip)
        self._cell(row, 0).setForeground(readable(STATE_COLORS["waiting"]))

    def _state_text(self, phase: PhaseRecord) -> str:
        """The state; for a running phase that counts its calls, how far it is ("37/100 calls")."""
        cell = self._cell(self._rows.index(phase.name), 1)
        if phase.state is not PhaseState.RUNNING or phase.progress is None:
            cell.setToolTip(description(phase.name))
            return phase.state.value
        done, total = phase.progress
        unit = step_unit(self._record.phases if self._record is not None else ()) + "s"
        cell.setToolTip(f"{label(phase.name)} running: {done} of {total} {unit} done.")
        text = f"{done}/{total} {unit}"
        # The column keeps its width (the table must not shift): the short form where it must.
        if self.fontMetrics().horizontalAdvance(text) + 12 > self.columnWidth(1):
            text = f"{done}/{total}"
        return text
