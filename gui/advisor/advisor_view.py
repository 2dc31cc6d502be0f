"""The Advisor tab: `tflaunch doctor` in the app.

The doctor's experiment (core/doctor) runs on a worker thread with the command line's
driver: its children are plain processes, so the GUI thread only receives its progress
(where it is and the time left, core/doctor/progress.py) and, at the end, the diagnosis,
shown as the command line's table and a strip plot of every run numbered as the table's
"#". Cancel takes effect after the run in progress.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pyqtgraph as pg
from PySide6.QtCore import QObject, Qt, QThread, Signal
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import (
    QCheckBox,
    QFrame,
    QGridLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QProgressBar,
    QPushButton,
    QScrollArea,
    QSpinBox,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from tflaunch.core.doctor.experiment import Diagnosis, DoctorError, diagnose
from tflaunch.core.doctor.progress import DoctorProgress
from tflaunch.core.doctor.remedies import REMEDIES, not_for_programs
from tflaunch.core.doctor.report import COLUMNS, doctor_review, report_rows, report_summary, strips
from tflaunch.core.doctor.verdict import MIN_RUNS
from tflaunch.core.report.review import Review
from tflaunch.core.run.watcher import Watcher
from tflaunch.core.settings.config import LaunchConfig
from tflaunch.core.store.history import History, HistoryError

from ..plots.charts import draw_strips
from ..plots.plot_theme import follow_palette
from ..widgets.palette import error_style
from ..widgets.wrapping_label import WrappingLabel


class StopRequestedError(Exception):
    """The user cancelled the doctor between two runs."""


class _RunEnds(Watcher):
    def __init__(self, ended: Callable[[], None]) -> None:
        self._ended = ended

    def ended(self, record: Any) -> None:
        self._ended()


class _Worker(QObject):
    said = Signal(str)
    trial = Signal(str)  # where the doctor is and about how long it has left
    counted = Signal(int, int)  # runs of the sweep under way done, and planned
    finished = Signal(object)  # Diagnosis, or a str saying why there is none

    def __init__(self, config: LaunchConfig, repeat: int, history: History | None, only: set[str]) -> None:
        super().__init__()
        self.config, self.repeat, self.history, self.only = config, repeat, history, only
        self.cancelled = False

    def run(self) -> None:
        progress = DoctorProgress(self.repeat, "warm" in self.only)

        def on_said(text: str) -> None:
            progress.stage(text)
            self.said.emit(f"{text}; {progress.left()}" if progress.durations else text)

        def on_trial(sweep: Any, trial: Any, value: float | None) -> None:
            text = progress.trial(sweep, trial, value)
            self.trial.emit(text[:1].upper() + text[1:])
            self.counted.emit(progress.done, progress.total)
            if self.cancelled:
                raise StopRequestedError

        def on_run_ended() -> None:
            """A run outside the sweeps (warm start's launches) ended: progress too."""
            text = progress.run_ended()
            if text is not None:
                self.trial.emit(text[:1].upper() + text[1:])
                self.counted.emit(progress.done, progress.total)
            if self.cancelled:
                raise StopRequestedError

        # SQLite connections belong to the thread that made them: the worker opens its own.
        history = None
        if self.history is not None:
            try:
                history = History(self.history.path)
            except HistoryError as exc:
                self.said.emit(f"runs not stored: {exc}")
        try:
            result: object = diagnose(self.config, repeat=self.repeat, only=self.only, history=history,
                                      say=on_said, on_trial=on_trial, watcher=_RunEnds(on_run_ended))
        except DoctorError as exc:
            result = f"Cannot examine: {exc}"
        except (StopRequestedError, KeyboardInterrupt):
            result = "Cancelled."
        except Exception as exc:  # a worker must always answer, or the tab waits for ever
            result = f"The doctor failed: {type(exc).__name__}: {exc}"
        finally:
            if history is not None:
                history.close()
        self.finished.emit(result)


def verified_winner(d: Diagnosis) -> bool:
    """Whether the examination has something measured to save: the combination verified in
    its final A/B, or warm start, measured in its own A/B (the profile its command names)."""
    warm = d.warm is not None and d.warm.significant and d.warm_arm is not None and bool(d.warm_arm.profile)
    return (d.verified and d.combined is not None) or warm


START_TIP = "Run the doctor on the Run tab's model and settings (tflaunch doctor)"


REMEDIES_PER_ROW = 5


class AdvisorView(QWidget):
    save_requested = Signal(object)  # Diagnosis with a verified combination
    progress_shown = Signal(str)  # the progress line as the status shows it
    running_changed = Signal(bool)  # the window allows one measurement at a time

    def __init__(self, history: History | None, config: Callable[[], LaunchConfig],
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        # What else measures now (the window's word), None when nothing: one measurement at a time.
        self.busy_elsewhere: Callable[[], str | None] = lambda: None
        self._history, self._config = history, config
        self._thread: QThread | None = None
        self._worker: _Worker | None = None
        self.diagnosis: Diagnosis | None = None
        # Two lines, not four: at 1024x700 every line above the table is a row of it less.
        intro = WrappingLabel(
            "Measures each remedy ticked below against the Run tab's model or program and settings, "
            "interleaved; recommends only measured savings and verifies them together (a few minutes).")
        intro.setToolTip("Remedies that do not apply here (GPU caches without a GPU, the model's format for a "
                         "program) are left out. Each is run against your settings, in turn, so that the "
                         "machine's load falls on both alike; the winners are then combined and verified in a "
                         "final A/B.")
        self.remedies: dict[str, QCheckBox] = {}
        # The remedies in rows of a few: in one row they widened the window to 1149 px.
        choose = QGridLayout()
        choose.addWidget(QLabel("Try"), 0, 0, Qt.AlignmentFlag.AlignTop)
        for i, (name, text) in enumerate(REMEDIES.items()):
            box = QCheckBox(name)
            box.setChecked(True)
            box.setToolTip(text)
            self.remedies[name] = box
            choose.addWidget(box, i // REMEDIES_PER_ROW, 1 + i % REMEDIES_PER_ROW)
        choose.setColumnStretch(REMEDIES_PER_ROW + 1, 1)
        self.repeat = QSpinBox(minimum=MIN_RUNS, maximum=50, value=5)
        self.repeat.setToolTip(f"Measured runs of each remedy and of your settings (at least {MIN_RUNS} for a "
                               "verdict)")
        self.start_button = QPushButton("Examine")
        self.start_button.setToolTip(START_TIP)
        self.start_button.clicked.connect(self.start)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setEnabled(False)
        self.cancel_button.clicked.connect(self.cancel)
        self.save_button = QPushButton("Save as profile…")
        self.save_button.setEnabled(False)
        self.save_button.setToolTip("Save the verified combination of remedies, or the settings warm start was "
                                    "measured with, as a launch profile")
        self.save_button.clicked.connect(self._save)
        row = QHBoxLayout()
        row.addWidget(QLabel("Runs each"))
        row.addWidget(self.repeat)
        row.addWidget(self.start_button)
        row.addWidget(self.cancel_button)
        row.addStretch(1)
        row.addWidget(self.save_button)
        self.progress = QProgressBar()
        self.progress.setRange(0, 0)
        self.progress.setVisible(False)
        self.status = WrappingLabel("")
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        header = self.table.horizontalHeader()
        for col in range(len(COLUMNS) - 1):
            header.setSectionResizeMode(col, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(len(COLUMNS) - 1, QHeaderView.ResizeMode.Stretch)
        # A verdict on one line, elided, whole in its tooltip: wrapped, rows of two and three
        # lines left the table three of its rows at 1024x700 with a session's runs docked below.
        self.table.setWordWrap(False)
        self.table.setTextElideMode(Qt.TextElideMode.ElideRight)
        # Every run of the baseline and each arm, numbered as the table's "#" column.
        self.strips = pg.PlotWidget(background="w", enableMenu=False)
        self.strips.setMenuEnabled(False)
        self.strips.setMouseEnabled(x=False, y=False)
        self.strips.setMinimumHeight(100)
        follow_palette(self.strips)
        self.strips.setVisible(False)
        body = QSplitter(Qt.Orientation.Vertical)
        body.addWidget(self.table)
        below = QSplitter(Qt.Orientation.Horizontal)  # the summary beside the strips: the table keeps the height
        self.summary = WrappingLabel("")
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        # The summary runs to ten lines at 1024 px: beside the table in the splitter, and
        # scrolled there, it cannot make the page, and the window with it, taller than the
        # screen (it did: 787 px on a 700 px screen, the table cut to one row and a half).
        summary = QScrollArea()
        summary.setWidget(self.summary)
        summary.setWidgetResizable(True)
        summary.setFrameShape(QFrame.Shape.NoFrame)
        summary.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        summary.viewport().setAutoFillBackground(False)  # on the tab's page, as the words above it
        self.summary.setAutoFillBackground(False)
        below.addWidget(summary)
        below.addWidget(self.strips)
        below.setChildrenCollapsible(False)
        below.setSizes([1, 1])  # halves (a scrolled summary would otherwise take the strips' width too)
        body.addWidget(below)
        body.setChildrenCollapsible(False)
        body.setStretchFactor(0, 3)
        body.setStretchFactor(1, 1)
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addLayout(choose)
        layout.addLayout(row)
        layout.addWidget(self.progress)
        layout.addWidget(self.status)
        layout.addWidget(body, 1)

    @property
    def running(self) -> bool:
        return self._thread is not None

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802 (Qt's name)
        super().showEvent(event)
        self.offer_remedies(self._config())

    def offer_remedies(self, config: LaunchConfig) -> None:
        """What a launch cannot change in a program (its files, its compile) greyed with the
        reason, instead of ticked and skipped after Examine (seen under Xvfb)."""
        for name, box in self.remedies.items():
            why = not_for_programs(name) if config.is_program else None
            if box.isEnabled() == (why is not None):
                box.setEnabled(why is None)
                box.setChecked(why is None)
                box.setToolTip(f"Not for a program: {why}" if why else REMEDIES[name])

    def start(self) -> None:
        if self.running:
            return
        elsewhere = self.busy_elsewhere()
        if elsewhere:
            self.status.setText(f"Cannot examine while {elsewhere}: one measurement at a time, so none disturbs "
                                "another's figures.")
            self.status.setStyleSheet(error_style())
            return
        config = self._config()
        problems = config.validate()
        if problems:
            self.status.setText(f"Cannot examine: {problems[0].message}")
            self.status.setStyleSheet(error_style())
            return
        self.status.setStyleSheet("")
        self.diagnosis = None
        self.table.setRowCount(0)
        self.strips.setVisible(False)
        self.summary.setText("")
        self.save_button.setEnabled(False)
        only = {name for name, box in self.remedies.items() if box.isChecked()}
        if not only:
            self.status.setText("Cannot examine: tick at least one remedy to try.")
            self.status.setStyleSheet(error_style())
            return
        self._worker = _Worker(config, self.repeat.value(), self._history, only)
        self._thread = QThread(self)
        self._worker.moveToThread(self._thread)
        self._thread.started.connect(self._worker.run)
        self._worker.said.connect(self._on_said)
        self._worker.trial.connect(self._show_progress)
        self._worker.counted.connect(self._count)
        self._worker.finished.connect(self._finished)
        self._set_running(True)
        self.status.setText(f"Examining {config.subject}…")
        self._thread.start()

    def _on_said(self, text: str) -> None:
        self.progress.setRange(0, 0)  # busy until the next sweep counts its runs
        self._show_progress(text[:1].upper() + text[1:] + "…")

    def _show_progress(self, text: str) -> None:
        self.status.setText(text)
        self.progress_shown.emit(text)

    def _count(self, done: int, total: int) -> None:
        """The bar fills with the sweep under way's runs (busy, without a count, between)."""
        self.progress.setRange(0, max(total, 1))
        self.progress.setValue(min(done, total))
        self.progress.setFormat(f"run {done} of {total}")

    def cancel(self) -> None:
        if self._worker is not None:
            self._worker.cancelled = True
            self.status.setText("Cancelling after the run in progress…")

    def stop(self) -> None:
        """The window closes: cancel and wait for the worker's last run."""
        self.cancel()
        if self._thread is not None:
            self._thread.quit()
            self._thread.wait(120_000)

    def _set_running(self, running: bool) -> None:
        self.start_button.setEnabled(not running)
        self.cancel_button.setEnabled(running)
        self.progress.setRange(0, 0)
        self.progress.setVisible(running)
        self.running_changed.emit(running)

    def hold(self, why: str | None) -> None:
        """Another measurement runs (`why` says which) or none does (None)."""
        self.start_button.setEnabled(why is None and not self.running)
        self.start_button.setToolTip(f"Waits: {why}" if why else START_TIP)

    def _finished(self, result: object) -> None:
        if self._thread is not None:
            self._thread.quit()
            self._thread.wait()
            self._thread.deleteLater()
        self._thread, self._worker = None, None
        self._set_running(False)
        if isinstance(result, str):
            self.status.setText(result)
            self.status.setStyleSheet("" if result == "Cancelled." else error_style())
            return
        assert isinstance(result, Diagnosis)
        self.show_diagnosis(result)

    def show_diagnosis(self, d: Diagnosis) -> None:
        self.diagnosis = d
        self.status.setText(f"Done: {d.exam.base.subject}.")
        rows = report_rows(d)
        self.table.setRowCount(len(rows))
        for r, cells in enumerate(rows):
            for c, text in enumerate(cells):
                item = QTableWidgetItem(text)
                if c in (0, 3, 4):
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                item.setToolTip(text)
                self.table.setItem(r, c, item)
        self.table.resizeRowsToContents()
        shown = strips(d)
        draw_strips(self.strips.getPlotItem(), shown, "ready")
        # Named as the table's column: "Time to ready (s)" is taller than the strips are at 1024x700.
        self.strips.getPlotItem().getAxis("left").setLabel("Ready (s)")
        self.strips.setVisible(any(values for _, values, _ in shown))
        self.summary.setText(" ".join(report_summary(d, cli=False)))
        self.save_button.setEnabled(verified_winner(d))

    def review(self) -> Review | None:
        """The finished examination as a review image (File ▸ Export review…)."""
        return doctor_review(self.diagnosis) if self.diagnosis is not None else None

    def _save(self) -> None:
        if self.diagnosis is not None and verified_winner(self.diagnosis):
            self.save_requested.emit(self.diagnosis)
