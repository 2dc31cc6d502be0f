"""A cluster sweep from the app's Sweep tab, through the real test cluster: submitted from the
plan form, followed until settled, merged into the History tab, one verdict per node type;
what Slurm or the folder refuses said in full with the form kept. The fake probe keeps each
trial to a fraction of a second."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QPoint
from PySide6.QtGui import QPalette

from tflaunch.core.cluster.submit import cancel
from tflaunch.core.paths import history_path, profiles_dir
from tflaunch.core.settings.config import LaunchConfig
from tflaunch.core.store.history import History
from tflaunch.core.store.profiles import ProfileStore
from tflaunch.gui.sweep.run_on_box import RunOnBox
from tflaunch.gui.sweep.trial_table import COLOURS
from tflaunch.gui.widgets.palette import highlight_background, readable

from ..builders import fake_python
from ..fake_child import CHILD_ENV
from ..gui.conftest import make_window, screenshot, settings_file, window  # noqa: F401
from ..gui.test_theme_and_sizes import dark_palette, restore_palette  # noqa: F401
from .cluster_tools import settle, submit, tflaunch, unreachable_squeue

SETTLE_MS = 120_000


def plan(window, tmp_path: Path, shared: Path, gpu_types: str = "a100,h100",  # noqa: F811
         partition: str = "") -> None:
    """intra=2 against the baseline, three trials each, on the cluster."""
    window.use_config(LaunchConfig(model="sample:mlp", python=fake_python(tmp_path), timeout=60,
                                   extra_env={CHILD_ENV: "ok"}))
    view = window.sweep_view
    box, values = view._axes["intra"]
    box.setChecked(True)
    values.setText("2")
    view.repeat.setValue(3)
    view.warmup.setValue(0)
    run_on = view.form.run_on
    run_on.slurm.setChecked(True)
    run_on.gpu_types.setText(gpu_types)
    run_on.partition.setText(partition)
    run_on.shared_dir.setText(str(shared))


@pytest.mark.slow  # real child processes; make test keeps to its 6 minutes, CI runs this tier too
def test_a_sweep_submitted_from_the_tab_is_followed_merged_and_judged_per_node_type(
        qtbot, window, tmp_path, cluster, screenshot, restore_palette):  # noqa: F811
    plan(window, tmp_path, cluster.shared)
    view = window.sweep_view
    assert view.start_button.text() == "Submit to Slurm" and not view.racing.isEnabled()
    assert "on each of 2 GPU types" in view.estimate.text()
    follow = view.cluster
    view.start_button.click()
    assert view.cancel_button.isEnabled() and not view.start_button.isEnabled(), "submitting, off the GUI thread"
    qtbot.waitUntil(lambda: follow.snapshot is not None and follow.snapshot.settled, timeout=SETTLE_MS)
    assert view.pages.currentWidget() is follow and view.status.text().startswith("Submitted 12 trials to Slurm")
    assert all(s.get("check") for s in follow.snapshot.folder.jobs()["submitted"]), "each array waited for a check"
    assert not view.cancel_button.isEnabled() and view.start_button.isEnabled()
    table = follow.trials
    assert table.rowCount() == 12 and {table.state_of(r) for r in range(12)} == {"done"}
    assert table.item(0, 3).foreground().color().name() == readable(COLOURS["done"]).name()
    assert follow.counts.text() == "12 trials: 12 done"
    assert not follow.refreshing, "settled: no refresh runs or is due"
    # Results before merging (node_type_sweeps, not stored), then merged.
    assert [g.title() for g in follow.groups] == ["a100 (no GPU seen)", "h100 (no GPU seen)"]
    assert all("not in History yet" in g.where.text() for g in follow.groups)
    assert follow.merge_button.isEnabled() and not follow.resubmit_button.isEnabled()
    follow.merge_button.click()
    qtbot.waitUntil(lambda: follow.message.text().startswith("Merged"), timeout=30_000)
    assert "12 runs added, 0 replaced (2 History sweeps, one per node type)" in follow.message.text()
    for group in follow.groups:
        assert group.table.rowCount() == 2 and {group.table.item(r, 1).text() for r in range(2)} == \
            {"baseline", "intra=2"}
        assert group.table.item(0, 2).text().endswith(("ms", " s")), "medians with their unit"
        assert group.verdict.text() and "in History as sweep" in group.where.text()
    history = History(history_path())
    assert len(history.list_sweeps()) == 2
    for group in follow.groups:  # three trials of two like settings: no winner, and the button says so
        assert not group.save_button.isEnabled() and group.save_button.toolTip().startswith("No winner")
    review = window.current_review()  # File > Export review image: one verdict per node type
    assert review is not None and review.table is not None
    assert review.headline.splitlines()[0].startswith("a100: ") and review.headline.splitlines()[1].startswith("h100: ")
    assert {row[0] for row in review.table[1]} == {"a100 (no GPU seen)", "h100 (no GPU seen)"}
    window.tabs.setCurrentWidget(window.history_view)
    qtbot.waitUntil(lambda: window.history_view.model.rowCount() == 12, timeout=10_000)
    assert not follow.refreshing

    window.tabs.setCurrentWidget(view)
    window.runs_dock.hide()
    window.log_dock.hide()
    view.sections.setSizes([0, sum(view.sections.sizes())])  # the picture is of the results, and where they ran
    qtbot.wait(50)  # the plan laid out for the width it has, before it is scrolled
    button = view.open_cluster_button  # the plan scrolled to where it chose the cluster, no field cut
    bottom = button.mapTo(view.form, QPoint(0, button.height())).y()
    view._plan_scroll.verticalScrollBar().setValue(bottom + 6 - view._plan_scroll.viewport().height())
    qtbot.wait(50)
    screenshot(window, "cluster-sweep")
    light = QPalette(restore_palette.palette())
    restore_palette.setPalette(dark_palette())
    qtbot.wait(50)
    screenshot(window, "dark-cluster-sweep")
    restore_palette.setPalette(light)
    qtbot.waitUntil(lambda: all(g.table.item(0, 1).background().color() == highlight_background()
                                for g in follow.groups), timeout=5000)  # recoloured for light again
    follow.close_sweep()
    assert view.pages.currentIndex() == 0 and not follow.refreshing


def test_slurm_refusing_the_partition_is_said_in_full_and_the_form_is_kept(qtbot, window, tmp_path,  # noqa: F811
                                                                           cluster):
    plan(window, tmp_path, cluster.shared, gpu_types="", partition="nosuch")
    view = window.sweep_view
    view.start_button.click()
    qtbot.waitUntil(lambda: view.status.text().startswith("Cannot submit"), timeout=60_000)
    text = view.status.text()
    assert "invalid partition" in text.lower() and "check the partition" in text.lower(), text
    assert view.form.run_on.partition.text() == "nosuch" and view.form.run_on.on_cluster
    assert view.start_button.isEnabled() and not view.cancel_button.isEnabled()
    assert view.pages.currentIndex() == 0, "nothing to follow"


def test_a_shared_folder_that_cannot_be_made_or_seen_is_said(qtbot, window, tmp_path, cluster):  # noqa: F811
    """One that cannot be made: before anything is submitted. One the nodes do not see: the
    check job says so in the followed sweep (nothing waits for it), and no trial runs."""
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    plan(window, tmp_path, blocker / "sweeps", gpu_types="")
    view = window.sweep_view
    view.start_button.click()
    qtbot.waitUntil(lambda: view.status.text().startswith("Cannot submit"), timeout=60_000)
    assert f"{blocker / 'sweeps'}: the sweep folder cannot be made there" in view.status.text()
    if not cluster.private_works:
        pytest.skip("a folder the node does not see needs a mount namespace (root and unshare)")
    view.form.run_on.shared_dir.setText(str(cluster.private / "sweeps"))
    view.start_button.click()
    follow = view.cluster
    qtbot.waitUntil(lambda: follow.snapshot is not None and follow.snapshot.settled, timeout=SETTLE_MS)
    details = {s.detail for s in follow.snapshot.states}
    assert all("is not shared with the nodes" in d and "--shared-dir" in d for d in details), details
    follow.close_sweep()


def test_the_named_resources_reach_the_sweep_and_a_waiting_check_is_shown(qtbot, window, tmp_path,  # noqa: F811
                                                                          cluster):
    """Submitting returns at once though the check job waits (--begin, as on a busy
    partition); the trials say what they wait for. A resource sbatch would refuse is said
    before anything is made."""
    plan(window, tmp_path, cluster.shared, gpu_types="")
    view = window.sweep_view
    run_on = view.form.run_on
    run_on.resource_fields["time"].setText("soon")
    view.start_button.click()
    qtbot.waitUntil(lambda: view.status.text().startswith("Cannot submit"), timeout=10_000)
    assert "--time: 'soon' is not a value sbatch takes" in view.status.text()
    run_on.resource_fields["time"].setText("10")
    run_on.resource_fields["mem"].setText("100m")
    run_on.trials_per_task.setValue(2)
    run_on.setup.setPlainText("echo set up")
    run_on.sbatch_args.setText("--begin=now+600")
    view.start_button.click()
    follow = view.cluster
    qtbot.waitUntil(lambda: follow.snapshot is not None and any(
        "waiting for the check job" in s.detail and "BeginTime" in s.detail for s in follow.snapshot.states),
        timeout=30_000)
    options = follow.snapshot.folder.options
    assert (options["time"], options["mem"], options["trials_per_task"], options["setup"]) == (
        "10", "100M", 2, ["echo set up"])
    cancel(follow.snapshot.folder)
    assert cluster.run("squeue", "--noheader").stdout.strip() == "", "its check job and array were cancelled"
    follow.close_sweep()


def test_without_sbatch_the_cluster_cannot_be_chosen_and_says_why(qtbot, monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    box = RunOnBox()
    qtbot.addWidget(box)
    assert not box.slurm.isEnabled() and "`sbatch` is not on PATH" in box.slurm.toolTip()


@pytest.mark.slow  # twelve trials, half of them sleeping a second and a half: about 15 s
def test_a_node_types_winner_is_saved_from_its_group_naming_the_node_type(qtbot, window, tmp_path, cluster,  # noqa: F811
                                                                         monkeypatch):
    plan(window, tmp_path, cluster.shared)
    slow = tmp_path / "slow-fake-python"  # sleeps $DELAY first: DELAY=0 is a clear winner
    slow.write_text(f'#!/bin/sh\nsleep "${{DELAY:-0}}"\nexec {fake_python(tmp_path)} "$@"\n')
    slow.chmod(0o755)
    window.use_config(LaunchConfig(model="sample:mlp", python=str(slow), timeout=60,
                                   extra_env={CHILD_ENV: "ok", "DELAY": "1.5"}))
    view = window.sweep_view
    box, values = view._axes["intra"]
    box.setChecked(False)
    view.env_axis.setText("DELAY=0")
    follow = view.cluster
    view.start_button.click()
    qtbot.waitUntil(lambda: follow.snapshot is not None and follow.snapshot.settled, timeout=SETTLE_MS)
    follow.merge_button.click()
    qtbot.waitUntil(lambda: follow.message.text().startswith("Merged"), timeout=30_000)
    h100 = follow.groups[1]
    assert h100.save_button.isEnabled(), h100.save_button.toolTip()
    monkeypatch.setattr(window.saver, "ask_name", lambda _title: "fast-on-h100")
    h100.save_button.click()
    qtbot.waitUntil(lambda: "Saved profile fast-on-h100" in window.statusBar().currentMessage(), timeout=10_000)
    profile = ProfileStore(profiles_dir()).load("fast-on-h100")
    assert profile.evidence["sweep"]["node_type"] == "h100 (no GPU seen)"
    assert profile.config.extra_env["DELAY"] == "0"


@pytest.mark.slow  # real child processes; make test keeps to its 6 minutes, CI runs this tier too
def test_a_folder_seen_where_slurm_cannot_be_asked_shows_and_merges_its_files(qtbot, window, tmp_path, cluster,  # noqa: F811
                                                                              monkeypatch):
    folder = submit("--model", "sample:mlp", "--python", fake_python(tmp_path), "--env", f"{CHILD_ENV}=ok",
                    "--vary", "intra=2", "--repeat", "1", "--warmup", "0", "--shared-dir", str(cluster.shared),
                    cwd=tmp_path)
    assert settle(folder)["counts"] == {"done": 2}
    # This machine sees the folder but not the cluster: its squeue cannot reach a controller.
    monkeypatch.setenv("PATH", unreachable_squeue(tmp_path))
    merged = tflaunch("sweep", "merge", str(folder))
    assert merged.returncode == 0 and "Shown from the folder's files alone" in merged.stderr, merged.stderr
    assert "2 runs added" in merged.stderr
    view = window.sweep_view
    view.open_cluster(folder)
    follow = view.cluster
    qtbot.waitUntil(lambda: follow.snapshot is not None, timeout=30_000)
    assert "Shown from the folder's files alone" in follow.message.text()
    assert follow.counts.text().startswith("2 trials: 2 done") and follow.refreshing, "Slurm may answer next time"
    assert [g.title() for g in follow.groups] == ["any (no GPU seen)"]
    follow.close_sweep()
