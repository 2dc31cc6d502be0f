"""Pictures of every tab, light, dark and at 1024×700, from fake-child runs (seconds).

`make screenshots` (TFLAUNCH_SCREENSHOTS set) copies them for the README; every run checks
that none is blank and that each is drawn in its palette's brightness.
"""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QImage, QPalette

from tflaunch.core.settings.config import LaunchConfig

from ..faults.children import fake_python
from .test_theme_and_sizes import dark_palette, fit, restore_palette  # noqa: F401 (a fixture)

RUN_MS = 30_000
# A run of a third of a second whose memory grows phase by phase, as a model's load does.
STEADY_RUN = """
import time
hello()
held = []
for name, seconds in (("import", 0.12), ("devices", 0.03), ("load", 0.08), ("trace", 0.04), ("first", 0.01),
                      ("steady", 0.03)):
    start(name)
    held.append(bytearray(int(seconds * 600) << 20))
    time.sleep(seconds)
    end(name, seconds)
    if name == "load":
        emit("inputs", "load", inputs=INPUTS, signature=None, signatures=[])
emit("result", "steady", environment={"tensorflow": "2.21.0", "python": "3.11.2", "cores": 2},
     model={"name": "mlp", "format": "sample", "params": 7850})
"""
STUCK_IN_LOAD = """
import time
hello()
held = []
for name, seconds in (("import", 0.2), ("devices", 0.04)):
    start(name)
    held.append(bytearray(int(seconds * 400) << 20))
    time.sleep(seconds)
    end(name, seconds)
start("load")
held.append(bytearray(60 << 20))
time.sleep(60)
"""
VARIANTS = {"light": ((1360, 860), False), "dark": ((1360, 860), True), "small": ((1024, 700), False)}


def run(qtbot, window, config: LaunchConfig):
    window.use_config(config)
    with qtbot.waitSignal(window.run_finished, timeout=RUN_MS) as finished:
        window.start_run()
    return finished.args[0]


def brightness_and_colours(path) -> tuple[float, int]:
    """Mean lightness of the picture (0 to 1), and how many colours it has."""
    image = QImage(str(path)).scaled(96, 60)
    pixels = [image.pixel(x, y) for x in range(96) for y in range(60)]
    return sum(QColor(p).lightnessF() for p in pixels) / len(pixels), len(set(pixels))


@pytest.mark.slow  # real child processes; make test keeps to its 6 minutes, CI runs this tier too
def test_every_tab_light_dark_and_small(qtbot, make_window, screenshot, tmp_path, restore_palette):  # noqa: F811
    app = restore_palette
    light = QPalette(app.palette())
    window = make_window()
    fake = fake_python(tmp_path / "steady", STEADY_RUN)
    baseline = run(qtbot, window, LaunchConfig(model="sample:mlp", python=fake, steady=3))
    tuned = run(qtbot, window, LaunchConfig(model="sample:mlp", python=fake, steady=3, intra=2, onednn=False))
    assert window.save_profile("two-threads", [tuned])
    sweep = window.sweep_view
    box, values = sweep._axes["intra"]
    box.setChecked(True)
    values.setText("1")  # against the last settings, intra=2
    sweep.repeat.setValue(1)
    sweep.warmup.setValue(0)
    sweep.racing.setChecked(False)
    with qtbot.waitSignal(window.sweeper.finished, timeout=RUN_MS):
        sweep.start_button.click()
    shots = {}

    def variant(name: str) -> None:
        (width, height), dark = VARIANTS[name]
        app.setPalette(dark_palette() if dark else light)
        fit(qtbot, window, width, height)
        qtbot.waitUntil(lambda: window.frameGeometry().width() <= width)

    def shoot(name: str, tab) -> None:
        window.tabs.setCurrentWidget(tab)
        qtbot.wait(30)  # the recolouring and layout queued by the switch
        shots[name] = screenshot(window, name)

    window.use_config(LaunchConfig(model="sample:mlp", python=fake_python(tmp_path / "stuck", STUCK_IN_LOAD)))
    with qtbot.waitSignal(window.run_started, timeout=RUN_MS) as started:
        window.start_run()
    live = started.args[0]
    qtbot.waitUntil(lambda: live.current_phase == "load" and len(live.samples) >= 3, timeout=RUN_MS)
    for name in VARIANTS:
        variant(name)
        shoot(f"{name}-run-live", window.run_view)
    with qtbot.waitSignal(window.run_finished, timeout=RUN_MS):
        window.cancel_run()

    for name in VARIANTS:
        variant(name)
        window.run_view.show_record(tuned)
        shoot(f"{name}-run", window.run_view)
        window.history_view.select_ids([baseline.history_id, tuned.history_id])
        shoot(f"{name}-history", window.history_view)
        qtbot.mouseClick(window.history_view.compare_button, Qt.MouseButton.LeftButton)
        shoot(f"{name}-compare", window.compare_view)
        window.profiles_view.select("two-threads")
        shoot(f"{name}-profiles", window.profiles_view)
        shoot(f"{name}-sweep", window.sweep_view)

    assert len(shots) == 6 * len(VARIANTS)
    for name, path in shots.items():
        brightness, colours = brightness_and_colours(path)
        assert colours > 40, f"{name} looks blank"
        assert brightness < 0.35 if name.startswith("dark") else brightness > 0.6, f"{name}: {brightness:.2f}"
