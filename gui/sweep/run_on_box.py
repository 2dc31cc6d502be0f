"""RunOnBox: where a sweep's trials run, this machine or a Slurm cluster, and the cluster's
settings (`tflaunch sweep --on slurm`'s options, in the same words)."""

from __future__ import annotations

import os
import shlex
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QButtonGroup,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QRadioButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from tflaunch.core.cluster import resources
from tflaunch.core.cluster.folder import NodeType
from tflaunch.core.sweep.plan import PlanError

from ..widgets.file_dialogs import open_folder

DEFAULT_SHARED_DIR = "tflaunch-sweeps"  # as the command line's --shared-dir, resolved where the app started
NO_SBATCH = ("Unavailable: `sbatch` is not on PATH, so this machine cannot submit to a cluster. Run tflaunch on "
             "a machine that submits jobs (a login node), or load Slurm (`module load slurm`) before starting it.")
SLURM_TIP = ("Expand the plan into the shared folder, check a node of each GPU type with a tiny job, then submit "
             "one job array per type (racing is off: an array does not wait for one result to choose the next)")


@dataclass(frozen=True)
class ClusterRequest:
    """What a Slurm submission needs besides the plan."""

    shared_dir: Path
    node_types: list[NodeType]
    options: dict[str, Any] = field(default_factory=dict)  # as the sweep folder keeps them


def gpu_types(text: str) -> list[str]:
    """"a100, h100" -> ["a100", "h100"]; PlanError naming the field for anything else."""
    types = [t.strip() for t in text.split(",") if t.strip()]
    bad = [t for t in types if not t.replace("-", "").replace("_", "").replace(".", "").isalnum()]
    if bad:
        raise PlanError(f"GPU types: {', '.join(map(repr, bad))} is not a GPU type name. Write the types your "
                        "cluster's --gres names, separated by commas (a100,h100), or leave it empty for any node.")
    return list(dict.fromkeys(types))


