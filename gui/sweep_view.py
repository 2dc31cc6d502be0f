"""SweepView: plan a sweep, follow it, read its results and keep the winner."""

from __future__ import annotations

import html

import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QFormLayout,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QSpinBox,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from tflaunch.core.report.review import Review, sweep_review
from tflaunch.core.run.record import RunRecord
from tflaunch.core.settings.config import LaunchConfig
from tflaunch.core.sweep.plan import AXES as CORE_AXES
from tflaunch.core.sweep.plan import (
    OBJECTIVES,
    PlanError,
    Sweep,
    SweepPlan,
    format_objective,
    leader_of,
    outcome,
    winner_of,
)
from tflaunch.core.sweep.report import result_rows
from tflaunch.core.units import format_duration

from .charts import draw_strips

# Axis, default values, what it sets: core's table of axes (env.NAME is typed by hand).
AXES: tuple[tuple[str, str, str], ...] = tuple(
    (name, default, text) for name, (text, default) in CORE_AXES.items() if "." not in name)
WINNER = QColor("#e6f4ea")


class SweepView(QWidget):
    start_requested = Signal(object)  # SweepPlan with a placeholder base; the window supplies the settings
    cancel_requested = Signal()
    save_winner_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._sweep: Sweep | None = None
        self._sweep_id: int | None = None
        self._example: RunRecord | None = None
        self.trial_seconds = 3.0  # until a trial has run, a guess for the estimate
        self._axes: dict[str, tuple[QCheckBox, QLineEdit]] = {}
        grid = QGridLayout()
        for row, (axis, default, text) in enumerate(AXES):
            box = QCheckBox(axis)
            box.setToolTip(f"Vary {text}")
            values = QLineEdit(default)
            values.setToolTip("Values separated by commas")
            values.setEnabled(False)
            box.toggled.connect(values.setEnabled)
            box.toggled.connect(self._update_estimate)
            values.textChanged.connect(self._update_estimate)
            grid.addWidget(box, row // 2, (row % 2) * 2)
            grid.addWidget(values, row // 2, (row % 2) * 2 + 1)
            self._axes[axis] = (box, values)
        self.env_axis = QLineEdit()
        self.env_axis.setPlaceholderText("env: NAME=a,b (an extra environment variable to vary)")
        self.env_axis.textChanged.connect(self._update_estimate)
        grid.addWidget(self.env_axis, len(AXES) // 2, 0, 1, 4)
        vary = QGroupBox("Vary")
        vary.setLayout(grid)

        self.objective = QComboBox()
        for key, text in OBJECTIVES.items():
            self.objective.addItem(text, key)
        self.repeat = QSpinBox(minimum=1, maximum=100, value=5)
        self.repeat.setToolTip("Measured trials per setting")
        self.warmup = QSpinBox(minimum=0, maximum=10, value=1)
        self.warmup.setToolTip("Rounds run first and discarded (page cache, lazy initialisation)")
        self.instances = QSpinBox(minimum=1, maximum=16, value=1)
        self.instances.setToolTip("Probes started together per trial: the contention several processes see")
        self.racing = QCheckBox("Racing")
        self.racing.setChecked(True)
        self.racing.setToolTip("Stop a setting once its range no longer overlaps the leader's and its "
                               "median is at least 3% worse (after 3 trials each)")
        for widget in (self.repeat, self.warmup, self.instances):
            widget.valueChanged.connect(self._update_estimate)
        self.racing.toggled.connect(self._update_estimate)
        how = QFormLayout()
        how.addRow("Objective", self.objective)
        how.addRow("Trials per setting", self.repeat)
        how.addRow("Warm-up rounds", self.warmup)
        how.addRow("Instances at once", self.instances)
        how.addRow(self.racing)
        how_box = QGroupBox("How")
        how_box.setLayout(how)

        self.estimate = QLabel()
        self.estimate.setWordWrap(True)
        self.start_button = QPushButton("Start sweep")
        self.start_button.setToolTip("Run the sweep with the settings panel as the baseline")
        self.start_button.clicked.connect(self._on_start)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setEnabled(False)
        self.cancel_button.clicked.connect(self.cancel_requested)
        self.save_button = QPushButton("Save winner as profile…")
        self.save_button.setEnabled(False)
        self.save_button.clicked.connect(self.save_winner_requested)
        self.progress = QProgressBar()
        self.progress.setFormat("%v of ≤%m trials")
        self.status = QLabel("Choose what to vary and press Start sweep.")
        self.status.setWordWrap(True)
        self.verdict = QLabel()
        self.verdict.setObjectName("headline")
        self.verdict.setWordWrap(True)
        self.verdict.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        # Two lines kept free: the results table below stretches and would clip a wrapped verdict.
        self.verdict.setMinimumHeight(2 * self.verdict.fontMetrics().lineSpacing() + 6)

        buttons = QHBoxLayout()
        for button in (self.start_button, self.cancel_button, self.save_button):
            buttons.addWidget(button)
        top = QHBoxLayout()
        top.addWidget(vary, 3)
        top.addWidget(how_box, 2)

        header, _ = result_rows([], "ready")  # the same columns as the terminal and the review images
        self.table = QTableWidget(0, len(header))
        self.table.setHorizontalHeaderLabels(header)
        self.table.verticalHeader().hide()
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setStretchLastSection(True)
        self.chart = pg.PlotWidget(background="w")
        self.chart.setMenuEnabled(False)
        self.chart.setMouseEnabled(x=False, y=False)
        results = QSplitter(Qt.Orientation.Horizontal)
        results.addWidget(self.table)
        results.addWidget(self.chart)
        results.setStretchFactor(0, 3)
        results.setStretchFactor(1, 2)

        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(self.estimate)
        layout.addLayout(buttons)
        layout.addWidget(self.progress)
        layout.addWidget(self.status)
        layout.addWidget(self.verdict)
        layout.addWidget(results, 1)
        self._update_estimate()

    # -- the plan ----------------------------------------------------------------------
    def plan(self, base: LaunchConfig) -> SweepPlan:
        axes = {axis: [v.strip() for v in values.text().split(",") if v.strip()]
                for axis, (box, values) in self._axes.items() if box.isChecked()}
        env = self.env_axis.text().strip()
        if env:
            name, sep, values = env.partition("=")
            if not sep or not name.strip():
                raise PlanError("Write the environment variable to vary as NAME=a,b.")
            axes[f"env.{name.strip()}"] = [v.strip() for v in values.split(",") if v.strip()]
        return SweepPlan(base, axes, self.repeat.value(), self.warmup.value(), self.objective.currentData(),
                         self.racing.isChecked(), self.instances.value())

    def _count(self) -> int:
        count = 1
        for box, values in self._axes.values():
            if box.isChecked():
                count *= max(1, len([v for v in values.text().split(",") if v.strip()]))
        env = self.env_axis.text().partition("=")[2]
        if env.strip():
            count *= len([v for v in env.split(",") if v.strip()])
        return count + 1  # the baseline

    def _update_estimate(self) -> None:
        settings = self._count()
        trials = settings * (self.warmup.value() + self.repeat.value())
        racing = ", fewer with racing" if self.racing.isChecked() else ""
        self.estimate.setText(f"Plan: {settings} settings (the baseline included) × ({self.warmup.value()} warm-up "
                              f"+ {self.repeat.value()}) = {trials} trials, about "
                              f"{format_duration(trials * self.trial_seconds)}{racing}.")

    def _on_start(self) -> None:
        self.start_requested.emit(None)

    # -- following and results -----------------------------------------------------------
    def show_message(self, text: str) -> None:
        self.status.setText(text)

    def set_example(self, record: RunRecord) -> None:
        """A run of this sweep: reviews take its date and environment from it."""
        self._example = record

    def review(self) -> Review | None:
        if self._sweep is None or not self._sweep.trials_run:
            return None
        return sweep_review(self._sweep, self._example, self._sweep_id)

    def set_running(self, running: bool) -> None:
        if running:  # a new sweep: nothing of the previous one stays on show
            self._sweep, self._example, self._sweep_id = None, None, None
            self.table.setRowCount(0)
            self.verdict.setText("")
            self.progress.setValue(0)
        self.start_button.setEnabled(not running)
        self.cancel_button.setEnabled(running)
        if running:
            self.save_button.setEnabled(False)

    def show_progress(self, sweep: Sweep, seconds_left: float | None) -> None:
        """After each trial: one pass of the statistics feeds the status, table and chart."""
        self._sweep = sweep
        self.progress.setMaximum(sweep.planned_without_racing)
        self.progress.setValue(sweep.trials_run)
        results = sweep.results()
        leader = leader_of(results)
        parts = [f"{sweep.trials_run} trials done"]
        if seconds_left is not None:
            parts.append(f"at most {format_duration(seconds_left)} left")
        if leader:
            parts.append(f"leader {leader.candidate.key} "
                         f"({format_objective(sweep.plan.objective, leader.spread.median)})")
        self.status.setText(" · ".join(parts))
        self.show_results(sweep, results)

    def show_results(self, sweep: Sweep, results: list | None = None) -> None:
        objective = sweep.plan.objective
        results = sweep.results() if results is None else results
        header, rows = result_rows(results, objective)
        self.table.setHorizontalHeaderLabels(header)
        self.table.setRowCount(len(results))
        for row, (result, cells) in enumerate(zip(results, rows, strict=False)):
            for col, text in enumerate(cells):
                item = QTableWidgetItem(text)
                if col in (0, 2, 3, 4, 5, 6):
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                if result.stopped:
                    item.setToolTip(result.stopped)
                    item.setForeground(QColor("#7a7a7a"))
                if row == 0 and result.spread:
                    item.setBackground(WINNER)
                self.table.setItem(row, col, item)
        # The figures come first: the table takes the width its columns need, the chart the rest.
        self.table.setMinimumWidth(min(self.table.horizontalHeader().length() + 2 * self.table.frameWidth(), 900))
        draw_strips(self.chart.getPlotItem(), [(r.candidate.key, r.values, r.stopped is not None) for r in results],
                    objective)
        self.verdict.setText(html.escape(outcome(results, objective)) if leader_of(results) else "")

    def finish(self, sweep: Sweep, status: str, sweep_id: int | None = None) -> None:
        self._sweep, self._sweep_id = sweep, sweep_id
        self.set_running(False)
        results = sweep.results()
        self.show_results(sweep, results)
        self.save_button.setEnabled(winner_of(results) is not None and status == "done")
        done = "Sweep cancelled; its finished trials are in History." if status == "cancelled" else "Sweep done."
        self.status.setText(f"{done} {sweep.trials_run} trials run "
                            f"({sweep.planned_without_racing} without racing).")
