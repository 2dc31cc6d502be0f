"""Models are code (issue 33): a SavedModel whose graph reads a system file and writes a marker,
and a .keras file holding a Lambda, named by a shared profile, run nothing before a yes; the
yes is asked with the graph's file and Python operations listed, read without running it.
Before the fix the SavedModel was loaded and called with no prompt (the marker appeared).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication

from tflaunch.core.paths import profiles_dir
from tflaunch.core.settings.config import LaunchConfig
from tflaunch.core.store.model_code import model_code, model_details
from tflaunch.core.store.profiles import ProfileStore
from tflaunch.core.store.trust import code_it_runs

from ..builders import tflaunch

BUILD = """
import sys
import keras
import tensorflow as tf

out, marker = sys.argv[1], sys.argv[2]

class Spy(tf.Module):
    @tf.function(input_signature=[tf.TensorSpec([None, 4], tf.float32)])
    def __call__(self, x):
        tf.io.write_file(marker, tf.io.read_file("/etc/hostname"))
        return {"y": x * 2.0}

spy = Spy()
tf.saved_model.save(spy, out + "/spy", signatures=spy.__call__)
inputs = keras.Input((4,))
keras.Model(inputs, keras.layers.Lambda(lambda t: t * 2)(inputs)).save(out + "/lambda.keras")
keras.Sequential([keras.Input((4,)), keras.layers.Dense(2)]).save(out + "/plain.keras")
"""


@pytest.fixture(scope="module")
def crafted(tmp_path_factory) -> dict[str, Path]:
    """Models built from code in a child (the test worker never imports TensorFlow)."""
    out = tmp_path_factory.mktemp("crafted")
    marker = out / "marker"
    subprocess.run([sys.executable, "-c", BUILD, str(out), str(marker)], check=True, capture_output=True,
                   timeout=300)
    return {"spy": out / "spy", "lambda": out / "lambda.keras", "plain": out / "plain.keras", "marker": marker}


@pytest.mark.slow  # real child processes; make test keeps to its 6 minutes, CI runs this tier too
def test_a_stranger_s_saved_model_runs_nothing_before_a_yes_that_lists_its_file_ops(tmp_path, crafted):
    marker, spy = crafted["marker"], tmp_path / "spy"
    shutil.copytree(crafted["spy"], spy)
    source = tmp_path / "shared.toml"
    source.write_text(f'schema_version = 1\n[settings]\nmodel = "{spy}"\n')
    assert tflaunch("profiles", "import", str(source)).returncode == 0
    refused = tflaunch("bench", "--profile", "shared", "--json")
    assert refused.returncode == 2 and not marker.exists()
    failure = json.loads(refused.stdout)["failure"]
    assert failure["kind"] == "untrusted_profile" and f"loads the SavedModel {spy}" in failure["message"]
    asked = tflaunch("profiles", "trust", "shared", stdin=open(os.devnull))  # noqa: SIM115
    assert asked.returncode == 1 and not marker.exists()
    assert "its graph reads or writes files: ReadFile ×1, WriteFile ×1" in asked.stdout, asked.stdout
    assert tflaunch("profiles", "trust", "shared", "--yes").returncode == 0
    ran = tflaunch("bench", "--profile", "shared", "--steady", "1")
    assert ran.returncode == 0, ran.stderr
    assert marker.exists(), "the graph really was code: accepted, it wrote its marker"
    store = ProfileStore(profiles_dir())
    assert store.unaccepted_code(store.load("shared")) == []
    graph = spy / "saved_model.pb"
    graph.write_bytes(graph.read_bytes() + b"\x08\x01")  # another graph under the same profile file
    assert store.unaccepted_code(store.load("shared")), "the yes was for the graph that was shown"


def test_a_keras_file_with_a_lambda_needs_a_yes_and_a_plain_one_does_not(crafted):
    assert "a Lambda (Python code stored in the file)" in (model_code(str(crafted["lambda"])) or "")
    assert model_code(str(crafted["plain"])) is None
    assert code_it_runs(LaunchConfig(model=str(crafted["plain"]))) == []
    assert model_details(str(crafted["plain"])) == []


def test_a_saved_model_that_cannot_be_parsed_is_said_to_be_able_to_do_anything(tmp_path):
    folder = tmp_path / "broken"
    folder.mkdir()
    (folder / "saved_model.pb").write_bytes(b"\xff" * 64)
    (line,) = model_details(str(folder))
    assert line.startswith("its graph could not be read (") and "treat it as able to do anything" in line
    os.mkfifo(folder / "fifo")
    (folder / "saved_model.pb").unlink()
    (folder / "saved_model.pb").symlink_to(folder / "fifo")
    (line,) = model_details(str(folder), timeout=30)
    assert "not a regular file" in line


def test_the_gui_process_reads_a_saved_model_s_ops_without_tensorflow(crafted):
    details = model_details(str(crafted["spy"]))
    assert any("ReadFile ×1" in line for line in details)
    assert "tensorflow" not in sys.modules


def test_the_app_asks_with_the_graph_s_operations_before_it_applies(qtbot, window, tmp_path, crafted):
    source = tmp_path / "shared.toml"
    source.write_text(f'schema_version = 1\n[settings]\nmodel = "{crafted["spy"]}"\nintra = 3\n')
    window.profiles.import_file(source)
    view = window.profiles_view
    view.refresh()
    assert view.list.item(0).text() == "shared (runs code: not accepted)"
    view.select("shared")
    seen: list[str] = []

    def answer() -> None:
        box = QApplication.activeModalWidget()
        assert box is not None
        seen.append(box.informativeText())
        next(b for b in box.buttons() if b.text() == "Cancel").click()

    QTimer.singleShot(100, answer)
    view.apply_selected()
    assert seen and f"loads the SavedModel {crafted['spy']}" in seen[0]
    assert "its graph reads or writes files: ReadFile ×1, WriteFile ×1" in seen[0]
    assert window.panel.config().intra == 0, "refused: nothing applied"
    assert "tensorflow" not in sys.modules
