"""A profile's evidence in the Profiles tab and on saving: counts that agree with their nouns,
and a profile measured fewer than three times called weak evidence, with what to do."""

from __future__ import annotations

from PySide6.QtWidgets import QWidget

from tflaunch.core.settings.config import LaunchConfig
from tflaunch.core.store.profiles import Profile, ProfileStore, evidence_from_runs
from tflaunch.gui.profiles.profile_saver import ProfileSaver
from tflaunch.gui.profiles.profiles_view import ProfilesView

from ..builders import finished_record


def test_a_profile_from_one_run_says_1_run_and_that_its_evidence_is_weak(qtbot, tmp_path):
    store = ProfileStore(tmp_path / "profiles")
    store.save(Profile("once", LaunchConfig(intra=2), evidence_from_runs([finished_record(intra=2)])))
    store.save(Profile("thrice", LaunchConfig(intra=2),
                       evidence_from_runs([finished_record(intra=2, ready_s=s) for s in (1.0, 1.1, 1.2)])))
    view = ProfilesView(store)
    qtbot.addWidget(view)
    view.select("once")
    text = view.detail.toPlainText()
    assert "1 runs" not in text and "1 run) on sample:mlp" in text
    assert "Weak evidence: 1 run: a single measurement, not a comparison; measure with --repeat 3 or more" in text
    assert "color:" in view.detail.toHtml().split("Weak evidence")[0].rsplit("<p", 1)[-1]  # said as a warning
    view.select("thrice")
    assert "3 runs) on sample:mlp" in view.detail.toPlainText() and "Weak evidence" not in view.detail.toPlainText()


def test_saving_a_profile_from_one_run_says_it_is_weak_evidence(qtbot, tmp_path):
    parent = QWidget()
    qtbot.addWidget(parent)
    saver = ProfileSaver(ProfileStore(tmp_path / "profiles"), parent)
    with qtbot.waitSignal(saver.message) as said:
        assert saver.save_runs("best", [finished_record(intra=1)], [finished_record()])
    assert said.args[0].startswith("Saved profile best to ")
    assert "weak evidence: 1 run: a single measurement" in said.args[0]