class RunOnBox(QGroupBox):
    changed = Signal()  # this machine or the cluster chosen

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("Run on", parent)
        self.local = QRadioButton("This machine")
        self.local.setToolTip("One trial after another here, each a fresh process")
        self.slurm = QRadioButton("Slurm cluster")
        self.local.setChecked(True)
        choice = QButtonGroup(self)
        choice.addButton(self.local)
        choice.addButton(self.slurm)
        self.sbatch = shutil.which("sbatch")
        self.slurm.setEnabled(self.sbatch is not None)
        self.slurm.setToolTip(SLURM_TIP if self.sbatch else NO_SBATCH)
        self.partition = QLineEdit()
        self.partition.setPlaceholderText("the cluster's default")
        self.partition.setToolTip("The Slurm partition of every job (sbatch --partition)")
        self.gpu_types = QLineEdit()
        self.gpu_types.setPlaceholderText("a100,h100 (empty: any node)")
        self.gpu_types.setToolTip("One job array per GPU type, each asking for gres gpu:TYPE:1, each with its own "
                                  "results and verdict")
        self.max_parallel = QSpinBox(minimum=0, maximum=10_000, value=0)
        self.max_parallel.setSpecialValueText("no limit")
        self.max_parallel.setToolTip("Trials of an array running at once (sbatch --array=…%K)")
        self.shared_dir = QLineEdit(str(Path(DEFAULT_SHARED_DIR).resolve()))
        self.shared_dir.setToolTip("A folder this machine and the cluster's nodes both see (home or scratch); "
                                   "the sweep's own folder is made inside it")
        browse = QPushButton("Browse…")
        browse.setToolTip("Choose the shared folder")
        browse.clicked.connect(self._browse)
        folder_row = QHBoxLayout()
        folder_row.setContentsMargins(0, 0, 0, 0)
        folder_row.addWidget(self.shared_dir, 1)
        folder_row.addWidget(browse)
        self.sbatch_args = QLineEdit()
        self.sbatch_args.setPlaceholderText("--time=00:30:00 --account=…")
        self.sbatch_args.setToolTip("Passed to every sbatch of the sweep, the check job's too (shell quoting)")

        # The resources users ask for, by name (as `tflaunch sweep --on slurm --time ...`).
        self.resource_fields: dict[str, QLineEdit] = {}
        labels: dict[str, str] = {}
        for key, label, hint in (("time", "Time limit", "1:00:00"), ("mem", "Memory", "16G"),
                                 ("account", "Account", "the default"), ("qos", "QOS", "the default"),
                                 ("job_name", "Job name", "tflaunch-ID-TYPE"),
                                 ("container", "Container", "image.sif, docker://…, pyxis:IMAGE"),
                                 ("shared_group", "Shared group", "none: yours alone")):
            edit = QLineEdit()
            edit.setPlaceholderText(hint)
            edit.setToolTip(resources.HELP[key][:1].upper() + resources.HELP[key][1:])
            self.resource_fields[key] = edit
            labels[key] = label
        self.cpus_per_task = QSpinBox(minimum=0, maximum=1024, value=0)
        self.cpus_per_task.setSpecialValueText("the default")
        self.cpus_per_task.setToolTip(resources.HELP["cpus_per_task"][:1].upper()
                                      + resources.HELP["cpus_per_task"][1:])
        self.trials_per_task = QSpinBox(minimum=0, maximum=10_000, value=0)
        self.trials_per_task.setSpecialValueText("1")
        self.trials_per_task.setToolTip(resources.HELP["trials_per_task"][:1].upper()
                                        + resources.HELP["trials_per_task"][1:])
        self.setup = QPlainTextEdit()
        self.setup.setPlaceholderText("module load cuda\nconda activate tf")
        self.setup.setToolTip("Lines run on the node before the trials, one per line")
        self.setup.setFixedHeight(self.setup.fontMetrics().lineSpacing() * 3 + 12)

        self.fields = QWidget()  # shown for the cluster only: a local sweep needs none of it
        form = QFormLayout(self.fields)
        form.setContentsMargins(0, 0, 0, 0)
        form.addRow("Partition", self.partition)
        form.addRow("GPU types", self.gpu_types)
        form.addRow("Max parallel", self.max_parallel)
        form.addRow("Shared folder", folder_row)
        for key in ("time", "mem"):
            form.addRow(labels[key], self.resource_fields[key])
        form.addRow("CPUs per trial", self.cpus_per_task)
        form.addRow("Trials per task", self.trials_per_task)
        for key in ("account", "qos", "job_name", "container", "shared_group"):
            form.addRow(labels[key], self.resource_fields[key])
        form.addRow("Setup lines", self.setup)
        form.addRow("sbatch arguments", self.sbatch_args)
        self.fields.setVisible(False)
        self._choices = QHBoxLayout()
        self._choices.addWidget(self.local)
        self._choices.addWidget(self.slurm)
        self._choices.addStretch(1)
        layout = QVBoxLayout(self)
        layout.addLayout(self._choices)
        layout.addWidget(self.fields)
        self.slurm.toggled.connect(self._on_toggled)
        self.gpu_types.textChanged.connect(self.changed)  # the plan's size is per GPU type

    def add_button(self, button: QPushButton) -> None:
        """A button of the view's, at the end of the row of choices."""
        self._choices.addWidget(button)

    @property
    def on_cluster(self) -> bool:
        return self.slurm.isChecked()

    def _on_toggled(self, on_cluster: bool) -> None:
        self.fields.setVisible(on_cluster)
        self.changed.emit()

    def _browse(self) -> None:
        chosen = open_folder(self, "cluster", "A folder the cluster's nodes see too")
        if chosen:
            self.shared_dir.setText(chosen)

    def request(self) -> ClusterRequest:
        """The cluster settings on show; PlanError naming the field that cannot be used."""
        types = gpu_types(self.gpu_types.text())
        try:
            sbatch_args = shlex.split(self.sbatch_args.text())
        except ValueError as exc:
            raise PlanError(f"sbatch arguments: {exc} in {self.sbatch_args.text()!r}. Quote as a shell would: "
                            "--comment='two words'.") from None
        text = self.shared_dir.text().strip()
        if not text:
            raise PlanError("Shared folder: empty. Give a folder this machine and the cluster's nodes both see "
                            "(your home or scratch folder).")
        partition = self.partition.text().strip() or None
        if partition and (" " in partition or partition.startswith("-")):
            raise PlanError(f"Partition: {partition!r} is not a partition name. Give one `sinfo` lists, or leave it "
                            "empty for the cluster's default.")
        node_types = [NodeType(t, f"gpu:{t}:1") for t in types] or [NodeType("any", None)]
        try:
            named = resources.checked({**{k: e.text() for k, e in self.resource_fields.items()},
                                       "cpus_per_task": self.cpus_per_task.value() or None,
                                       "trials_per_task": self.trials_per_task.value() or None,
                                       "setup": self.setup.toPlainText().splitlines()})
        except ValueError as exc:
            raise PlanError(str(exc)) from None
        options: dict[str, Any] = {"partition": partition, "max_parallel": self.max_parallel.value() or None,
                                   "sbatch_args": sbatch_args, "cwd": os.getcwd(), "gres": None, **named}
        return ClusterRequest(Path(text).expanduser().resolve(), node_types, options)
