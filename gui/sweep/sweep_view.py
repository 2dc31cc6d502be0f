"""SweepView: plan a sweep, follow it, read its results and keep the winner."""

from __future__ import annotations

import html
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pyqtgraph as pg
from PySide6.QtCore import QSize, Qt, QTimer, Signal
from PySide6.QtGui import QResizeEvent, QShowEvent
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QScrollArea,
    QSplitter,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from tflaunch.core.report.review import Review, sweep_review
from tflaunch.core.run.record import RunRecord
from tflaunch.core.settings.config import LaunchConfig
from tflaunch.core.store.history import History
from tflaunch.core.sweep.plan import Sweep, SweepPlan, Trial, format_objective, leader_of, outcome, winner_of
from tflaunch.core.units import format_duration

from ..plots.charts import draw_strips
from ..plots.plot_theme import follow_palette
from ..widgets.file_dialogs import open_folder
from ..widgets.palette import keep_colours
from ..widgets.text_roles import headline
from .cluster_submission import ClusterSubmission
from .instances_table import InstancesTable
from .results_table import ResultsTable
from .sweep_plan_form import SweepPlanForm

if TYPE_CHECKING:  # built, and imported, when a cluster sweep is first opened
    from .cluster_view import ClusterSweepView

# The chart stays readable however small the window (1024×700 included): the plan above
# scrolls and the table beside it narrows first.
CHART_MIN_HEIGHT = 170  # room for the axis titles, not only the dots
CHART_MIN_WIDTH = 220
PLAN_MIN_HEIGHT = 60
RESULTS_ROWS = 6  # the results table's rows in sight, whatever the window's size


START_TIP = "Run the sweep with the settings panel as the baseline"
SUBMIT_TIP = "Submit the sweep to the Slurm cluster with the settings panel as the baseline"

