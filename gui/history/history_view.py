"""HistoryView: every stored run, sortable and filterable; the start of compare and re-run.

The runs come from a HistoryListing (the first at once, the rest from a thread, so that
10,000 runs never hold the window) into a RunTable; sorting is the table's own and
filtering the RunFilter's, both over the runs listed so far: runs still arriving take
their place in the sorted, filtered table as they come. Once listed, the tab follows the
file: runs another process or this window writes come, deleted ones go, within a second.
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QEvent, QModelIndex, QObject, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QKeySequence, QResizeEvent, QShortcut
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QMessageBox,
    QPushButton,
    QStyle,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from tflaunch.core.report.review import Review, comparison_review, run_review
from tflaunch.core.run.record import RunRecord
from tflaunch.core.store.history import DeletedRuns, History, HistoryError

from ..widgets.elide_delegate import PathElideDelegate
from ..widgets.elided_label import ElidedLabel
from ..widgets.palette import keep_colours
from .history_listing import HistoryListing
from .history_table import COLUMNS, DAMAGED_COLOR, DATE, ID_ROLE, MODEL, SETTINGS, STATUS, RunFilter, RunTable

__all__ = ["COLUMNS", "DAMAGED_COLOR", "MODEL", "SETTINGS", "UNDO_SECONDS", "HistoryView"]

# Shown in this order: the figures before the long texts, so that a narrow window cuts
# (and elides) the model and settings, never the numbers.
VISUAL_ORDER = (0, 3, 4, 5, 6, MODEL, SETTINGS)
MODEL_SHARE = 0.45  # at most this part of the width the figures leave goes to the model
SETTINGS_ROOM = 120  # px the settings keep beside a long model path before it is elided
SETTINGS_LEAST = 100  # px the settings keep, in view, beside a file name that would need more (as a
# stretched last section, Qt does not narrow them below its default section size, 100 px, anyway)
MIN_TEXT_WIDTH = 80  # px: the model column is not narrowed below this (the table scrolls)
STATUS_LEAST = "interrupted"  # kept whole; a longer status ("ok, doctor, warm + server start") may be elided
UNDO_SECONDS = 60
FIGURES = tuple(c for c in range(len(COLUMNS)) if c not in (MODEL, SETTINGS))
WIDTH_SLACK = 3  # characters: "10 min 5 s" can be narrower than "999.9 ms", never than "9 ms"


def _runs_of(count: int, models: list[str]) -> str:
    """"2 runs of sample:mlp", "3 runs (of a.keras, b.keras)"."""
    runs = f"{count} run{'s' if count != 1 else ''}"
    names = sorted(set(models))
    if len(names) == 1:
        return f"{runs} of {names[0]}"
    shown = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
    return f"{runs} ({shown})"


class HistoryView(QWidget):
    show_requested = Signal(int)
    rerun_requested = Signal(int)
    compare_requested = Signal(list)
    save_profile_requested = Signal(list)
    problem = Signal(str)  # the history could not be read or changed: file, cause, what to do

    def __init__(self, history: History | None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.history = history
        self.model = RunTable(self)
        self.proxy = RunFilter(self.model)
        self.listing = HistoryListing(self.model, self)
        self.listing.rows_added.connect(self._on_rows_added)
        self.model.rowsInserted.connect(self._widen)
        self.model.dataChanged.connect(self._on_cells_changed)
        self.listing.problem.connect(self.problem)
        self._selecting: set[int] = set()  # runs to select as their rows arrive
        self.table = QTableView()
        self.table.setModel(self.proxy)
        self.table.setSortingEnabled(True)
        self.table.sortByColumn(0, Qt.SortOrder.DescendingOrder)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.table.verticalHeader().hide()
        self.table.setWordWrap(False)
        # Tab leaves the table, as everywhere else: moving between cells made the current
        # cell's row the whole selection, and the runs chosen to compare were lost.
        self.table.setTabKeyNavigation(False)
        # A long model path keeps its file name; the settings keep their beginning.
        self.table.setItemDelegateForColumn(MODEL, PathElideDelegate(self.table))
        header = self.table.horizontalHeader()
        # The figures' columns are as wide as their widest text so far (_widen). Qt's own
        # fitting (ResizeToContents) asked the model for every cell of 1,000 rows, in each of
        # 5 columns, every time rows arrived: 90 ms at a time with 10,000 runs.
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        self._widths = [header.sectionSizeFromContents(col).width() for col in range(len(COLUMNS))]
        self._name_width = 0  # px: the widest model's file name, as the column must show it at least
        self._longest = [0] * len(COLUMNS)  # characters of the longest text measured, by column
        for column in FIGURES:
            header.resizeSection(column, self._widths[column])
        for visual, logical in enumerate(VISUAL_ORDER):
            header.moveSection(header.visualIndex(logical), visual)
        header.setStretchLastSection(True)  # the settings, last, take the rest
        # The viewport's width changes after the view's own resize (its scroll bar comes and
        # goes later): fitted then too, or the settings were left scrolled out of view.
        self.table.viewport().installEventFilter(self)
        self.table.doubleClicked.connect(lambda _index: self._emit_single(self.show_requested))
        self.table.selectionModel().selectionChanged.connect(self._update_buttons)

        self.filter = QLineEdit()
        self.filter.setPlaceholderText("Filter by model, settings, status… (Ctrl+Shift+F)")
        self.filter.setClearButtonEnabled(True)
        self.filter.textChanged.connect(self.proxy.set_text)
        self.filter.textChanged.connect(lambda _text: self._show_count())  # the count says what is shown
        # Room to read what is typed beside six buttons (at 1024 px it had shrunk to "Filter…").
        self.filter.setMinimumWidth(self.filter.fontMetrics().horizontalAdvance("model, settings, st") + 24)
        QShortcut(QKeySequence("Ctrl+Shift+F"), self, self.filter.setFocus)
        self.show_button = QPushButton("Show")
        self.show_button.setToolTip("Show the run's phases and memory (double-click)")
        self.show_button.clicked.connect(lambda: self._emit_single(self.show_requested))
        self.rerun_button = QPushButton("Re-run")
        self.rerun_button.setToolTip("Run again with the same settings")
        self.rerun_button.clicked.connect(lambda: self._emit_single(self.rerun_requested))
        self.compare_button = QPushButton("Compare")
        self.compare_button.setToolTip("Compare the selected runs (two or more)")
        self.compare_button.clicked.connect(lambda: self.compare_requested.emit(self.selected_ids()))
        self.profile_button = QPushButton("Save as profile…")
        self.profile_button.setToolTip("Save the settings, with the selected runs as evidence")
        self.profile_button.clicked.connect(lambda: self.save_profile_requested.emit(self.selected_ids()))
        self.delete_button = QPushButton("Delete…")
        self.delete_button.setToolTip("Delete the selected runs from the history, after asking (Del); "
                                      f"Undo (Ctrl+Z) brings them back for {UNDO_SECONDS} s")
        self.delete_button.clicked.connect(self.ask_and_delete)
        QShortcut(QKeySequence.StandardKey.Delete, self.table, self.ask_and_delete)
        # The tab follows the file by itself; Refresh lists it again from the start (a file
        # replaced, or to be sure), keeping the selection.
        self.reload_action = QAction("Refresh", self)
        self.reload_action.setShortcut(QKeySequence("F5"))
        self.reload_action.triggered.connect(self.reload)
        self.addAction(self.reload_action)  # F5 while the tab is shown
        self.reload_button = QPushButton("Refresh")
        self.reload_button.setToolTip("List the runs again from the history file (F5). The list also follows the "
                                      "file by itself: runs another window or `tflaunch bench` stores appear "
                                      "within a second.")
        self.reload_button.clicked.connect(self.reload_action.trigger)
        self.count = ElidedLabel()  # names the history file: it must not widen the window

        # After a delete: what went, and the way back, until the undo times out.
        self._deleted: DeletedRuns | None = None
        self.undo_note = QLabel()
        self.undo_button = QPushButton("Undo")
        self.undo_button.setToolTip("Put the deleted runs back, with their phases and samples (Ctrl+Z)")
        self.undo_button.clicked.connect(self.undo_delete)
        QShortcut(QKeySequence.StandardKey.Undo, self, self.undo_delete,
                  context=Qt.ShortcutContext.WidgetWithChildrenShortcut)
        self._undo_timer = QTimer(self)
        self._undo_timer.setSingleShot(True)
        self._undo_timer.setInterval(UNDO_SECONDS * 1000)
        self._undo_timer.timeout.connect(self._forget_deleted)
        undo_bar = QHBoxLayout()
        undo_bar.addWidget(self.undo_note, 1)
        undo_bar.addWidget(self.undo_button)

        bar = QHBoxLayout()
        bar.addStretch(1)
        for button in (self.show_button, self.rerun_button, self.compare_button, self.profile_button,
                       self.delete_button, self.reload_button):
            bar.addWidget(button)
        layout = QVBoxLayout(self)
        layout.addLayout(bar)
        layout.addWidget(self.table)
        layout.addLayout(undo_bar)
        # The filter beside the count it narrows: above, beside six buttons, it had no room at 1024 px.
        below = QHBoxLayout()
        below.addWidget(self.filter)
        below.addWidget(self.count, 1)
        layout.addLayout(below)
        self._forget_deleted()
        self._list()
        keep_colours(self, self._recolour)

    # -- listing ---------------------------------------------------------------------
    def refresh(self) -> None:
        """Bring the tab up to date with the file now: the runs stored, ended or deleted
        since it was listed (after a run of this window's, a delete, an undo); while it
        still loads, or when it could not be read, it is listed again."""
        if self.listing.following:
            self.listing.sync()
            self._update_buttons()
        else:
            self._list()

    def reload(self) -> None:
        """List every run again from the file (Refresh, F5), keeping the selection."""
        selected = self.selected_ids()
        self._list()
        if selected:
            self.select_ids(selected)

    def _list(self) -> None:
        """List the history's runs: the first at once, the rest as they are read."""
        self._selecting = set()  # a selection asked for before is not carried into a new list
        self.listing.load(self.history)
        self._show_count()
        self._fit_columns()
        self._update_buttons()

    @property
    def loading(self) -> bool:
        return self.listing.loading

    def _on_rows_added(self) -> None:
        if self._selecting:
            rows = self.model.view_rows(self._selecting)
            for row in rows:
                self._select_row(row)
            self._selecting -= {self.model.run_id(row) for row in rows}
        if not self.listing.loading:
            self._selecting = set()
            self._fit_columns()
        self._show_count()

    def _show_count(self) -> None:
        listing = self.listing
        if self.history is None:
            self.count.setText("0 runs (the history could not be opened)")
            return
        if listing.failure is not None and not listing.listed:
            self.count.setText(listing.failure)
            return
        where = f" in {self.history.path}"
        damaged = f"; {listing.damaged:,} damaged (hover for why)" if listing.damaged else ""
        if listing.loading:
            self.count.setText(f"loading {listing.listed:,} of {listing.total:,} runs…{where}{damaged}")
        elif listing.failure is not None:
            self.count.setText(f"{listing.listed:,} of {listing.total:,} runs listed{where}{damaged}; the rest "
                               f"could not be read: {listing.failure}")
        else:
            runs = f"{listing.listed:,} run{'s' if listing.listed != 1 else ''}"
            if self.filter.text().strip():
                shown = self.proxy.rowCount()
                runs = f"{shown:,} of {runs} shown (filter: {self.filter.text().strip()})"
            self.count.setText(f"{runs}{where}{damaged}")

    def _widen(self, _parent: object, first: int, last: int) -> None:
        """The figures' columns as wide as their widest text, these new rows' included (and
        the model's widest name kept for _fit_columns). A text shorter by WIDTH_SLACK
        characters than the longest one measured is not measured: it is not wider."""
        metrics, header, margin = self.table.fontMetrics(), self.table.horizontalHeader(), self._cell_margin()
        for column in (*FIGURES, MODEL):
            texts = {text for text in self.model.texts(column, first, last)
                     if len(text) >= self._longest[column] - WIDTH_SLACK}
            if not texts:
                continue
            self._longest[column] = max(self._longest[column], *map(len, texts))
            widest = max(map(metrics.horizontalAdvance, texts)) + margin
            if column == MODEL:  # a path elided keeps its file name whole (PathElideDelegate)
                self._name_width = max(self._name_width, *(metrics.horizontalAdvance(f"…/{t.rsplit('/', 1)[-1]}")
                                                           + margin + 2 for t in texts))
            if widest > self._widths[column]:
                self._widths[column] = widest
                if column != MODEL:
                    header.resizeSection(column, widest)

    def _cell_margin(self) -> int:
        """As Qt fits a cell: a text margin each side, and the grid line; two pixels more than
        that, as Qt's own size hint has them (the Date column was one short)."""
        return 2 * (self.table.style().pixelMetric(QStyle.PixelMetric.PM_FocusFrameHMargin, None, self.table) + 1) + 3

    def _on_cells_changed(self, first: QModelIndex, last: QModelIndex, roles: Sequence[int] = ()) -> None:
        """A run read again (it ended) may have longer texts; new colours do not."""
        if not roles or Qt.ItemDataRole.DisplayRole.value in roles:
            self._widen(None, first.row(), last.row())

    def _fit_columns(self) -> None:
        """The model column as wide as its longest name, up to its share of the width the
        other columns leave; the settings, last, take the rest."""
        header = self.table.horizontalHeader()
        # A long status gives up width before the subject and the settings are cut or scrolled
        # away (at 1024 px after the Advisor: a 200 px status and the settings out of view).
        others = sum(header.sectionSize(c) for c in FIGURES if c != STATUS)
        short = self.table.viewport().width() - others - MIN_TEXT_WIDTH - SETTINGS_LEAST
        least = self.table.fontMetrics().horizontalAdvance(STATUS_LEAST) + self._cell_margin()
        header.resizeSection(STATUS, max(min(self._widths[STATUS], short), min(self._widths[STATUS], least)))
        left = self.table.viewport().width() - sum(header.sectionSize(c) for c in FIGURES)
        room = max(int(left * MODEL_SHARE), left - SETTINGS_ROOM)  # the subject before the settings
        # A whole file name where the settings keep their room beside it; where they would not
        # (a long name at 1024 px: the settings were scrolled out of view), the name is elided.
        least = min(self._widths[MODEL], max(MIN_TEXT_WIDTH, self._name_width))
        wanted = min(self._widths[MODEL], max(least, room))
        self.table.setColumnWidth(MODEL, max(MIN_TEXT_WIDTH, min(wanted, left - SETTINGS_LEAST)))

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 (Qt's name)
        super().resizeEvent(event)
        self._fit_columns()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt's name)
        if event.type() == QEvent.Type.Resize and watched is self.table.viewport():
            self._fit_columns()
        return False

    def _recolour(self) -> None:
        """Status colours are chosen for the palette."""
        self.model.recolour()

    def load(self, run_ids: list[int]) -> list[RunRecord]:
        """The stored runs; none when one cannot be read, which `problem` says."""
        if self.history is None:
            return []
        try:
            return [self.history.load(i) for i in run_ids]
        except (HistoryError, KeyError) as exc:
            self.problem.emit(str(exc) if isinstance(exc, HistoryError) else f"Run {exc} is no longer in the history.")
            return []

    def review(self) -> Review | None:
        records = self.load(self.selected_ids())
        if len(records) == 1:
            return run_review(records[0])
        return comparison_review(records) if records else None

    def selected_ids(self) -> list[int]:
        rows = sorted({index.row() for index in self.table.selectionModel().selectedRows()})
        return [self.proxy.index(row, DATE).data(ID_ROLE) for row in rows]

    def _selected_models(self) -> list[str]:
        return [self.proxy.index(index.row(), MODEL).data() for index in self.table.selectionModel().selectedRows()]

    def select_ids(self, ids: list[int]) -> None:
        """Select these runs: those listed now, and (while the tab loads) the others as
        their rows arrive."""
        self.table.clearSelection()
        rows = self.model.view_rows(set(ids))
        for row in rows:
            self._select_row(row)
        self._selecting = set(ids) - {self.model.run_id(row) for row in rows} if self.loading else set()

    def _select_row(self, row: int) -> None:
        index = self.proxy.mapFromSource(self.model.index(row, DATE))
        if index.isValid():  # filtered out: not shown, not selected
            mode = self.table.selectionModel()
            mode.select(index, mode.SelectionFlag.Select | mode.SelectionFlag.Rows)

    # -- delete and undo ---------------------------------------------------------------
    def ask_and_delete(self) -> None:
        """The Delete button and key: ask first, naming what would go; No is the default."""
        ids = self.selected_ids()
        if not ids or self.history is None:
            return
        what = _runs_of(len(ids), self._selected_models())
        answer = QMessageBox.question(
            self, "Delete runs", f"Delete {what} from the history?",
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No, QMessageBox.StandardButton.No)
        if answer == QMessageBox.StandardButton.Yes:
            self.delete_selected()

    def delete_selected(self) -> None:
        """Delete the selected runs now, keeping them in memory for undo_delete()."""
        ids = self.selected_ids()
        if not ids or self.history is None:
            return
        what = _runs_of(len(ids), self._selected_models())
        try:
            deleted = self.history.take(ids)
        except HistoryError as exc:
            self.problem.emit(str(exc))
        else:
            self._deleted = deleted
            self.undo_note.setText(f"Deleted {what}. Undo (Ctrl+Z) puts them back, for {UNDO_SECONDS} s.")
            self.undo_note.show()
            self.undo_button.show()
            self._undo_timer.start()
        self.refresh()

    def undo_delete(self) -> None:
        """Put the last deleted runs back, samples and all, and select them."""
        deleted, history = self._deleted, self.history
        if deleted is None or history is None:
            return
        try:
            ids = history.put_back(deleted)
        except HistoryError as exc:
            self.problem.emit(f"The deleted runs could not be put back: {exc}")
            return
        self._forget_deleted()
        self.refresh()
        self.select_ids(ids)

    @property
    def can_undo(self) -> bool:
        return self._deleted is not None

    def _forget_deleted(self) -> None:
        self._deleted = None
        self._undo_timer.stop()
        self.undo_note.hide()
        self.undo_button.hide()

    def _emit_single(self, signal) -> None:
        ids = self.selected_ids()
        if len(ids) == 1:
            signal.emit(ids[0])

    def _update_buttons(self) -> None:
        n = len(self.selected_ids()) if self.table.selectionModel() else 0
        self.show_button.setEnabled(n == 1)
        self.rerun_button.setEnabled(n == 1)
        self.compare_button.setEnabled(n >= 2)
        self.profile_button.setEnabled(n >= 1)
        self.delete_button.setEnabled(n >= 1)
