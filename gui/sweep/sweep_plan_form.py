"""SweepPlanForm: what a sweep varies and how, with the plan's size and time said as it is edited.

The counting is core's (SweepPlan.size, the one the command line uses); the time
comes from the earlier runs of the same model in the history, never from whatever run
another tab shows.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QSignalBlocker, SignalInstance
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import (
    QAbstractButton,
    QBoxLayout,
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QGridLayout,
    QGroupBox,
    QLineEdit,
    QPlainTextEdit,
    QSpinBox,
    QTableWidget,
    QVBoxLayout,
    QWidget,
)

from tflaunch.core.settings.config import LaunchConfig
from tflaunch.core.store.history import History, HistoryError
from tflaunch.core.sweep.instances import INSTANCES_HELP, InstanceCountError, parse_counts
from tflaunch.core.sweep.plan import AXES as CORE_AXES
from tflaunch.core.sweep.plan import (
    MODEL_ONLY_AXES,
    OBJECTIVES,
    PlanError,
    SweepPlan,
    objective_choices,
    objective_words,
)
from tflaunch.core.sweep.size import NOTHING_TO_VARY, PlanSize, estimate_seconds, recent_ready_times
from tflaunch.core.units import format_duration

from ..widgets.section import Section
from ..widgets.wrapping_label import WrappingLabel
from .run_on_box import RunOnBox, gpu_types

# Axis, default values, what it sets: core's table of axes (env.NAME is typed by hand).
# Instances are counted in the How box (one count, or several to compare).
AXES: tuple[tuple[str, str, str], ...] = tuple(
    (name, default, text) for name, (text, default) in CORE_AXES.items() if "." not in name and name != "instances")
RACING_TIP = ("Stop a setting once its range no longer overlaps the leader's and its median is at least 3% "
              "worse (after 3 trials each)")
RACING_OFF_TIP = "Off on a Slurm cluster: an array does not wait for one result to choose the next trial"
EMPTY_PLAN = f"{NOTHING_TO_VARY[:1].upper()}{NOTHING_TO_VARY[1:]}: tick it under Vary and type its values."


class SweepPlanForm(QWidget):
    def __init__(self, history: History | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.history = history
        self._base: Callable[[], LaunchConfig] = LaunchConfig
        self._ready_times: dict[str, list[float] | str] = {}  # model: its recent times to ready, or why none
        self.estimate = WrappingLabel()  # the plan's size and time; the view shows it by its Start button
        self._boxes = (self._build_vary(), self._build_how())
        self._row = QBoxLayout(QBoxLayout.Direction.LeftToRight)
        self._row.addWidget(self._boxes[0], 1)
        self._row.addWidget(self._boxes[1], 0)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(self._row)
        self.run_on = RunOnBox()
        self.run_on.changed.connect(self._on_run_on_changed)
        layout.addWidget(self.run_on)
        layout.addStretch(1)
        self._update_estimate()

    def _build_vary(self) -> QGroupBox:
        self.axes: dict[str, tuple[QCheckBox, QLineEdit]] = {}
        self._vary_tips: dict[str, str] = {}  # each box's own tooltip, given back when it is offered again
        grid = QGridLayout()
        for row, (axis, default, text) in enumerate(AXES):
            box = QCheckBox(axis)
            box.setToolTip(self._vary_tips.setdefault(axis, f"Vary {text}"))
            values = QLineEdit(default)
            values.setToolTip(f"Values of {axis} separated by commas: {text}")
            # The offered values stay readable ("default,off"), not clipped to "fault,off".
            values.setMinimumWidth(values.fontMetrics().horizontalAdvance(default + "MM"))
            values.setEnabled(False)
            box.toggled.connect(values.setEnabled)
            box.toggled.connect(self._update_estimate)
            values.textChanged.connect(self._update_estimate)
            grid.addWidget(box, row // 2, (row % 2) * 2)
            grid.addWidget(values, row // 2, (row % 2) * 2 + 1)
            self.axes[axis] = (box, values)
        self.env_axis = QLineEdit()
        self.env_axis.setPlaceholderText("env: NAME=a,b (an extra environment variable to vary)")
        self.env_axis.textChanged.connect(self._update_estimate)
        grid.addWidget(self.env_axis, (len(AXES) + 1) // 2, 0, 1, 4)  # a row of its own, below every axis
        grid.setColumnStretch(1, 1)
        grid.setColumnStretch(3, 1)
        vary = Section("Vary")
        vary.setLayout(grid)
        return vary

    def prefill(self, axes: dict[str, list[str]]) -> list[str]:
        """Vary exactly these axes with these values (a comparison's "Sweep these settings");
        the axes this form has no box for, which the caller says it cannot sweep."""
        for box, _values in self.axes.values():
            box.setChecked(False)
        self.env_axis.clear()
        missing = []
        for axis, values in axes.items():
            if axis in self.axes:
                box, line = self.axes[axis]
                box.setChecked(True)
                line.setText(",".join(values))
            else:
                missing.append(axis)
        return missing

    def _build_how(self) -> QGroupBox:
        self.objective = QComboBox()  # the subject's own objectives: _offer_objectives
        self.objective.addItem(OBJECTIVES["ready"], "ready")
        self.repeat = QSpinBox(minimum=1, maximum=100, value=5)
        self.repeat.setToolTip("Measured trials per setting")
        self.warmup = QSpinBox(minimum=0, maximum=10, value=1)
        self.warmup.setToolTip("Rounds run first and discarded (page cache, lazy initialisation)")
        self.instances = QLineEdit("1")
        self.instances.setToolTip(f"Instances: {INSTANCES_HELP}. One number: every trial starts that many. "
                                  "Several (1,2,4): each count is a setting, and the results say per count the "
                                  "slowest instance's time to ready, GPU memory per process and per GPU, and "
                                  "whether all fit")
        self.instances.setMinimumWidth(self.instances.fontMetrics().horizontalAdvance("1,2,4,8MM"))
        self.instances.textChanged.connect(self._update_estimate)
        self.racing = QCheckBox("Racing")
        self.racing.setChecked(True)
        self.racing.setToolTip(RACING_TIP)
        for widget in (self.repeat, self.warmup):
            widget.valueChanged.connect(self._update_estimate)
        self.racing.toggled.connect(self._update_estimate)
        how = QFormLayout()
        how.addRow("Objective", self.objective)
        how.addRow("Trials per setting", self.repeat)
        how.addRow("Warm-up rounds", self.warmup)
        how.addRow("Instances", self.instances)
        how.addRow(self.racing)
        how_box = Section("How")
        how_box.setLayout(how)
        return how_box

    def _on_run_on_changed(self) -> None:
        self.racing.setEnabled(not self.run_on.on_cluster)
        self.racing.setToolTip(RACING_OFF_TIP if self.run_on.on_cluster else RACING_TIP)
        self._update_estimate()

    def fit_width(self, room: int) -> None:
        """Vary and How side by side where `room` pixels hold both, else one above the other."""
        vary, how = self._boxes
        need = vary.minimumSizeHint().width() + self._row.spacing() + how.minimumSizeHint().width()
        self._row.setDirection(QBoxLayout.Direction.LeftToRight if need <= room else QBoxLayout.Direction.TopToBottom)

    # -- the plan ----------------------------------------------------------------------
    def follow_settings(self, panel: QWidget, config: Callable[[], LaunchConfig]) -> None:
        """Take the baseline from `config` (the settings panel's), and count and estimate
        the plan again whenever anything in `panel` is edited: the model decides the
        estimate, the other settings whether the baseline is also in the grid."""
        self._base = config
        for signal in _edit_signals(panel):
            signal.connect(self._update_estimate)
        self._update_estimate()

    def plan(self, base: LaunchConfig) -> SweepPlan:
        """The plan on show with `base` as its baseline; PlanError, in the tab's words, for
        one that cannot run."""
        axes = {axis: [v.strip() for v in values.text().split(",") if v.strip()]
                for axis, (box, values) in self.axes.items() if box.isChecked()}
        env = self.env_axis.text().strip()
        if env:
            name, sep, values = env.partition("=")
            if not sep or not name.strip():
                raise PlanError("Write the environment variable to vary as NAME=a,b, such as MY_FLAG=0,1.")
            axes[f"env.{name.strip()}"] = [v.strip() for v in values.split(",") if v.strip()]
        try:
            counts = parse_counts(self.instances.text())
        except InstanceCountError as exc:
            raise PlanError(f"{str(exc)[:1].upper()}{str(exc)[1:]}.") from None
        if len(counts) > 1:
            axes["instances"] = [str(n) for n in counts]
        # Racing needs each result before choosing the next trial; a Slurm array runs them all.
        racing = self.racing.isChecked() and not self.run_on.on_cluster
        plan = SweepPlan(base, axes, self.repeat.value(), self.warmup.value(), self.objective.currentData(),
                         racing, counts[0])
        if not plan.size().settings:
            raise PlanError(EMPTY_PLAN)
        return plan

    def _offer_objectives(self, base: LaunchConfig) -> None:
        """What the subject can give (its phases, its mark), keeping the choice where it can."""
        keys = objective_choices(base)
        if keys == [self.objective.itemData(i) for i in range(self.objective.count())]:
            return
        chosen = self.objective.currentData()
        with QSignalBlocker(self.objective):
            self.objective.clear()
            for key in keys:
                self.objective.addItem(objective_words(key), key)
            self.objective.setCurrentIndex(max(keys.index(chosen) if chosen in keys else 0, 0))

    def _offer_axes(self, base: LaunchConfig) -> None:
        """A program's own choices (its files, batch, jit_compile) are not offered to vary:
        greyed, with the reason, instead of refused after Start."""
        for axis, why in MODEL_ONLY_AXES.items():
            if axis not in self.axes:
                continue
            box, values = self.axes[axis]
            if box.isEnabled() == base.is_program:
                with QSignalBlocker(box):
                    box.setChecked(box.isChecked() and not base.is_program)
                values.setEnabled(box.isChecked())
                box.setEnabled(not base.is_program)
                box.setToolTip(f"A program does not read {axis}: {why}." if base.is_program else self._vary_tips[axis])

    def _update_estimate(self) -> None:
        base = self._base()
        self._offer_objectives(base)
        self._offer_axes(base)
        try:
            plan = self.plan(base)
        except PlanError as exc:
            self.estimate.setText(f"Plan: 0 settings. {exc}" if str(exc) == EMPTY_PLAN else f"Plan: {exc}")
            return
        size = plan.size()
        text = (f"Plan: {size.settings} settings (the baseline included) × ({size.warmup} warm-up + {size.repeat}) "
                f"= {size.trials} trials")
        if "instances" in plan.axes:
            text += f", {' or '.join(plan.axes['instances'])} probes at once"
        elif plan.instances > 1:
            text += f", {plan.instances} probes at once in each"
        if self.run_on.on_cluster:
            try:
                types = len(gpu_types(self.run_on.gpu_types.text())) or 1
            except PlanError:
                types = 1
            self.estimate.setText(f"{text}" + (f" on each of {types} GPU types ({types * size.trials} in all)"
                                               if types > 1 else "")
                                  + "; on the Slurm cluster, as its nodes come free.")
            return
        self.estimate.setText(f"{text}; {self._estimate(size, base.subject)}"
                              + ("; fewer with racing." if plan.racing else "."))

    def _estimate(self, size: PlanSize, model: str) -> str:
        if model not in self._ready_times:
            if not self.isVisible():  # no history read for a hidden tab (start-up included): showEvent reads it
                return "the estimate comes when this tab is shown"
            try:
                self._ready_times[model] = recent_ready_times(self.history, model)
            except HistoryError as exc:
                self._ready_times[model] = f"no estimate: the run history cannot be read ({exc})"
        times = self._ready_times[model]
        if isinstance(times, str):
            return times
        seconds = estimate_seconds(size, times)
        if seconds is None:
            return f"no estimate yet: no earlier successful run of {model} (the first trials will tell)"
        return (f"about {format_duration(seconds)}, from the median time to ready of the last {len(times)} "
                f"successful run{'s' if len(times) > 1 else ''} of {model} "
                f"({format_duration(seconds / size.trials)})")

    def forget_history(self, model: str | None = None) -> None:
        """New runs are in the history (of `model`, or of any): the estimate reads them afresh."""
        if model is None:
            self._ready_times.clear()
        else:
            self._ready_times.pop(model, None)
        self._update_estimate()

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802 (Qt's name)
        """Runs may have finished on other tabs meanwhile."""
        super().showEvent(event)
        self.forget_history()


def _edit_signals(panel: QWidget) -> list[SignalInstance]:
    """The signal of every input in `panel` that says its value changed."""
    signals: list[SignalInstance] = []
    for kind, name in ((QLineEdit, "textChanged"), (QPlainTextEdit, "textChanged"), (QSpinBox, "valueChanged"),
                       (QDoubleSpinBox, "valueChanged"), (QComboBox, "currentTextChanged"),
                       (QAbstractButton, "toggled"), (QTableWidget, "itemChanged")):
        signals += [getattr(widget, name) for widget in panel.findChildren(kind)]
    return signals
