"""The sweep tab's objective offers the subject's own phases (issue 35): a model's by its
call, a program's as the launch hook observes them, the mark it is measured to, and no
steady state for a program measured to its exit."""

from __future__ import annotations

from PySide6.QtWidgets import QWidget

from tflaunch.core.settings.config import LaunchConfig
from tflaunch.gui.sweep.sweep_plan_form import SweepPlanForm


def offered(qtbot, config: LaunchConfig) -> list[str]:
    form = SweepPlanForm()
    qtbot.addWidget(form)
    form.follow_settings(QWidget(), lambda: config)
    return [form.objective.itemData(i) for i in range(form.objective.count())]


def test_the_objective_offers_the_subjects_own_phases(qtbot):
    model = offered(qtbot, LaunchConfig(model="sample:mlp"))
    assert model == ["ready", "phase:import", "phase:devices", "load", "phase:trace", "first", "steady", "peak"]
    assert "phase:trace" not in offered(qtbot, LaunchConfig(model="sample:mlp", call="eager"))
    program = offered(qtbot, LaunchConfig(program=("python", "train.py"), until="mark:warm"))
    assert {"phase:first_step", "phase:compile", "mark:warm", "steady"} <= set(program)
    to_exit = offered(qtbot, LaunchConfig(program=("python", "train.py"), until="exit"))
    assert "steady" not in to_exit and "ready" in to_exit


def test_a_choice_the_new_subject_also_offers_is_kept(qtbot):
    config = LaunchConfig(model="sample:mlp")
    form = SweepPlanForm()
    qtbot.addWidget(form)
    form.follow_settings(QWidget(), lambda: config)
    form.objective.setCurrentIndex(form.objective.findData("load"))
    config = LaunchConfig(program=("python", "train.py"))
    form._update_estimate()
    assert form.objective.currentData() == "load" and form.objective.currentText() == "load time"


def test_a_programs_own_choices_are_not_offered_to_vary(qtbot):
    """Seen under Xvfb: with a program subject the Vary grid offered batch, format and
    jit_compile, which the plan then refused after Start."""
    from tflaunch.core.sweep.plan import MODEL_ONLY_AXES

    config = LaunchConfig(model="sample:mlp")
    form = SweepPlanForm()
    qtbot.addWidget(form)
    form.follow_settings(QWidget(), lambda: config)
    form.axes["batch"][0].setChecked(True)
    config = LaunchConfig(program=("python", "train.py"))
    form._update_estimate()
    for axis in MODEL_ONLY_AXES:
        box, values = form.axes[axis]
        assert not box.isEnabled() and not box.isChecked() and not values.isEnabled(), axis
        assert box.toolTip().startswith(f"A program does not read {axis}: a program ")
    config = LaunchConfig(model="sample:mlp")
    form._update_estimate()
    assert all(form.axes[axis][0].isEnabled() and form.axes[axis][0].toolTip().startswith("Vary ")
               for axis in MODEL_ONLY_AXES)
