"""Review images: size, content, colours, determinism, SVG text, and the ways to make them."""

from __future__ import annotations

import os
import random
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtGui import QColor, QImage
from PySide6.QtWidgets import QApplication

from tflaunch.core.report.review import comparison_review, run_review, sweep_review
from tflaunch.core.run.environment_facts import EnvironmentFacts
from tflaunch.core.run.record import RunRecord
from tflaunch.core.settings.config import LaunchConfig
from tflaunch.core.sweep.plan import Sweep, SweepPlan
from tflaunch.gui.app import create_app
from tflaunch.gui.review import review_actions
from tflaunch.gui.review.review_image import png_bytes, render_image, render_svg, write

from ..builders import fake_python, finished_record
from ..fake_child import CHILD_ENV
from .conftest import SCREENSHOT_COPY_ENV


def pixels(image: QImage) -> np.ndarray:
    rgb = image.convertToFormat(QImage.Format.Format_RGB888)
    # Copy while `rgb` is alive: a view would point into memory freed on return.
    rows = np.frombuffer(rgb.constBits(), np.uint8).reshape(rgb.height(), rgb.bytesPerLine()).copy()
    return rows[:, : rgb.width() * 3].reshape(rgb.height(), rgb.width(), 3)


def share_of(image: QImage, color: str, tolerance: int = 12) -> float:
    target = QColor(color)
    rgb = np.array([target.red(), target.green(), target.blue()])
    return float((np.abs(pixels(image).astype(int) - rgb).max(axis=2) <= tolerance).mean())


def keep(path: Path, name: str) -> None:
    if os.environ.get(SCREENSHOT_COPY_ENV):
        shutil.copy(path, Path(os.environ[SCREENSHOT_COPY_ENV]) / name)


def synthetic_sweep() -> Sweep:
    plan = SweepPlan(LaunchConfig(), {"intra": ["1", "2", "4"]}, repeat=5, warmup=0, racing=True)
    sweep = Sweep(plan, plan.candidates())
    rng = random.Random(4)
    means = {"baseline": 1.6, "intra=1": 1.7, "intra=2": 1.2, "intra=4": 1.9}
    while (trial := sweep.next_trial()) is not None:
        sweep.report(trial, rng.gauss(means[trial.candidate.key], 0.03))
    return sweep


def test_a_run_image_has_its_size_content_and_phase_colours(qapp):
    create_app()
    image = render_image(run_review(finished_record(), profile="fast"))
    assert (image.width(), image.height()) == (1600, 900)
    assert share_of(image, "#ffffff") < 0.93, "not blank"
    assert share_of(image, "#0b57d0") > 0.002, "the accent band and title"
    assert share_of(image, "#E69F00") > 0.001, "the import bar of the waterfall"
    big = render_image(run_review(finished_record()), scale=2)
    assert (big.width(), big.height()) == (3200, 1800)


def test_comparison_and_sweep_images_show_their_own_charts(qapp):
    create_app()
    comparison = render_image(comparison_review([finished_record(ready_s=2.0), finished_record(intra=2)]))
    assert share_of(comparison, "#4e79a7") > 0.002 and share_of(comparison, "#f28e2b") > 0.002, "one colour a run"
    sweep = render_image(sweep_review(synthetic_sweep(), finished_record(), 1))
    assert share_of(sweep, "#b3261e") > 0.0003, "median bars of the strip plot"
    assert share_of(sweep, "#9e9e9e") > 0.0001, "trials of settings stopped early, in grey"


def test_the_same_run_gives_the_same_image_twice(qapp):
    create_app()
    record = finished_record()
    assert png_bytes(run_review(record)) == png_bytes(run_review(record))


def test_the_svg_keeps_the_model_and_time_to_ready_as_text(qapp):
    create_app()
    svg = render_svg(run_review(finished_record())).decode()
    assert svg.startswith("<?xml") and "<svg" in svg
    assert ">sample:mlp: Ready in 1.02 s<" in svg or ("sample:mlp" in svg and "1.02 s" in svg)
    assert "1.02 s" in svg


def test_markdown_and_csv_exports_carry_the_same_numbers(tmp_path, qapp):
    create_app()
    review = run_review(finished_record())
    write(review, tmp_path / "r.md")
    write(review, tmp_path / "r.csv")
    assert "| Load | 200 ms |" in (tmp_path / "r.md").read_text()
    assert "Load,0.2,,100,200" in (tmp_path / "r.csv").read_text()  # seconds and bytes as plain numbers


@pytest.mark.slow  # real child processes; make test keeps to its 6 minutes, CI runs this tier too
def test_export_and_copy_from_the_window_use_the_current_tab(qtbot, window, tmp_path):
    assert review_actions.current_review(window) is None
    review_actions.copy_review(window)
    assert window.statusBar().currentMessage().startswith("Nothing to copy here")
    window.use_config(LaunchConfig(model="sample:mlp", steady=2))
    with qtbot.waitSignal(window.run_finished, timeout=180_000):
        window.start_run()
    review = review_actions.current_review(window)
    assert review.kind == "run"
    review_actions.save_review(window, review, tmp_path / "run.png", "png", 1)
    assert QImage(str(tmp_path / "run.png")).size().toTuple() == (1600, 900)
    keep(tmp_path / "run.png", "review-run.png")
    review_actions.copy_review(window)
    assert QApplication.clipboard().image().size().toTuple() == (1600, 900)
    window.tabs.setCurrentWidget(window.history_view)
    window.history_view.select_ids([window.run_view.record.history_id])
    assert review_actions.current_review(window).kind == "run"


