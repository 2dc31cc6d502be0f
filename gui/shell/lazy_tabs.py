"""LazyTabs: a tab widget whose pages are built the first time they are shown or asked for.

The window paints its first frame with only the page it shows built; a hidden page costs
nothing until the user opens it (or code asks for it), and is then the real page itself,
so `currentWidget()` and `setCurrentWidget(page)` behave as with any QTabWidget.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtWidgets import QTabWidget, QWidget

from ..widgets import wheel_guard


class LazyTabs(QTabWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._pages: dict[str, QWidget] = {}
        self._waiting: dict[str, tuple[QWidget, Callable[[], QWidget]]] = {}  # title: (placeholder, factory)
        # Connected first, so that every other listener of currentChanged sees the real page.
        self.currentChanged.connect(self._on_current_changed)

    def add_page(self, title: str, page: QWidget) -> None:
        self._pages[title] = page
        self.addTab(page, title)

    def add_lazy_page(self, title: str, factory: Callable[[], QWidget]) -> None:
        """A tab whose page `factory` builds when it is first shown or asked for."""
        placeholder = QWidget()
        self._waiting[title] = (placeholder, factory)
        self.addTab(placeholder, title)

    def page(self, title: str) -> QWidget:
        """The page of the tab `title`, built now if it was not yet."""
        if title in self._waiting:
            self._build(title)
        return self._pages[title]

    def is_built(self, title: str) -> bool:
        return title in self._pages

    def _on_current_changed(self, index: int) -> None:
        shown = self.widget(index)
        for title, (placeholder, _factory) in list(self._waiting.items()):
            if placeholder is shown:
                self._build(title)

    def _build(self, title: str) -> None:
        placeholder, factory = self._waiting.pop(title)
        with wheel_guard.paused(self):  # its filter would see each of the build's events
            page = factory()
            self._insert(title, page, placeholder)

    def _insert(self, title: str, page: QWidget, placeholder: QWidget) -> None:
        self._pages[title] = page
        index = self.indexOf(placeholder)
        current = self.currentIndex() == index
        # The swap is not a change of tab: the tab stays where it was, current or not.
        was_blocked = self.blockSignals(True)
        try:
            self.insertTab(index, page, title)
            self.removeTab(index + 1)
            if current:
                self.setCurrentIndex(index)
        finally:
            self.blockSignals(was_blocked)
        placeholder.deleteLater()
