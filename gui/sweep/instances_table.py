"""InstancesTable: per instance count of a sweep that starts several probes at once, the
slowest instance's time to ready, GPU memory per process and per GPU, and whether all fit."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableWidget, QTableWidgetItem, QWidget

from tflaunch.core.sweep.instances import DOES_NOT_FIT, INSTANCES_HELP, instances_rows
from tflaunch.core.sweep.instances import HEADER as INSTANCES_HEADER
from tflaunch.core.sweep.plan import Sweep

from ..widgets.palette import STATE_COLORS, readable


class InstancesTable(QTableWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(0, len(INSTANCES_HEADER), parent)
        self.setHorizontalHeaderLabels(INSTANCES_HEADER)
        self.verticalHeader().hide()
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.horizontalHeader().setStretchLastSection(True)
        self.setWordWrap(False)
        self.setToolTip(f"Instances: {INSTANCES_HELP}. GPU memory is what NVML saw each process tree hold at its "
                        "peak; the total adds the instances' peaks up.")
        self.hide()

    def show_sweep(self, sweep: Sweep) -> bool:
        """Fill it for a sweep that starts several instances at once (and show it); False,
        hidden, for any other."""
        if not sweep.plan.shows_instances:
            self.hide()
            return False
        instance_rows = sweep.instance_rows()
        _, cells = instances_rows(instance_rows)
        self.setRowCount(len(cells))
        for row, (summary, texts) in enumerate(zip(instance_rows, cells, strict=True)):
            for col, text in enumerate(texts):
                item = QTableWidgetItem(text)
                if 0 < col < len(texts) - 1:
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                if summary.failure:
                    item.setToolTip(summary.failure)
                if col == len(texts) - 1 and summary.fit == DOES_NOT_FIT:
                    item.setForeground(readable(STATE_COLORS["failed"]))
                self.setItem(row, col, item)
        # Every count in sight where there is room; two rows at least, the rest scrolls.
        rows = [self.rowHeight(r) for r in range(self.rowCount())]
        frame = self.horizontalHeader().sizeHint().height() + 2 * self.frameWidth() \
            + self.horizontalScrollBar().sizeHint().height()
        self.setMaximumHeight(frame + sum(rows) + 2)
        self.setMinimumHeight(frame + sum(rows[:2]) + 2)
        self.show()
        return True
