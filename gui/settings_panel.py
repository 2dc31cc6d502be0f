"""SettingsPanel: the controls that make a LaunchConfig, with the reason next to a bad one."""

from __future__ import annotations

import sys

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox, QComboBox, QFileDialog, QFormLayout, QGroupBox, QHBoxLayout, QLabel, QLineEdit,
    QPushButton, QSpinBox, QVBoxLayout, QWidget,
)

from tflaunch.core.config import LOG_LEVELS, SAMPLE_MODELS, LaunchConfig, Problem
from tflaunch.core.gpus import GpuInventory
from tflaunch.core.interpreter import InterpreterInfo
from tflaunch.core.units import format_bytes

_TRISTATE = {"TensorFlow default": None, "on": True, "off": False}


def _spin(low: int, high: int, value: int, *, special: str | None = None, suffix: str = "") -> QSpinBox:
    box = QSpinBox()
    box.setRange(low, high)
    box.setValue(value)
    box.setSuffix(suffix)
    if special:
        box.setSpecialValueText(special)
    return box


class SettingsPanel(QWidget):
    """Edits one LaunchConfig. Emits `python_changed` so the window can check it."""

    python_changed = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._errors: dict[str, QLabel] = {}
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self._model_group())
        layout.addWidget(self._python_group())
        layout.addWidget(self._devices_group())
        layout.addWidget(self._tensorflow_group())
        layout.addWidget(self._inputs_group())
        layout.addStretch(1)
        self.set_recent_models([])

    # -- building ----------------------------------------------------------------------
    def _error_label(self, field: str) -> QLabel:
        label = QLabel()
        label.setObjectName("fieldError")
        label.setWordWrap(True)
        label.setStyleSheet("color: #b3261e;")
        label.hide()
        self._errors[field] = label
        return label

    def _model_group(self) -> QGroupBox:
        group = QGroupBox("Model")
        self.model = QComboBox()
        self.model.setEditable(True)
        self.model.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
        self.model.setMinimumContentsLength(18)
        self.model.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.model.setToolTip("A SavedModel folder, a .keras or .h5 file, or a built-in sample "
                              "built from code (sample:NAME). Drop a model onto the window to choose it.")
        browse_file = QPushButton("File…")
        browse_file.setToolTip("Choose a .keras or .h5 file")
        browse_file.clicked.connect(self.browse_model_file)
        browse_dir = QPushButton("SavedModel…")
        browse_dir.setToolTip("Choose a SavedModel folder (one with saved_model.pb)")
        browse_dir.clicked.connect(self.browse_model_dir)
        buttons = QHBoxLayout()
        buttons.addWidget(browse_file)
        buttons.addWidget(browse_dir)
        box = QVBoxLayout(group)
        box.addWidget(self.model)
        box.addLayout(buttons)
        box.addWidget(self._error_label("model"))
        return group

    def _python_group(self) -> QGroupBox:
        group = QGroupBox("Python environment")
        self.python = QLineEdit(sys.executable)
        self.python.setToolTip("The interpreter that runs the probe: any python with TensorFlow "
                               "(venv, conda...). tflaunch need not be installed there.")
        self.python.editingFinished.connect(lambda: self.python_changed.emit(self.python.text()))
        browse = QPushButton("…")
        browse.setFixedWidth(32)
        browse.setToolTip("Choose a python executable")
        browse.clicked.connect(self._browse_python)
        row = QHBoxLayout()
        row.addWidget(self.python, 1)
        row.addWidget(browse)
        self.python_status = QLabel("Checking…")
        self.python_status.setWordWrap(True)
        self.python_status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        box = QVBoxLayout(group)
        box.addLayout(row)
        box.addWidget(self.python_status)
        box.addWidget(self._error_label("python"))
        return group

    def _devices_group(self) -> QGroupBox:
        group = QGroupBox("GPUs")
        self._gpu_boxes: list[QCheckBox] = []
        self._gpu_layout = QVBoxLayout()
        self.gpu_note = QLabel("Looking for GPUs…")
        self.gpu_note.setWordWrap(True)
        self.memory_growth = QCheckBox("Memory growth")
        self.memory_growth.setToolTip("Allocate GPU memory as needed instead of all at start: "
                                      "TF_FORCE_GPU_ALLOW_GROWTH=true and "
                                      "tf.config.experimental.set_memory_growth().")
        self.memory_limit = _spin(0, 1 << 20, 0, special="no limit", suffix=" MiB")
        self.memory_limit.setSingleStep(512)
        self.memory_limit.setToolTip("Per-GPU memory limit: tf.config.set_logical_device_configuration("
                                     "gpu, [LogicalDeviceConfiguration(memory_limit=MiB)]).")
        form = QFormLayout()
        form.addRow(self.memory_growth)
        form.addRow("Memory limit", self.memory_limit)
        box = QVBoxLayout(group)
        box.addWidget(self.gpu_note)
        box.addLayout(self._gpu_layout)
        box.addLayout(form)
        box.addWidget(self._error_label("visible_gpus"))
        box.addWidget(self._error_label("memory_limit_mb"))
        self.set_gpus(GpuInventory((), None, "Looking for GPUs…"))
        return group

    def _tensorflow_group(self) -> QGroupBox:
        group = QGroupBox("TensorFlow")
        self.intra = _spin(0, 1024, 0, special="TensorFlow default")
        self.intra.setToolTip("Threads inside one op: tf.config.threading.set_intra_op_parallelism_threads(). "
                              "0 leaves TensorFlow's default (all cores).")
        self.inter = _spin(0, 1024, 0, special="TensorFlow default")
        self.inter.setToolTip("Ops run in parallel: tf.config.threading.set_inter_op_parallelism_threads(). "
                              "0 leaves TensorFlow's default.")
        self.xla = QCheckBox("XLA JIT")
        self.xla.setToolTip("Compile with XLA: tf.config.optimizer.set_jit('autoclustering') and "
                            "tf.function(jit_compile=True). Slower first call, maybe faster steady state.")
        self.onednn = QComboBox()
        self.onednn.addItems(list(_TRISTATE))
        self.onednn.setToolTip("oneDNN CPU optimisations: TF_ENABLE_ONEDNN_OPTS=1 or 0, set before import.")
        self.log_level = QComboBox()
        self.log_level.addItem("TensorFlow default", None)
        for level, text in LOG_LEVELS.items():
            self.log_level.addItem(f"{level}: {text}", level)
        self.log_level.setToolTip("TensorFlow's C++ log filter: TF_CPP_MIN_LOG_LEVEL, set before import.")
        form = QFormLayout(group)
        form.addRow("Intra-op threads", self.intra)
        form.addRow("Inter-op threads", self.inter)
        form.addRow(self.xla)
        form.addRow("oneDNN", self.onednn)
        form.addRow("Log level", self.log_level)
        for field in ("intra", "inter", "log_level"):
            form.addRow(self._error_label(field))
        return group

    def _inputs_group(self) -> QGroupBox:
        group = QGroupBox("Inference")
        self.batch = _spin(1, 65536, 1)
        self.batch.setToolTip("Batch size of the inputs generated from the model's signature.")
        self.steady = _spin(0, 100000, 20)
        self.steady.setToolTip("Inferences after the first, to measure steady-state latency.")
        self.timeout = _spin(1, 24 * 3600, 600, suffix=" s")
        self.timeout.setToolTip("A run still going after this long is stopped and marked timed out.")
        form = QFormLayout(group)
        form.addRow("Batch size", self.batch)
        form.addRow("Steady runs", self.steady)
        form.addRow("Timeout", self.timeout)
        for field in ("batch", "steady", "timeout"):
            form.addRow(self._error_label(field))
        return group

    # -- reading and writing -----------------------------------------------------------
    def config(self) -> LaunchConfig:
        visible = None
        if self._gpu_boxes and not all(b.isChecked() for b in self._gpu_boxes):
            visible = tuple(i for i, b in enumerate(self._gpu_boxes) if b.isChecked())
        return LaunchConfig(
            model=self.model.currentText().strip(),
            python=self.python.text().strip(),
            intra=self.intra.value(), inter=self.inter.value(), xla=self.xla.isChecked(),
            onednn=_TRISTATE[self.onednn.currentText()], log_level=self.log_level.currentData(),
            visible_gpus=visible, memory_growth=self.memory_growth.isChecked(),
            memory_limit_mb=self.memory_limit.value() or None,
            batch=self.batch.value(), steady=self.steady.value(), timeout=float(self.timeout.value()),
        )

    def set_config(self, config: LaunchConfig) -> None:
        self.model.setCurrentText(config.model)
        if self.python.text() != config.python:
            self.python.setText(config.python)
            self.python_changed.emit(config.python)
        self.intra.setValue(config.intra)
        self.inter.setValue(config.inter)
        self.xla.setChecked(config.xla)
        self.onednn.setCurrentText(next(k for k, v in _TRISTATE.items() if v == config.onednn))
        self.log_level.setCurrentIndex(max(0, self.log_level.findData(config.log_level)))
        for i, box in enumerate(self._gpu_boxes):
            box.setChecked(config.visible_gpus is None or i in config.visible_gpus)
        self.memory_growth.setChecked(config.memory_growth)
        self.memory_limit.setValue(config.memory_limit_mb or 0)
        self.batch.setValue(config.batch)
        self.steady.setValue(config.steady)
        self.timeout.setValue(int(config.timeout))

    def set_recent_models(self, recent: list[str]) -> None:
        current = self.model.currentText()
        self.model.clear()
        for path in recent:
            self.model.addItem(path)
        if recent:
            self.model.insertSeparator(self.model.count())
        for name, text in SAMPLE_MODELS.items():
            self.model.addItem(f"sample:{name}")
            self.model.setItemData(self.model.count() - 1, text, Qt.ItemDataRole.ToolTipRole)
        self.model.setCurrentText(current or "sample:mlp")

    def set_gpus(self, inventory: GpuInventory) -> None:
        for box in self._gpu_boxes:
            box.deleteLater()
        self._gpu_boxes = []
        for gpu in inventory.gpus:
            box = QCheckBox(f"GPU {gpu.index}: {gpu.name} ({format_bytes(gpu.memory_total)})")
            box.setChecked(True)
            box.setToolTip("Visible to TensorFlow: CUDA_VISIBLE_DEVICES, set before import.")
            self._gpu_layout.addWidget(box)
            self._gpu_boxes.append(box)
        has_gpu = inventory.available
        self.gpu_note.setText(f"Driver {inventory.driver}" if has_gpu else f"No GPU: {inventory.reason}")
        for widget in (self.memory_growth, self.memory_limit):
            widget.setEnabled(has_gpu)
            if not has_gpu:
                widget.setToolTip(widget.toolTip().split("\n")[0] + f"\nDisabled: {inventory.reason}")

    def set_interpreter_info(self, info: InterpreterInfo) -> None:
        self.python_status.setText(info.message)
        self.python_status.setStyleSheet("" if info.ok else "color: #b3261e;")

    def show_problems(self, problems: list[Problem]) -> None:
        by_field = {p.field: p.message for p in problems}
        for field, label in self._errors.items():
            label.setText(by_field.get(field, ""))
            label.setVisible(field in by_field)

    # -- browsing ----------------------------------------------------------------------
    def browse_model_file(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Choose a model", "", "Keras models (*.keras *.h5 *.hdf5)")
        if path:
            self.model.setCurrentText(path)

    def browse_model_dir(self) -> None:
        path = QFileDialog.getExistingDirectory(self, "Choose a SavedModel folder")
        if path:
            self.model.setCurrentText(path)

    def _browse_python(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Choose a Python interpreter", "", "Python (python*);;All files (*)")
        if path:
            self.python.setText(path)
            self.python_changed.emit(path)
