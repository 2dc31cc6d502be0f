"""SweepView: plan a sweep, follow it, read its results and keep the winner."""

from __future__ import annotations

import html
import time
from collections.abc import Callable

import pyqtgraph as pg
from PySide6.QtCore import QSize, Qt, QTimer, Signal
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFrame,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QProgressBar,
    QPushButton,
    QScrollArea,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from tflaunch.core.report.review import Review, sweep_review
from tflaunch.core.run.record import RunRecord
from tflaunch.core.settings.config import LaunchConfig
from tflaunch.core.store.history import History
from tflaunch.core.sweep.instances import DOES_NOT_FIT, INSTANCES_HELP, instances_rows
from tflaunch.core.sweep.instances import HEADER as INSTANCES_HEADER
from tflaunch.core.sweep.plan import Sweep, SweepPlan, Trial, format_objective, leader_of, outcome, winner_of
from tflaunch.core.sweep.report import result_rows
from tflaunch.core.units import format_duration

from ..plots.charts import draw_strips
from ..plots.plot_theme import follow_palette
from ..widgets.palette import STATE_COLORS, highlight_background, keep_colours, readable
from .sweep_plan_form import SweepPlanForm

# The chart stays readable however small the window (1024×700 included): the plan above
# scrolls and the table beside it narrows first.
CHART_MIN_HEIGHT = 170  # room for the axis titles, not only the dots
CHART_MIN_WIDTH = 220
PLAN_MIN_HEIGHT = 60


START_TIP = "Run the sweep with the settings panel as the baseline"