class SweepView(QWidget):
    start_requested = Signal(object)  # SweepPlan with a placeholder base; the window supplies the settings
    cancel_requested = Signal()
    save_winner_requested = Signal()
    cluster_merged = Signal()  # a cluster sweep's runs were stored in the history
    node_type_winner_requested = Signal(object, int)  # a node type's NodeTypeSweep, its History sweep

    def __init__(self, history: History | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._sweep: Sweep | None = None
        self._sweep_id: int | None = None
        self._runs: list[RunRecord] = []
        self._history = history
        self._cluster: ClusterSweepView | None = None
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
        self.cancel_button.clicked.connect(self._on_cancel)
        self.save_button = QPushButton("Save winner as profile…")
        self.save_button.setEnabled(False)
        self.save_button.clicked.connect(self.save_winner_requested)
        self.open_cluster_button = QPushButton("Open cluster sweep…")
        self.open_cluster_button.setToolTip("Follow a sweep submitted to Slurm from its shared folder: its trials, "
                                            "merge, resubmit, one verdict per node type (File menu, Ctrl+Alt+O)")
        self.open_cluster_button.clicked.connect(self.ask_cluster_folder)
        self.form.run_on.add_button(self.open_cluster_button)  # beside the choice of the cluster
        self.form.run_on.changed.connect(self._on_run_on_changed)
        self.submission = ClusterSubmission(self.form.run_on, self)
        self.submission.message.connect(self.show_message)
        self.submission.busy_changed.connect(self._set_submitting)
        self.submission.submitted.connect(self.open_cluster)
        self.progress = QProgressBar()
        self.progress.setFormat("%v of ≤%m trials")
        self.status = QLabel("Choose what to vary and press Start sweep.")
        self.status.setWordWrap(True)
        self.verdict = headline(QLabel())
        self.verdict.setWordWrap(True)
        self.verdict.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        # Two lines kept free: the results table below stretches and would clip a wrapped verdict.
        self.verdict.setMinimumHeight(2 * self.verdict.fontMetrics().lineSpacing() + 6)
        # Until there is a verdict (and a sweep to count), neither takes room: at 1024x700 the
        # empty pair left the plan and the results table 3 and 4 rows each (issue 42).
        self.verdict.hide()
        self._swept = False  # a sweep was started from this tab: its progress bar has something to say
        self.progress.hide()

        self.table = ResultsTable()  # the same columns as the terminal and the review images
        # Six rows in sight (and the header, and a sideways scroll bar) at any window size.
        self.table.setMinimumHeight(self.table.horizontalHeader().sizeHint().height() + 2 * self.table.frameWidth()
                                    + RESULTS_ROWS * self.table.verticalHeader().defaultSectionSize()
                                    + self.table.horizontalScrollBar().sizeHint().height())
        self.instance_table = InstancesTable()  # per instance count, for a sweep of several at once
        self.chart = pg.PlotWidget(background="w", enableMenu=False)
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
        # The per-count table under the results, sharing their height (it scrolls when small).
        self.results_and_instances = QSplitter(Qt.Orientation.Vertical)
        self.results_and_instances.addWidget(self.results)
        self.results_and_instances.addWidget(self.instance_table)
        self.results_and_instances.setChildrenCollapsible(False)
        # Below the buttons: this machine's sweep, or a cluster sweep followed from its folder.
        local = QWidget()
        local_layout = QVBoxLayout(local)
        local_layout.setContentsMargins(0, 0, 0, 0)
        local_layout.addWidget(self.verdict)
        local_layout.addWidget(self.results_and_instances, 1)
        self.pages = _Pages()
        self.pages.addWidget(local)
        self.pages.currentChanged.connect(lambda _index: self._show_progress_bar())
        follow_layout.addWidget(self.pages, 1)
        self.sections = QSplitter(Qt.Orientation.Vertical)
        self.sections.addWidget(scroll)
        self.sections.addWidget(follow)
        self.sections.setStretchFactor(0, 0)
        self.sections.setStretchFactor(1, 1)
        self.sections.setChildrenCollapsible(False)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)  # a narrow margin inside the tab's frame: the pixels go to the chart
        layout.addWidget(self.sections)

    @property
    def cluster(self) -> ClusterSweepView:
        """The cluster sweep's page, built when first asked for: most users never open one,
        and it was a third of the tab's first open."""
        if self._cluster is None:
            from .cluster_view import ClusterSweepView

            self._cluster = ClusterSweepView(self._history)
            self.pages.addWidget(self._cluster)
            self._cluster.closed.connect(lambda: self.pages.setCurrentIndex(0))
            self._cluster.merged.connect(self.cluster_merged)
            self._cluster.save_winner_requested.connect(self.node_type_winner_requested)
        return self._cluster

    def _cluster_on_show(self) -> bool:
        return self._cluster is not None and self.pages.currentWidget() is self._cluster

    def plan(self, base: LaunchConfig) -> SweepPlan:
        return self.form.plan(base)

    def follow_settings(self, panel: QWidget, config: Callable[[], LaunchConfig]) -> None:
        self.form.follow_settings(panel, config)

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 (Qt's name)
        """The plan scrolls up and down, never sideways: its boxes stack when narrow."""
        super().resizeEvent(event)
        self.form.fit_width(self._plan_scroll.width() - self._plan_scroll.verticalScrollBar().sizeHint().width())
        self._share_height()

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802 (Qt's name)
        """An empty results table has its columns' width too, where the window has it: at
        1360x860 a fresh tab scrolled them sideways beside an empty chart."""
        super().showEvent(event)
        QTimer.singleShot(0, self, self._widen_table)  # once the splitter has its width

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

    def _on_cancel(self) -> None:
        if self.submission.running:
            self.submission.cancel()
        else:
            self.cancel_requested.emit()

    def _on_run_on_changed(self) -> None:
        cluster = self.form.run_on.on_cluster
        self.start_button.setText("Submit to Slurm" if cluster else "Start sweep")
        self.start_button.setToolTip(SUBMIT_TIP if cluster else START_TIP)

    # -- on a Slurm cluster ---------------------------------------------------------------
    def submit_to_cluster(self, plan: SweepPlan) -> None:
        self.submission.start(plan)

    def _set_submitting(self, submitting: bool) -> None:
        self.start_button.setEnabled(not submitting)
        self.cancel_button.setEnabled(submitting)
        self._preparing_since = time.monotonic() if submitting else None  # the seconds the check job waits
        self._show_progress_bar()
        if submitting:
            self._clock.start()
            self.progress.setRange(0, 0)
        else:
            self._clock.stop()
            self.progress.setRange(0, 1)
            self.progress.reset()

    def _show_progress_bar(self) -> None:
        """The bar counts this machine's trials, or shows a submission busy; a cluster sweep
        followed below has its own counts, and the height goes to them."""
        self.progress.setVisible((self.pages.currentIndex() == 0 and self._swept) or self.submission.running)

    def ask_cluster_folder(self) -> None:
        chosen = open_folder(self, "cluster", "Open a cluster sweep's folder")
        if chosen:
            self.open_cluster(Path(chosen))

    def open_cluster(self, path: Path) -> None:
        """Follow the cluster sweep in `path` below the plan, which gives it most of the height."""
        self.pages.setCurrentWidget(self.cluster)
        self.cluster.open(path)
        total = sum(self.sections.sizes())
        if total:
            plan = max(PLAN_MIN_HEIGHT, total // 4)
            self.sections.setSizes([plan, total - plan])

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
        if self._cluster_on_show():  # a cluster sweep on show: its review
            return self.cluster.review()
        if self._sweep is None or not self._sweep.trials_run:
            return None
        return sweep_review(self._sweep, self._runs, self._sweep_id)

    def hold(self, why: str | None) -> None:
        """Another measurement runs (`why` says which) or none does (None)."""
        self.start_button.setEnabled(why is None and not self.submission.running)
        self.start_button.setToolTip(f"Waits: {why}" if why else SUBMIT_TIP if self.form.run_on.on_cluster
                                     else START_TIP)

    def set_running(self, running: bool) -> None:
        if running:  # a new sweep: nothing of the previous one stays on show while it is prepared
            if self._cluster_on_show():
                self.cluster.close_sweep()  # this machine's sweep takes the place below the plan
            self._sweep, self._runs, self._sweep_id = None, [], None
            self.table.setRowCount(0)
            self.instance_table.setRowCount(0)
            self.instance_table.hide()
            draw_strips(self.chart.getPlotItem(), [], self.objective.currentData())
            self._set_verdict("")
            self._swept = True
            self._show_progress_bar()
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
        self.table.show_results(results, objective)
        self._widen_table()
        self._show_instances(sweep)
        draw_strips(self.chart.getPlotItem(), [(r.candidate.key, r.values, r.stopped is not None) for r in results],
                    objective)
        words = outcome(results, objective, planned=sweep.plan.repeat)
        self._set_verdict(html.escape(words) if leader_of(results) else "")

    def _set_verdict(self, text: str) -> None:
        self.verdict.setText(text)
        self.verdict.setVisible(bool(text))

    def _show_instances(self, sweep: Sweep) -> None:
        """The per-count table, for a sweep that starts several instances at once."""
        if not self.instance_table.show_sweep(sweep):
            return
        table = self.instance_table
        split = self.results_and_instances
        total = sum(split.sizes())
        want = min(table.maximumHeight(), total // 2)
        if total and split.sizes()[1] < want:  # room for the counts, up to half; the user may drag it
            split.setSizes([total - want, want])

    def _widen_table(self) -> None:
        """The figures come first: the table takes the width its columns need, the chart
        the rest, but never less than its minimum."""
        want = self.table.wanted_width()
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


class _Pages(QStackedWidget):
    """The local results or the cluster sweep, asking only for what the page on show needs
    at least: a page's wrapped labels would otherwise make the splitter above ask the height
    its tables would like (height for width is a preferred height), and the window grew."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.currentChanged.connect(lambda _index: self.updateGeometry())

    def hasHeightForWidth(self) -> bool:  # noqa: N802 (Qt's name)
        return False

    def minimumSizeHint(self) -> QSize:  # noqa: N802 (Qt's name)
        page = self.currentWidget()
        return page.minimumSizeHint() if page is not None else super().minimumSizeHint()


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

