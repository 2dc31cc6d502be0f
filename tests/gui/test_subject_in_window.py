"""The subject as a value in the window: the form greys what a program does not read (it
offered "Compile the model with XLA" for a program), and a program's profile applied
leaves the subject and its command line (it switched the subject to sample:mlp)."""

from __future__ import annotations

from tflaunch.core.settings.config import LaunchConfig
from tflaunch.core.store.profiles import Profile
from tflaunch.core.subject import Subject


def test_a_program_is_not_offered_jit_compile_and_keeps_its_subject_when_a_profile_applies(qtbot, window,
                                                                                              screenshot):
    panel = window.panel
    window.use_config(LaunchConfig(program=("python", "train_fit.py", "--steps", "4000"), until="exit"))
    assert panel.is_program and not panel.jit_compile.isEnabled()
    assert "Not read by a program: a program compiles its own model" in panel.jit_compile.toolTip()
    assert not panel.batch.isVisibleTo(panel), "the model's own rows are hidden"
    screenshot(window, "program-settings")
    advisor = Profile("advisor-warm", LaunchConfig(intra=2, xla_auto=True), {"runs": 5}, subject=Subject.PROGRAM)
    window.profiles.save(advisor, overwrite=True)
    window.profiles_view.refresh()
    window.profiles_view.select("advisor-warm")
    window.profiles_view.apply_selected()
    applied = panel.config()
    assert applied.program == ("python", "train_fit.py", "--steps", "4000") and applied.until == "exit"
    assert applied.intra == 2 and applied.xla_auto and panel.subject.currentIndex() == 1
    panel.subject.setCurrentIndex(0)
    assert panel.jit_compile.isEnabled() and "Not read by" not in panel.jit_compile.toolTip()