TFLAUNCH = [sys.executable, "-m", "tflaunch.gui.main"]


@pytest.mark.slow  # real child processes; make test keeps to its 6 minutes, CI runs this tier too
def test_tflaunch_report_makes_images_headless_from_the_history(tmp_path):
    # What is reported comes from the history, whoever measured it: a fake child fills it in
    # a second instead of six TensorFlow starts; the README's pictures still get real runs.
    child = [] if os.environ.get(SCREENSHOT_COPY_ENV) else [
        "--python", fake_python(tmp_path), "--env", f"{CHILD_ENV}=ok"]
    bench = subprocess.run([*TFLAUNCH, "bench", "--model", "sample:mlp", "--steady", "2", "--repeat", "2",
                            "--save-profile", "fast", *child], capture_output=True, text=True, timeout=300)
    assert bench.returncode == 0, bench.stderr
    sweep = subprocess.run([*TFLAUNCH, "sweep", "--model", "sample:mlp", "--steady", "1", "--vary", "intra=1,2",
                            "--repeat", "2", "--warmup", "0", *child], capture_output=True, text=True, timeout=300)
    assert sweep.returncode == 0, sweep.stderr
    env = {**os.environ}
    env.pop("DISPLAY", None)
    env.pop("QT_QPA_PLATFORM", None)  # the command must not need either
    outputs = {"1": "run.png", "1,2": "compare.png", "sweep:1": "sweep.png", "fast": "profile.png"}
    for target, name in outputs.items():
        done = subprocess.run([*TFLAUNCH, "report", target, "-o", str(tmp_path / name)], capture_output=True,
                              text=True, timeout=120, env=env)
        assert done.returncode == 0, (target, done.stderr)
        assert QImage(str(tmp_path / name)).size().toTuple() == (1600, 900), target
    keep(tmp_path / "compare.png", "review-compare.png")
    keep(tmp_path / "sweep.png", "review-sweep.png")
    svg = subprocess.run([*TFLAUNCH, "report", "1", "-o", str(tmp_path / "run.svg")], capture_output=True, text=True,
                         timeout=120, env=env)
    assert svg.returncode == 0 and "sample:mlp" in (tmp_path / "run.svg").read_text()
    big = subprocess.run([*TFLAUNCH, "report", "1", "-o", str(tmp_path / "big.png"), "--scale", "2"],
                         capture_output=True, text=True, timeout=120, env=env)
    assert big.returncode == 0 and QImage(str(tmp_path / "big.png")).width() == 3200
    missing = subprocess.run([*TFLAUNCH, "report", "999", "-o", str(tmp_path / "x.png")], capture_output=True,
                             text=True, timeout=60, env=env)
    assert missing.returncode == 1 and "nothing to report for '999'" in missing.stderr


def other_run() -> RunRecord:
    """A run from elsewhere and long ago, to show in the Run tab while other runs are reviewed."""
    record = finished_record(model="sample:cnn", at=1_500_000_000.0)
    record.config = record.config.replace(python="/opt/elsewhere/bin/python")
    record.environment = EnvironmentFacts({"tensorflow": "2.15.0", "cpu": "Old CPU", "gpus": [{"model": "Tesla K80"}]})
    return record


def test_a_comparison_review_is_of_its_runs_whatever_the_run_tab_shows(qtbot, window):
    window.run_view.show_record(other_run())
    runs = [finished_record(at=1_800_000_000.0), finished_record(intra=2, at=1_800_000_600.0)]
    window.compare_view.show_runs(runs)
    window.tabs.setCurrentWidget(window.compare_view)
    review = review_actions.current_review(window)
    facts = dict(review.facts)
    assert facts["Environment"] == "TensorFlow 2.21.0, no GPU" and facts["Interpreter"] == runs[0].config.python
    assert facts["Model"] == "sample:mlp" and "2015" not in review.subtitle and "2017" not in review.subtitle
    assert review.subtitle.startswith(time.strftime("%Y-%m-%d", time.localtime(1_800_000_000.0)))


def test_a_sweep_review_is_of_its_runs_whatever_the_run_tab_shows(qtbot, window, tmp_path):
    fake = fake_python(tmp_path)
    window.use_config(LaunchConfig(model="sample:mlp", steady=1, python=fake, extra_env={CHILD_ENV: "ok"}))
    box, values = window.sweep_view._axes["intra"]
    box.setChecked(True)
    values.setText("2")
    window.sweep_view.repeat.setValue(1)
    window.sweep_view.warmup.setValue(0)
    with qtbot.waitSignal(window.sweeper.finished, timeout=60_000):
        window.sweep_view.start_button.click()
    window.run_view.show_record(other_run())  # what the Run tab shows has nothing to do with the sweep
    review = review_actions.current_review(window)
    facts = dict(review.facts)
    assert review.kind == "sweep" and facts["Interpreter"] == fake
    assert facts["Environment"].startswith("TensorFlow fake, Python ")
    assert time.strftime("%Y-%m-%d") in review.subtitle and "2017" not in review.subtitle
    assert review.file_stem.startswith(f"tflaunch-sweep-sample-mlp-{time.strftime('%Y-%m-%d')}")
