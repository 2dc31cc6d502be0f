"""Export review image… and Copy review image: a review of whatever the current tab shows."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QApplication, QMainWindow

from tflaunch.core.report import exports
from tflaunch.core.report.review import Review

from ..widgets import file_dialogs
from .review_image import render_image, write

# File dialog filters: (filter text, format, scale), from core's one table of formats.
FILTERS = tuple((text, fmt.name, scale) for text, fmt, scale in exports.file_filters(exports.REVIEW))


def current_review(window: QMainWindow) -> Review | None:
    """The run, comparison, sweep or profile on the current tab, or None if it shows none."""
    return window.current_review()  # type: ignore[attr-defined, no-any-return]


def export_review(window: QMainWindow) -> None:
    review = current_review(window)
    if review is None:
        window.statusBar().showMessage("Nothing to export here: show a finished run, a comparison or a sweep first.")
        return
    path, chosen = file_dialogs.save_file(window, "review", "Export review", f"{review.file_stem}.png",
                                          ";;".join(f for f, _, _ in FILTERS), FILTERS[0][0])
    if path:
        save_review(window, review, *target(Path(path), chosen))


def target(path: Path, chosen: str) -> tuple[Path, str, int]:
    """Where and how to write: the format of the chosen filter, unless the name typed says
    another (report.svg is an SVG whatever the filter); a name without one gets the filter's
    extension."""
    _, fmt, scale = next((f for f in FILTERS if f[0] == chosen), FILTERS[0])
    typed = path.suffix.lstrip(".").lower()
    if typed not in {f for _, f, _ in FILTERS}:  # none, or a dot in the name (review-v1.2)
        return path.with_name(f"{path.name}.{fmt}"), fmt, scale
    return (path, fmt, scale) if typed == fmt else (path, typed, 1)


def save_review(window: QMainWindow, review: Review, path: Path, fmt: str, scale: int) -> None:
    try:
        write(review, path, fmt, scale)
    except (OSError, ValueError) as exc:
        window.statusBar().showMessage(f"Review not written to {path}: {exc}. Choose another folder or name.")
        return
    window.statusBar().showMessage(f"Review written to {path}")


def copy_review(window: QMainWindow) -> None:
    review = current_review(window)
    if review is None:
        window.statusBar().showMessage("Nothing to copy here: show a finished run, a comparison or a sweep first.")
        return
    QApplication.clipboard().setImage(render_image(review))
    window.statusBar().showMessage("Review image copied: paste it into a document or a chat.")
