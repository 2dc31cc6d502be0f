"""LogPane: the child's stderr, searchable, with the failure shown at the end when a run fails."""

from __future__ import annotations

import html
from collections import deque
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QKeySequence, QShortcut, QTextDocument
from PySide6.QtWidgets import QHBoxLayout, QLabel, QLineEdit, QPlainTextEdit, QToolButton, QVBoxLayout, QWidget

from ..widgets.palette import STATE_COLORS, readable

if TYPE_CHECKING:
    from tflaunch.core.run.record import RunRecord

MAX_LINES = 20000
FLUSH_MS = 100
# What one flush may append: laying out text is what costs a QPlainTextEdit, so a child
# that prints faster than anyone reads loses lines here (the count is shown) rather than
# freezing the window. Runs keep their own bounded tail for the history.
MAX_LINE_CHARS = 4096
MAX_PENDING_CHARS = 256 * 1024
# The last lines shown, as they came: a failure's excerpt of them is not shown twice.
RECENT_LINES = 64


class LogPane(QWidget):
    """Lines are batched and appended at most ten times a second: a child that prints
    megabytes costs the event loop a few appends, not one per chunk."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.text = QPlainTextEdit()
        self.text.setReadOnly(True)
        self.text.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        self.text.setMaximumBlockCount(MAX_LINES)
        self.text.setStyleSheet("font-family: monospace;")
        self.search = QLineEdit()
        self.search.setPlaceholderText("Search the log (Ctrl+F, Enter for next, Shift+Enter for previous)")
        self.search.setClearButtonEnabled(True)
        self.search.returnPressed.connect(self.find_next)
        self.match = QLabel()
        self.search.textChanged.connect(lambda _t: self.match.clear())
        previous, following = QToolButton(), QToolButton()
        previous.setArrowType(Qt.ArrowType.UpArrow)
        previous.setToolTip("Previous match (Shift+Enter)")
        previous.clicked.connect(self.find_previous)
        following.setArrowType(Qt.ArrowType.DownArrow)
        following.setToolTip("Next match (Enter)")
        following.clicked.connect(self.find_next)
        QShortcut(QKeySequence("Shift+Return"), self.search, self.find_previous)
        QShortcut(QKeySequence.StandardKey.Find, self, self.focus_search,
                  context=Qt.ShortcutContext.WidgetWithChildrenShortcut)
        bar = QHBoxLayout()
        bar.addWidget(self.search, 1)
        bar.addWidget(previous)
        bar.addWidget(following)
        bar.addWidget(self.match)
        layout = self._layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(bar)
        layout.addWidget(self.text)
        # Down to one line, not the text edit's some 70 px: the Log dock, tabified with the
        # Runs dock, would hold the pair at its height while both are empty (DockRoom).
        self.text.setMinimumHeight(self.text.fontMetrics().lineSpacing() + 2 * self.text.frameWidth() + 4)
        layout.setSpacing(2)
        self._pending: deque[str] = deque()
        self._recent: deque[str] = deque(maxlen=RECENT_LINES)
        self._pending_chars = 0
        self._skipped = 0
        self._flush = QTimer(self)
        self._flush.setSingleShot(True)
        self._flush.setInterval(FLUSH_MS)
        self._flush.timeout.connect(self.flush)

    def begin(self, title: str) -> None:
        self._pending.clear()
        self._recent.clear()
        self._pending_chars = self._skipped = 0
        self.text.clear()
        self._append_html(f"<b>── {html.escape(title)}</b>")

    def height_for_lines(self, lines: int) -> int:
        """The pane's height with `lines` of text in view below its search bar."""
        layout = self._layout
        margins = layout.contentsMargins()
        text = (lines * self.text.fontMetrics().lineSpacing() + 2 * self.text.frameWidth()
                + 2 * int(self.text.document().documentMargin()))
        return margins.top() + margins.bottom() + layout.spacing() + self.search.sizeHint().height() + text

    def append_lines(self, lines: list[str]) -> None:
        self._recent.extend(lines)
        for line in lines:
            if len(line) > MAX_LINE_CHARS:
                line = f"{line[:MAX_LINE_CHARS]} … [line cut: {len(line) - MAX_LINE_CHARS} more characters]"
            self._pending.append(line)
            self._pending_chars += len(line)
        while len(self._pending) > 1 and (len(self._pending) > MAX_LINES or self._pending_chars > MAX_PENDING_CHARS):
            self._pending_chars -= len(self._pending.popleft())
            self._skipped += 1
        if not self._flush.isActive():
            self._flush.start()

    def flush(self) -> None:
        if self._skipped:
            self._pending.appendleft(f"… {self._skipped} line(s) skipped: the run wrote them faster than "
                                     "this log can show them")
        if self._pending:
            self.text.appendPlainText("\n".join(self._pending))
        self._pending.clear()
        self._pending_chars = self._skipped = 0

    def show_end(self, record: RunRecord) -> None:
        """Close the run's log with how it ended; a failure in red with its reason."""
        self.flush()
        color = readable(STATE_COLORS["done" if record.failure is None else "failed"]).name()
        self._append_html(f'<b style="color:{color}">── {html.escape(record.headline)}</b>')
        detail = record.failure.detail if record.failure is not None else ""
        if detail and record.failure is not None and record.failure.kind != "crash" and not self._shows(detail):
            self._append_html(f'<pre style="color:{color}">{html.escape(detail)}</pre>')
        bar = self.text.verticalScrollBar()
        bar.setValue(bar.maximum())

    def _shows(self, detail: str) -> bool:
        """Whether `detail` is the log's last lines: a failure's excerpt of the child's output
        (a script that failed, a probe that died) was just shown as it came."""
        lines = detail.split("\n")
        return len(lines) <= len(self._recent) and list(self._recent)[-len(lines):] == lines

    def show_record(self, record: RunRecord) -> None:
        """The stored tail of a finished run's log."""
        self.begin(f"{record.config.subject}: {record.config.summary()}")
        self.append_lines(list(record.stderr_tail))
        self.show_end(record)

    def focus_search(self) -> None:
        self.search.setFocus()
        self.search.selectAll()

    def find_next(self) -> None:
        self._find(QTextDocument.FindFlag(0))

    def find_previous(self) -> None:
        self._find(QTextDocument.FindFlag.FindBackward)

    def _find(self, flags: QTextDocument.FindFlag) -> None:
        needle = self.search.text()
        if not needle:
            return
        self.flush()
        if not self.text.find(needle, flags):
            # Wrap around once before saying there is no match.
            cursor = self.text.textCursor()
            cursor.movePosition(cursor.MoveOperation.End if flags else cursor.MoveOperation.Start)
            self.text.setTextCursor(cursor)
            if not self.text.find(needle, flags):
                self.match.setText("no match")
                return
        self.match.setText("")

    def _append_html(self, markup: str) -> None:
        self.text.appendHtml(markup)