class SweepView(QWidget):
    start_requested = Signal(object)  # SweepPlan with a placeholder base; the window supplies the settings
    cancel_requested = Signal()
    save_winner_requested = Signal()

    def __init__(self, history: History | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._sweep: Sweep | None = None
        self._sweep_id: int | None = None
        self._runs: list[RunRecord] = []
        self._preparing_since: float | None = None
        self._preparing_text = ""
        self._clock = QTimer(self)  # the seconds a preparation (a conversion) has taken, while it runs
        self._clock.setInterval(1000)
        self._clock.timeout.connect(self._show_preparing)

        self.form = SweepPlanForm(history)
        # The plan's controls, where the window and the tests reach them.
        self.estimate, self._axes, self.env_axis = self.form.estimate, self.form.axes, self.form.env_axis
        self.objective = self.form.objective
        self.repeat, self.warmup, self.instances, self.racing = (self.form.repeat, self.form.warmup,
                                                                  self.form.instances, self.form.racing)
        self.start_button = QPushButton("Start sweep")
        self.start_button.setToolTip(START_TIP)
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

        header, _ = result_rows([], "ready")  # the same columns as the terminal and the review images
        self.table = QTableWidget(0, len(header))
        self.table.setHorizontalHeaderLabels(header)
        self.table.verticalHeader().hide()
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        columns = self.table.horizontalHeader()
        columns.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        columns.setStretchLastSection(True)
        # Per instance count: the slowest instance's time to ready, GPU memory, whether all fit.
        self.instance_table = QTableWidget(0, len(INSTANCES_HEADER))
        self.instance_table.setHorizontalHeaderLabels(INSTANCES_HEADER)
        self.instance_table.verticalHeader().hide()
        self.instance_table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.instance_table.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self.instance_table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.instance_table.horizontalHeader().setStretchLastSection(True)
        self.instance_table.setWordWrap(False)
        self.instance_table.setToolTip(f"Instances: {INSTANCES_HELP}. GPU memory is what NVML saw each process "
                                       "tree hold at its peak; the total adds the instances' peaks up.")
        self.instance_table.hide()
        self.chart = pg.PlotWidget(background="w")
        self.chart.setMenuEnabled(False)
        self.chart.setMouseEnabled(x=False, y=False)
        follow_palette(self.chart)
        # The leader's highlight and the stopped rows' grey are picked for the palette.
        keep_colours(self, lambda: self.show_results(self._sweep) if self._sweep is not None else None)
        self.chart.getPlotItem().getAxis("bottom").enableAutoSIPrefix(False)  # setting numbers, not "(x0.001)"
        self.chart.setMinimumSize(CHART_MIN_WIDTH, CHART_MIN_HEIGHT)
        self.results = QSplitter(Qt.Orientation.Horizontal)
        self.results.addWidget(self.table)
        self.results.addWidget(self.chart)
        self.results.setStretchFactor(0, 3)
        self.results.setStretchFactor(1, 2)
        self.results.setChildrenCollapsible(False)

        # Above: the plan, which scrolls when the window is small. Below: its size, the
        # buttons, the sweep's progress and its results, always in sight.
        scroll = QScrollArea()
        scroll.setWidget(self.form)
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)  # see resizeEvent
        scroll.setMinimumHeight(PLAN_MIN_HEIGHT)
        self._plan_scroll = scroll
        follow = _FitsItsText()
        follow_layout = QVBoxLayout(follow)
        follow_layout.setContentsMargins(0, 0, 0, 0)
        buttons = QHBoxLayout()
        for button in (self.start_button, self.cancel_button, self.save_button):
            buttons.addWidget(button)
        follow_layout.addWidget(self.estimate)  # the plan's size and time, in sight by the button that starts it
        follow_layout.addLayout(buttons)
        follow_layout.addWidget(self.progress)
        follow_layout.addWidget(self.status)
        follow_layout.addWidget(self.verdict)
        # The per-count table under the results, sharing their height (it scrolls when small).
        self.results_and_instances = QSplitter(Qt.Orientation.Vertical)
        self.results_and_instances.addWidget(self.results)
        self.results_and_instances.addWidget(self.instance_table)
        self.results_and_instances.setChildrenCollapsible(False)
        follow_layout.addWidget(self.results_and_instances, 1)
        self.sections = QSplitter(Qt.Orientation.Vertical)
        self.sections.addWidget(scroll)
        self.sections.addWidget(follow)
        self.sections.setStretchFactor(0, 0)
        self.sections.setStretchFactor(1, 1)
        self.sections.setChildrenCollapsible(False)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)  # a narrow margin inside the tab's frame: the pixels go to the chart
        layout.addWidget(self.sections)

    def plan(self, base: LaunchConfig) -> SweepPlan:
        return self.form.plan(base)

    def follow_settings(self, panel: QWidget, config: Callable[[], LaunchConfig]) -> None:
        self.form.follow_settings(panel, config)

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 (Qt's name)
        """The plan scrolls up and down, never sideways: its boxes stack when narrow."""
        super().resizeEvent(event)
        self.form.fit_width(self._plan_scroll.width() - self._plan_scroll.verticalScrollBar().sizeHint().width())
        self._share_height()

    def _share_height(self) -> None:
        """Give what follows the plan (its size line, the buttons, results) the height it
        needs first; the plan takes the rest and scrolls. A splitter left to itself gave the
        plan its whole height, which squeezed the wrapped size line into half a row."""
        sizes = self.sections.sizes()
        total = sum(sizes)
        follow = self.sections.widget(1)
        if total <= 0 or follow is None:
            return
        needed = follow.minimumSizeHint().height()
        if sizes[1] < needed:
            plan = max(PLAN_MIN_HEIGHT, total - needed)
            self.sections.setSizes([plan, total - plan])

    def _on_start(self) -> None:
        self.start_requested.emit(None)

    # -- following and results -----------------------------------------------------------
    def show_message(self, text: str) -> None:
        """A word from the window or the controller; while preparing, the seconds it takes follow it."""
        self._preparing_text = text
        self.status.setText(text)
        self._show_preparing()

    def _show_preparing(self) -> None:
        if self._preparing_since is not None:
            waited = time.monotonic() - self._preparing_since
            # A coarse timer may tick a little early: 0.97 s is "1 s so far".
            self.status.setText(f"{self._preparing_text} {waited:.0f} s so far" if waited >= 0.5
                                else self._preparing_text)

    def trial_started(self, trial: Trial, record: RunRecord) -> None:
        """A trial's first run began: the review takes its date and environment from the
        sweep's own runs."""
        self._runs.append(record)
        if self._preparing_since is not None:  # prepared: the bar stays busy until a trial has ended
            self._preparing_since = None
            self._clock.stop()
            self.status.setText(f"First trial running: {trial.candidate.key}{' (warm-up)' if trial.warmup else ''}…")

    def review(self) -> Review | None:
        if self._sweep is None or not self._sweep.trials_run:
            return None
        return sweep_review(self._sweep, self._runs, self._sweep_id)

    def hold(self, why: str | None) -> None:
        """Another measurement runs (`why` says which) or none does (None)."""
        self.start_button.setEnabled(why is None)
        self.start_button.setToolTip(f"Waits: {why}" if why else START_TIP)

    def set_running(self, running: bool) -> None:
        if running:  # a new sweep: nothing of the previous one stays on show while it is prepared
            self._sweep, self._runs, self._sweep_id = None, [], None
            self.table.setRowCount(0)
            self.instance_table.setRowCount(0)
            self.instance_table.hide()
            draw_strips(self.chart.getPlotItem(), [], self.objective.currentData())
            self.verdict.setText("")
            self.save_button.setEnabled(False)
            self.progress.setRange(0, 0)  # busy until the first trial ends (show_progress)
            self._preparing_since = time.monotonic()
            self._clock.start()
        else:
            self._preparing_since = None
            self._clock.stop()
            self.progress.setRange(0, 1)
            self.progress.reset()
        self.start_button.setEnabled(not running)
        self.cancel_button.setEnabled(running)

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
        if leader and leader.spread:
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
                    item.setForeground(readable(STATE_COLORS["waiting"]))
                if row == 0 and result.spread:
                    item.setBackground(highlight_background())
                self.table.setItem(row, col, item)
        self._widen_table()
        self._show_instances(sweep)
        draw_strips(self.chart.getPlotItem(), [(r.candidate.key, r.values, r.stopped is not None) for r in results],
                    objective)
        self.verdict.setText(html.escape(outcome(results, objective)) if leader_of(results) else "")

    def _show_instances(self, sweep: Sweep) -> None:
        """The per-count table, for a sweep that starts several instances at once."""
        if not sweep.plan.shows_instances:
            self.instance_table.hide()
            return
        instance_rows = sweep.instance_rows()
        _, cells = instances_rows(instance_rows)
        table = self.instance_table
        table.setRowCount(len(cells))
        for row, (summary, texts) in enumerate(zip(instance_rows, cells, strict=True)):
            for col, text in enumerate(texts):
                item = QTableWidgetItem(text)
                if 0 < col < len(texts) - 1:
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                if summary.failure:
                    item.setToolTip(summary.failure)
                if col == len(texts) - 1 and summary.fit == DOES_NOT_FIT:
                    item.setForeground(readable(STATE_COLORS["failed"]))
                table.setItem(row, col, item)
        # Every count in sight where there is room; two rows at least, the rest scrolls.
        rows = [table.rowHeight(r) for r in range(table.rowCount())]
        frame = table.horizontalHeader().sizeHint().height() + 2 * table.frameWidth() \
            + table.horizontalScrollBar().sizeHint().height()
        table.setMaximumHeight(frame + sum(rows) + 2)
        table.setMinimumHeight(frame + sum(rows[:2]) + 2)
        table.show()
        split = self.results_and_instances
        total = sum(split.sizes())
        want = min(table.maximumHeight(), total // 2)
        if total and split.sizes()[1] < want:  # room for the counts, up to half; the user may drag it
            split.setSizes([total - want, want])

    def _widen_table(self) -> None:
        """The figures come first: the table takes the width its columns need, the chart
        the rest, but never less than its minimum."""
        want = self.table.horizontalHeader().length() + 2 * self.table.frameWidth() \
            + self.table.verticalScrollBar().sizeHint().width()
        total = sum(self.results.sizes())
        if total and self.table.width() < want:
            table = min(want, total - max(CHART_MIN_WIDTH, int(total * 0.3)))
            self.results.setSizes([table, total - table])

    def finish(self, sweep: Sweep, status: str, sweep_id: int | None = None) -> None:
        self._sweep, self._sweep_id = sweep, sweep_id
        self.set_running(False)
        self.progress.setRange(0, sweep.planned_without_racing)
        self.progress.setValue(sweep.trials_run)
        results = sweep.results()
        self.show_results(sweep, results)
        self.save_button.setEnabled(winner_of(results) is not None and status == "done")
        done = "Sweep cancelled; its finished trials are in History." if status == "cancelled" else "Sweep done."
        self.status.setText(f"{done} {sweep.trials_run} trials run "
                            f"({sweep.planned_without_racing} without racing).")
        self.form.forget_history(sweep.plan.base.subject)  # its runs are history now


class _FitsItsText(QWidget):
    """A widget whose minimum height is what its wrapped labels need at its width: a
    splitter asks minimumSizeHint(), which ignores word wrap, and would clip the chart."""

    def minimumSizeHint(self) -> QSize:  # noqa: N802 (Qt's name)
        hint = super().minimumSizeHint()
        layout = self.layout()
        if layout is not None and self.width() > 0:
            hint.setHeight(max(hint.height(), layout.totalMinimumHeightForWidth(self.width())))
        return hint

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 (Qt's name)
        super().resizeEvent(event)
        if event.size().width() != event.oldSize().width():
            self.updateGeometry()  # wrapped lines change with the width: the splitter asks again

