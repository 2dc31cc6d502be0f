"""NodeTypeGroup: one node type's part of a cluster sweep, titled with the GPU its nodes
reported, its settings ranked in the local sweep's results table, and its own verdict:
a setting fastest on an A100 node may not be on an H100 node, so types are never mixed."""

from __future__ import annotations

import html

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from tflaunch.core.cluster.merge import NodeTypeSweep
from tflaunch.core.sweep.plan import outcome

from ..widgets.section import Section
from ..widgets.text_roles import caption
from ..widgets.wrapping_label import WrappingLabel
from .results_table import ResultsTable


class NodeTypeGroup(Section):
    save_requested = Signal(object, int)  # its NodeTypeSweep, the History sweep its runs are in

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.where = caption(QLabel())
        self.where.setWordWrap(True)
        self.save_button = QPushButton("Save winner as profile…")
        self.save_button.clicked.connect(self._save)
        self._history_id: int | None = None
        self.table = ResultsTable()
        self.table.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)  # as tall as its rows
        self.table.verticalHeader().setDefaultSectionSize(self.table.fontMetrics().height() + 8)
        self.verdict = WrappingLabel()
        bold = self.verdict.font()
        bold.setBold(True)  # not the tab's headline size: there is one verdict per node type
        self.verdict.setFont(bold)
        self.verdict.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)  # the width to the table's columns
        layout.addWidget(self.verdict)
        layout.addWidget(self.table)
        below = QHBoxLayout()
        below.addWidget(self.where, 1)
        below.addWidget(self.save_button, 0, Qt.AlignmentFlag.AlignTop)
        layout.addLayout(below)
        self.part: NodeTypeSweep | None = None

    def show_part(self, part: NodeTypeSweep, history_id: int | None = None) -> None:
        """`history_id`: the history's sweep its runs were merged into, once merged."""
        self.part = part
        self.setTitle(part.label)
        sweep = part.sweep
        results = sweep.results()
        self.table.show_results(results, sweep.plan.objective)
        self._fit_height()
        self.verdict.setText(html.escape(outcome(results, sweep.plan.objective)))
        hosts = ", ".join(part.hosts) or "no node yet"
        stored = (f"in History as sweep {history_id}" if history_id is not None
                  else "not in History yet: Merge stores it")
        self.where.setText(f"{sweep.trials_run} trials on {hosts}; {stored}")
        self._history_id = history_id
        winner = sweep.winner()
        self.save_button.setEnabled(winner is not None and history_id is not None)
        self.save_button.setToolTip(
            f"Save {winner.candidate.key} as a launch profile that names the node type it was measured on "
            f"({part.label})" if winner is not None and history_id is not None
            else "Merge into history first: the profile's evidence is the merged runs" if winner is not None
            else "No winner on this node type yet: " + outcome(results, sweep.plan.objective))

    def _save(self) -> None:
        if self.part is not None and self._history_id is not None:
            self.save_requested.emit(self.part, self._history_id)

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 (Qt's name)
        super().resizeEvent(event)
        QTimer.singleShot(0, self, self._fit_height)  # once the layout has given the table its new width

    def _fit_height(self) -> None:
        """Every row in sight, and the scroll bar below them where the columns are wider than
        the table (it would otherwise cover the last row)."""
        table = self.table
        wide = table.horizontalHeader().length() > table.width() - 2 * table.frameWidth()
        table.setFixedHeight(table.wanted_height() + (table.horizontalScrollBar().sizeHint().height() if wide else 0))

    def recolour(self) -> None:
        if self.part is not None:
            sweep = self.part.sweep
            self.table.show_results(sweep.results(), sweep.plan.objective)
