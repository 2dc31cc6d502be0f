"""The Advisor tab: the doctor from the app, on the Run tab's settings, with the command
line's table; a verified combination can be saved as a profile."""

from __future__ import annotations

import re

import pytest

from tflaunch.core.paths import profiles_dir
from tflaunch.core.settings.config import LaunchConfig
from tflaunch.core.store.profiles import ProfileStore

from ..builders import fake_python
from ..fake_child import CHILD_ENV


@pytest.mark.slow  # the Advisor's whole measurement (real runs); its parts have fast tests
def test_the_advisor_measures_and_saves_a_verified_profile(qtbot, make_window, tmp_path, screenshot, monkeypatch):
    window = make_window(size=(1024, 700))
    window.use_config(LaunchConfig(model="sample:mlp", python=fake_python(tmp_path),
                                   extra_env={CHILD_ENV: "remedies"}))
    window.tabs.setCurrentWidget(window.advisor_view)
    view = window.advisor_view
    for name, box in view.remedies.items():
        box.setChecked(name == "onednn")
    view.repeat.setValue(3)
    progress: list[str] = []
    view.progress_shown.connect(progress.append)
    view.start()
    assert view.running and not view.start_button.isEnabled()
    qtbot.waitUntil(lambda: not view.running, timeout=120_000)
    table = [[view.table.item(r, c).text() for c in range(view.table.columnCount())]
             for r in range(view.table.rowCount())]
    verdicts = {row[2]: row[5] for row in table}
    assert table, view.status.text()
    assert verdicts["onednn=off"].startswith("measured: saves")
    assert any(row[1] == "gpu" and row[5].startswith("does not apply") for row in table)
    # Where it was and how long was left, from the runs' own durations (3 a round, 4 rounds).
    counted = [t for t in progress if re.match(r"^Arm \d of 3 \(", t)]
    assert counted and all(re.search(r"round \d of 4: .*; about \d+ s left", t) for t in counted), progress
    assert any(t.startswith("Final A/B: arm ") for t in progress)
    # The strip plot names its strips as the table's "#" column numbers its rows.
    ticks = [text for _, text in view.strips.getPlotItem().getAxis("bottom")._tickLevels[0]]
    assert ticks == [f"#{row[0]}" for row in table if row[0]] == ["#1", "#2", "#3"]
    assert "verified" in view.summary.text() and view.save_button.isEnabled()
    screenshot(window, "advisor-1024x700")
    review = window.current_review()
    assert review is not None and review.title == "Doctor: sample:mlp" and review.file_stem.startswith(
        "tflaunch-doctor-sample-mlp-")
    assert [label for label, _, _ in review.distributions] == ["baseline", "onednn=off", "onednn=on"]
    from tflaunch.gui.review.review_image import write

    image = write(review, tmp_path / "doctor.png")
    assert image.stat().st_size > 10_000
    csv = write(review, tmp_path / "doctor.csv").read_text()
    assert csv.splitlines()[0] == "#,Remedy,Arm,Ready (s),Runs,Verdict" and "onednn=off" in csv
    monkeypatch.setattr(window.saver, "ask_name", lambda _title: "advised")
    view.save_button.click()
    assert ProfileStore(profiles_dir()).load("advised").config.onednn is False


def test_the_advisor_refuses_without_a_remedy_and_with_bad_settings(make_window):
    window = make_window()
    window.tabs.setCurrentWidget(window.advisor_view)
    view = window.advisor_view
    for box in view.remedies.values():
        box.setChecked(False)
    view.start()
    assert not view.running and "tick at least one remedy" in view.status.text()
    window.use_config(LaunchConfig(model="sample:nope"))
    view.remedies["onednn"].setChecked(True)
    view.start()
    assert not view.running and "no built-in sample 'nope'" in view.status.text()


def test_a_programs_own_files_and_compile_are_not_offered_as_remedies(qtbot, make_window):
    """Seen under Xvfb: with a program subject the Advisor ticked format and jit_compile,
    which the examination then skipped."""
    from tflaunch.core.doctor.remedies import not_for_programs

    window = make_window()
    window.use_config(LaunchConfig(program=("python", "train.py")))
    window.tabs.setCurrentWidget(window.advisor_view)
    view = window.advisor_view
    qtbot.waitUntil(view.isVisible)
    greyed = {name for name, box in view.remedies.items() if not box.isEnabled()}
    assert greyed == {name for name in view.remedies if not_for_programs(name)} and {"format", "jit_compile"} <= greyed
    assert all(not view.remedies[name].isChecked() and "Not for a program" in view.remedies[name].toolTip()
               for name in greyed)
    window.use_config(LaunchConfig(model="sample:mlp"))
    view.offer_remedies(LaunchConfig(model="sample:mlp"))
    assert all(box.isEnabled() and box.isChecked() for box in view.remedies.values())


def test_a_verified_warm_start_can_be_saved_and_its_baseline_counts_its_runs(qtbot, make_window, monkeypatch,
                                                                              screenshot):
    """Seen under Xvfb: warm start saved 17.7 s (95 % CI 13.0-22.4 s), "Save as profile…" stayed
    greyed, and the baseline row said "0 runs"."""
    from tflaunch.core.doctor.warm_arm import WarmArm
    from tflaunch.core.store.profiles import Profile
    from tflaunch.core.subject import Subject

    from ..test_doctor_words import warm_only

    window = make_window()
    store = ProfileStore(profiles_dir())
    store.save(Profile("tflaunch-warm-train", LaunchConfig(intra=2), {"runs": 5}, subject=Subject.PROGRAM))
    d = warm_only()
    d.warm_arm = WarmArm(saving=d.warm, command=["tflaunch", "run", "--warm"], profile="tflaunch-warm-train")
    view = window.advisor_view
    view.show_diagnosis(d)
    baseline = [view.table.item(0, c).text() for c in range(view.table.columnCount())]
    assert baseline[1] == "baseline" and baseline[4] == "5", baseline
    assert view.save_button.isEnabled()
    window.tabs.setCurrentWidget(view)
    screenshot(window, "advisor-warm-winner")
    monkeypatch.setattr(window.saver, "ask_name", lambda _title: "warm-advised")
    view.save_button.click()
    saved = ProfileStore(profiles_dir()).load("warm-advised")
    assert saved.subject_type is Subject.PROGRAM and saved.config.intra == 2


def test_the_status_bar_says_the_advisor_is_examining_not_the_last_run(qtbot, make_window):
    """Seen under Xvfb: "Ready in 6.02 s (at exit)" stayed in the status bar for the minutes
    the Advisor measured."""
    window = make_window()
    window.say("Ready in 6.02 s (at exit)")
    advisor = window.advisor_view
    advisor.running_changed.emit(True)
    assert window.statusBar().currentMessage().startswith("Advisor examining")
    advisor.running_changed.emit(False)
    assert window.statusBar().currentMessage().startswith("Advisor finished")
