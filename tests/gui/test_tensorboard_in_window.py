"""Run ▸ Keep profile for TensorBoard…: the last anatomy run's XPlane copied into a log
folder in TensorBoard's layout, while the Run tab shows that run."""

from __future__ import annotations

import pytest

from tflaunch.core.run.anatomy import checked_anatomy
from tflaunch.core.settings.config import LaunchConfig

from ..builders import finished_record
from .test_file_dialogs import Dialogs

ANATOMY = checked_anatomy({"window": 0.2, "phase": "first", "parts": [{"part": "tracing", "seconds": 0.1, "names": []}],
                           "not_attributed": 0.1, "unattributed_names": []})


def test_the_profile_shown_is_kept_in_the_folder_chosen(qtbot, window, monkeypatch, tmp_path):
    dialogs = Dialogs(monkeypatch)
    keep = window.window_actions.keep_profile
    keep.trigger()
    assert window.statusBar().currentMessage().startswith("No profile to keep: make an anatomy run")
    record = finished_record()
    record.anatomy, record.history_id = ANATOMY, 7
    written = tmp_path / "written" / "plugins" / "profile" / "2026_11_28_00_00_00"
    written.mkdir(parents=True)
    (written / "vm.xplane.pb").write_bytes(b"xspace")
    window.runner.profile = (record, tmp_path / "written")
    window.run_view.show_record(record)
    dialogs.answers = [str(tmp_path / "tb")]
    keep.trigger()
    (kept,) = (tmp_path / "tb").glob("plugins/profile/*_tflaunch_run_7/vm.xplane.pb")
    assert kept.read_bytes() == b"xspace"
    assert window.statusBar().currentMessage() == (f"Profile kept at {kept}: tensorboard --logdir {tmp_path / 'tb'}, "
                                                   "then its Profile tab.")
    window.run_view.show_record(finished_record(model="sample:cnn"))  # another run shown: not its profile
    keep.trigger()
    assert window.statusBar().currentMessage().startswith("No profile to keep")


@pytest.mark.slow
def test_an_anatomy_run_in_the_app_keeps_its_profile_for_tensorboard(qtbot, window, monkeypatch, tmp_path):
    dialogs = Dialogs(monkeypatch)
    window.use_config(LaunchConfig(model="sample:mlp", steady=1))
    with qtbot.waitSignal(window.run_finished, timeout=180_000) as finished:
        window.start_anatomy()
    anatomy = finished.args[0].anatomy
    assert anatomy is not None and anatomy.error is None, anatomy
    dialogs.answers = [str(tmp_path / "tb")]
    window.window_actions.keep_profile.trigger()
    (kept,) = (tmp_path / "tb").glob("plugins/profile/*/*.xplane.pb")
    assert kept.stat().st_size > 1000 and window.statusBar().currentMessage().startswith("Profile kept at")
