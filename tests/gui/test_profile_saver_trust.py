"""A winner saved from a cluster sweep's folder in the app is an import, as `sweep merge
--save-winner` makes it: settings that came from files on a shared disk run no code before
their user has seen it and said yes (the app's Save winner used to save them as accepted)."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QWidget

from tflaunch.core.settings.config import LaunchConfig
from tflaunch.core.store.profiles import Profile, ProfileStore, UntrustedProfileError
from tflaunch.core.store.trust import TrustFile
from tflaunch.gui.profiles.profile_saver import ProfileSaver


def test_a_winner_from_a_shared_folder_is_saved_as_an_import_that_waits_for_a_yes(qtbot, tmp_path) -> None:
    parent = QWidget()
    qtbot.addWidget(parent)
    store = ProfileStore(tmp_path / "profiles", TrustFile(tmp_path / "trusted.toml"))
    saver = ProfileSaver(store, parent)
    said: list[str] = []
    saver.message.connect(said.append)
    planted = LaunchConfig(model="sample:mlp", extra_env={"LD_PRELOAD": "/shared/folder/evil.so"})
    assert saver.save(lambda: Profile(name="h100-winner", config=planted), trusted=False)
    with pytest.raises(UntrustedProfileError):
        store.load_for_launch("h100-winner")
    assert "trust it in the Profiles tab" in said[-1], said
    own = LaunchConfig(model="sample:mlp", extra_env={"LD_PRELOAD": "/home/me/mine.so"})
    assert saver.save(lambda: Profile(name="mine", config=own))
    assert store.load_for_launch("mine").config.extra_env["LD_PRELOAD"] == "/home/me/mine.so", "the user's own save"
