"""Settings, validation, persistence, GPUs, drag and drop, and a flooding child."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import fields

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from PySide6.QtCore import QMimeData, QPointF, QSettings, Qt, QUrl
from PySide6.QtGui import QDropEvent
from PySide6.QtWidgets import QApplication

from tflaunch.core.paths import history_path, profiles_dir
from tflaunch.core.report.subjects import own_config
from tflaunch.core.run.gpus.nvml import Gpu, GpuInventory
from tflaunch.core.run.record import RunStatus
from tflaunch.core.run.session import ProbeSession
from tflaunch.core.settings.config import MANAGED_VARIABLES, LaunchConfig
from tflaunch.core.store.history import History
from tflaunch.core.store.profiles import Profile, ProfileStore
from tflaunch.gui.adapters.probe_process import ProbeProcess
from tflaunch.gui.app import create_app
from tflaunch.gui.run.log_pane import MAX_LINES
from tflaunch.gui.shell.main_window import MainWindow

from ..builders import finished_record
from .conftest import NO_GPU


def test_invalid_settings_are_refused_with_the_reason_next_to_the_control(qtbot, window, tmp_path, screenshot):
    window.panel.model.setCurrentText(str(tmp_path / "missing.keras"))
    window.panel.python.setText(str(tmp_path / "no-python"))
    with qtbot.assertNotEmitted(window.run_started):
        window.start_run()
    errors = window.panel._errors
    assert errors["model"].isVisibleTo(window) and "missing.keras does not exist" in errors["model"].text()
    assert errors["python"].isVisibleTo(window) and "no-python does not exist" in errors["python"].text()
    assert window.statusBar().currentMessage().startswith("Cannot run:")
    screenshot(window, "invalid")
    window.panel.model.setCurrentText("sample:mlp")
    window.panel.python.setText(sys.executable)
    window.panel.show_problems(window.panel.config().validate())
    assert not errors["model"].isVisibleTo(window)


ENV_NAMES = st.from_regex(r"[A-Z_][A-Z0-9_]{0,11}", fullmatch=True).filter(lambda n: n not in MANAGED_VARIABLES)
# Paths as typed: the form trims surrounding whitespace (NBSP included) from model and python.
TEXT = st.text(st.characters(min_codepoint=33, max_codepoint=0x2FFF, exclude_characters="\x7f"), min_size=1,
               max_size=30).filter(lambda t: t == t.strip())
# A value for every field of LaunchConfig; the test below fails when a field has none.
FIELD_VALUES = {
    "model": TEXT, "python": TEXT, "intra": st.integers(0, 1024), "inter": st.integers(0, 1024),
    "xla_auto": st.booleans(), "jit_compile": st.booleans(), "onednn": st.sampled_from([None, True, False]),
    "log_level": st.sampled_from([None, 0, 1, 2, 3]), "visible_gpus": st.none(),
    "memory_growth": st.booleans(), "memory_limit_mb": st.none() | st.integers(1, 1 << 20),
    "batch": st.integers(1, 65536), "steady": st.integers(0, 100000),
    "extra_env": st.dictionaries(ENV_NAMES, st.text(st.characters(min_codepoint=32, max_codepoint=0x2FFF,
                                                                  exclude_characters="\x7f"), max_size=20),
                                 max_size=3),
    "timeout": st.integers(1, 24 * 3600).map(float),
    "inputs": st.dictionaries(st.from_regex(r"[A-Za-z_][A-Za-z0-9_/.:-]{0,12}", fullmatch=True),
                              st.lists(st.integers(1, 512), max_size=3).map(lambda d: "x".join(map(str, d)))
                              .filter(bool), max_size=3),
    "signature": st.sampled_from(["", "serving_default", "encode"]),
    "imports": st.lists(st.from_regex(r"[a-z_][a-z0-9_.]{0,10}|/tmp/[a-z]{1,8}\.py", fullmatch=True),
                        max_size=3).map(tuple),
    "unsafe_deserialization": st.booleans(),
    "allocator": st.sampled_from([None, "bfc", "cuda_malloc_async"]),
    "cudnn_autotune": st.sampled_from([None, True, False]),
    "module_loading": st.sampled_from([None, "lazy", "eager"]),
    "grappler": st.sampled_from([None, "light", "off"]),
    "cuda_cache": st.sampled_from([None, "cold", "warm"]),
    "xla_cache": st.booleans(), "nvtx": st.booleans(), "page_cache": st.sampled_from(["warm", "cold", "preloaded"]),
    "call": st.sampled_from(["function", "eager", "predict"]),
    "program": st.lists(st.from_regex(r"[A-Za-z0-9_./=-][A-Za-z0-9_./= '-]{0,12}", fullmatch=True),
                        max_size=4).map(tuple),
    "workdir": st.sampled_from(["", "/tmp"]),
    "until": st.sampled_from(["first_step", "first_inference", "exit", "mark:restore"]),
}


def test_the_form_has_one_editor_for_every_setting(window):
    names = {f.name for f in fields(LaunchConfig)}
    assert set(window.panel.editors) == names == set(FIELD_VALUES)


@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.fixed_dictionaries(FIELD_VALUES))
@example({"model": "sample:wide", "python": "/usr/bin/python3", "intra": 2, "inter": 1, "xla_auto": True,
          "jit_compile": True, "onednn": False, "log_level": 3, "visible_gpus": None, "memory_growth": True,
          "memory_limit_mb": 512, "batch": 4, "steady": 7, "extra_env": {"A": "1", "B": "x=y"}, "timeout": 90.0})
@example({**dict.fromkeys(("model", "python"), "0"), "intra": 0, "inter": 0, "xla_auto": False, "jit_compile": False,
          "onednn": None, "log_level": None, "visible_gpus": None, "memory_growth": False, "memory_limit_mb": None,
          "batch": 1, "steady": 0, "extra_env": {"A": "\xa0"}, "timeout": 1.0})  # failed once: NBSP became a space
def test_every_setting_round_trips_through_the_panel(window, values):
    config = LaunchConfig(**values)
    window.panel.set_config(config)
    assert window.panel.form_config() == config
    # A run takes the settings its subject reads; the other subject's stay in the form.
    assert window.panel.config() == own_config(config)


def test_window_and_settings_survive_a_restart(make_window, settings_file):
    first = make_window()
    config = LaunchConfig(model="sample:cnn", intra=3, steady=5, jit_compile=True)
    first.use_config(config)
    first.resize(1200, 800)
    first.close()
    assert settings_file.exists()
    second = make_window(size=None)
    assert second.panel.config() == config
    assert (second.width(), second.height()) == (1200, 800)


def test_unreadable_saved_settings_fall_back_to_defaults(make_window, settings_file):
    settings_file.write_text("[run]\nconfig=\"{not json\"\n")
    window = make_window()
    assert window.panel.config().model == "sample:mlp"


def test_gpus_become_checkboxes_and_visible_devices(qtbot, make_window):
    inventory = GpuInventory((Gpu(0, "NVIDIA H200", 141 * 2**30), Gpu(1, "NVIDIA H200", 141 * 2**30)), "575.51", None)
    window = make_window(inventory)
    boxes = window.panel._gpu_boxes
    assert [b.text() for b in boxes] == ["GPU 0: NVIDIA H200 (141.00 GiB)", "GPU 1: NVIDIA H200 (141.00 GiB)"]
    assert window.panel.memory_growth.isEnabled() and window.panel.gpu_note.text() == "Driver 575.51"
    assert window.panel.config().visible_gpus is None  # all checked: leave CUDA_VISIBLE_DEVICES alone
    boxes[1].setChecked(False)
    assert window.panel.config().visible_gpus == (0,)


def test_without_gpus_the_gpu_settings_are_disabled_with_the_reason(window):
    assert not window.panel.memory_growth.isEnabled()
    assert "No NVIDIA driver found" in window.panel.memory_growth.toolTip()
    assert window.panel.gpu_note.text().startswith("No GPU:")


@pytest.mark.slow  # real child processes; make test keeps to its 6 minutes, CI runs this tier too
def test_dropping_a_model_chooses_it(window, models):
    path = models["mlp"]["keras"]
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(path))])
    event = QDropEvent(QPointF(400, 300), Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton,
                       Qt.KeyboardModifier.NoModifier)
    window.dropEvent(event)
    assert window.panel.config().model == str(path)


def test_dropping_a_script_makes_it_the_program(window, tmp_path):
    script = tmp_path / "train.py"
    script.write_text("print('hi')\n")
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(script))])
    window.dropEvent(QDropEvent(QPointF(400, 300), Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton,
                                Qt.KeyboardModifier.NoModifier))
    config = window.panel.config()
    assert config.program == ("python", "train.py") and config.workdir == str(tmp_path)


def test_every_control_says_what_it_maps_to(window):
    panel = window.panel
    for widget, api in ((panel.intra, "set_intra_op_parallelism_threads"), (panel.inter, "inter_op"),
                        (panel.xla_auto, "TF_XLA_FLAGS"), (panel.jit_compile, "jit_compile=True"),
                        (panel.onednn, "TF_ENABLE_ONEDNN_OPTS"),
                        (panel.log_level, "TF_CPP_MIN_LOG_LEVEL"), (panel.memory_growth, "TF_FORCE_GPU_ALLOW_GROWTH"),
                        (panel.memory_limit_mb, "memory_limit")):
        assert api in widget.toolTip()
    assert panel.intra.text() == "default (TensorFlow decides)"


def test_a_child_flooding_stderr_is_bounded_and_its_events_still_arrive(qtbot, window, quick_config):
    flood = (
        "import json, sys, time\n"
        "line = 'W tensorflow/core: a very chatty warning ' * 3 + '\\n'\n"
        "for i in range(60000):\n    sys.stderr.write(line)\n"
        "print(json.dumps({'v': 1, 'ts': time.time(), 'phase': 'spawn', 'event': 'hello', 'pid': 1,"
        " 'process_age': 0.01, 'python': 'x'}), flush=True)\n"
        "sys.stderr.write('the last line\\n')\n"
    )
    process = ProbeProcess(ProbeSession(quick_config, command=[sys.executable, "-c", flood]), window)
    process.log_lines.connect(window.log.append_lines)
    with qtbot.waitSignal(process.finished, timeout=60000) as finished:
        process.start()
    record = finished.args[0]
    assert record.pid == 1, "the event after 7 MB of stderr was parsed"
    assert record.status is RunStatus.FAILED and "before reporting a result" in record.failure.message
    window.log.flush()
    assert window.log.text.document().blockCount() <= MAX_LINES + 1
    assert window.log.text.toPlainText().endswith("the last line")


def test_log_search_finds_and_wraps(window):
    window.log.begin("search test")
    window.log.append_lines([f"line {i}" for i in range(100)] + ["E0000 cuInit failed"])
    window.log.search.setText("cuInit")
    window.log.find_next()
    assert window.log.text.textCursor().selectedText() == "cuInit"
    window.log.search.setText("nothing like this")
    window.log.find_next()
    assert window.log.match.text() == "no match"


def test_the_app_starts_from_the_command_line_and_paints(tmp_path):
    env = {**os.environ, "TFLAUNCH_EXIT_AFTER_PAINT": "1", "QT_QPA_PLATFORM": "offscreen",
           "XDG_CONFIG_HOME": str(tmp_path)}
    done = subprocess.run([sys.executable, "-m", "tflaunch.gui.main", "gui", "--model", "sample:mlp"],
                          capture_output=True, text=True, timeout=60, env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("first-paint ")


def test_closing_during_an_interpreter_check_is_quiet(qtbot, window):
    window.checker.check(sys.executable)
    with qtbot.assertNotEmitted(window.checker.checked, wait=300):
        window.close()


def test_xla_flags_are_learned_on_demand_then_an_unknown_one_is_refused(qtbot, window):
    """TensorFlow aborts on an unknown TF_XLA_FLAGS entry: the app learns the installed
    TensorFlow's flags the first time settings use them (not at start-up), then refuses
    an unknown one next to the control, before anything starts."""
    window.use_config(LaunchConfig(model="sample:mlp", extra_env={"TF_XLA_FLAGS": "--tf_xla_no_such_flag"}))
    with qtbot.waitSignal(window.checker.xla_flags_learned, timeout=120000):
        with qtbot.assertNotEmitted(window.run_started):
            window.start_run()
        assert "reading which TF_XLA_FLAGS" in window.statusBar().currentMessage()
    with qtbot.assertNotEmitted(window.run_started):
        window.start_run()
    assert "--tf_xla_no_such_flag" in window.statusBar().currentMessage()
    assert "--tf_xla_no_such_flag" in window.panel._errors["extra_env"].text()


def test_the_inputs_table_lists_what_a_run_reported_and_keeps_what_the_user_set(window, screenshot):
    record = finished_record(model="/models/lstm.keras")
    record.model = record.model.told({"declared_inputs": [
        {"name": "tokens", "dtype": "int32", "shape": [None, None]},
        {"name": "image", "dtype": "float32", "shape": [None, None, None, 3]}]})
    window.panel.set_config(LaunchConfig(model="/models/lstm.keras", inputs={"tokens": "64"}))
    window._show_inputs(record)
    table = window.panel.inputs_table.table
    rows = {table.item(r, 0).text(): [table.item(r, c).text() for c in range(1, 4)] for r in range(table.rowCount())}
    assert rows == {"tokens": ["int32", "? (default 128)", "64"],
                    "image": ["float32", "?x?x3 (default 224x224x3)", ""]}
    table.item(1, 3).setText("320x320x3")
    assert window.panel.config().inputs == {"tokens": "64", "image": "320x320x3"}
    screenshot(window.panel, "inputs-table")
    window.panel.model.setCurrentText("sample:mlp")  # another model: its listing goes, the shapes stay
    assert table.rowCount() == 2 and window.panel.inputs_table.model is None
    assert window.panel.config().inputs == {"tokens": "64", "image": "320x320x3"}


def test_hidden_tabs_are_built_when_first_shown_and_then_connected(qtbot, window):
    """The window paints with the Run tab only; each other tab is built when opened or used."""
    tabs = window.tabs
    assert [tabs.tabText(i) for i in range(tabs.count())] == ["Run", "History", "Compare", "Profiles", "Sweep",
                                                                   "Advisor"]
    assert [tabs.is_built(t) for t in ("Run", "History", "Compare", "Profiles", "Sweep")] == [
        True, False, False, False, False]
    view_menu = next(a.menu() for a in window.menuBar().actions() if a.text() == "&View")
    next(a for a in view_menu.actions() if a.text() == "Compare view").trigger()
    assert tabs.is_built("Compare") and tabs.currentIndex() == 2
    assert tabs.currentWidget() is window.compare_view and type(window.compare_view).__name__ == "CompareView"
    assert not tabs.is_built("Profiles")
    profiles = window.profiles_view  # asked for by code: built, the tab not switched to
    assert tabs.is_built("Profiles") and tabs.currentWidget() is window.compare_view
    assert tabs.indexOf(profiles) == 3
    with qtbot.waitSignal(profiles.apply_requested):
        profiles.apply_requested.emit(Profile("three", LaunchConfig(model="sample:mlp", intra=3)))
    assert window.panel.config().intra == 3, "a tab built late is connected like the others"
    window.history_view.problem.emit("The run history is busy.")
    assert window.statusBar().currentMessage() == "The run history is busy."


def test_gpu_and_interpreter_discovery_wait_for_the_first_paint(qtbot, settings_file):
    """NVML and the interpreter check (a child process) start once the window is on screen."""
    create_app()
    painted_at_discovery: list[bool] = []
    painted: list[bool] = []

    def inventory() -> GpuInventory:
        painted_at_discovery.append(bool(painted))
        return NO_GPU

    window = MainWindow(QSettings(str(settings_file), QSettings.Format.IniFormat), History(history_path()),
                        ProfileStore(profiles_dir()), gpu_inventory=inventory)
    qtbot.addWidget(window)
    window.first_painted.connect(lambda: painted.append(True))
    for _ in range(3):
        QApplication.processEvents()  # timers due now run: none may start discovery
    assert painted_at_discovery == []
    window.show()
    qtbot.waitUntil(lambda: painted_at_discovery == [True])
    qtbot.waitUntil(lambda: window.panel.python_status.text() != "Checking…", timeout=30000)
