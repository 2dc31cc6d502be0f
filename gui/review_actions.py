"""Export review image… and Copy review image: a review of whatever the current tab shows."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QApplication, QFileDialog, QMainWindow

from tflaunch.core.review import Review, comparison_review, profile_review, run_review, sweep_review

from .review_image import render_image, write

# File dialog filters: (filter text, format, scale).
FILTERS = (("PNG image, 1600×900 (*.png)", "png", 1), ("PNG image at 2×, 3200×1800 (*.png)", "png", 2),
           ("SVG vector image (*.svg)", "svg", 1), ("Markdown (*.md)", "md", 1), ("CSV (*.csv)", "csv", 1))


def current_review(window: QMainWindow) -> Review | None:
    """The run, comparison, sweep or profile on the current tab, or None if it shows none."""
    tab = window.tabs.currentWidget()
    if tab is window.compare_view and len(window.compare_view.runs) >= 2:
        return comparison_review(window.compare_view.runs, max(window.compare_view.baseline.currentIndex(), 0))
    if tab is window.sweep_view and window.sweeper.sweep is not None and window.sweeper.sweep.trials_run:
        return sweep_review(window.sweeper.sweep, window.run_view.record, window.sweeper.sweep_id)
    if tab is window.history_view and window.history is not None:
        records = [window.history.load(i) for i in window.history_view.selected_ids()]
        if len(records) == 1:
            return run_review(records[0])
        if len(records) > 1:
            return comparison_review(records)
    if tab is window.profiles_view:
        entries = window.profiles_view.usable_entries()
        if len(entries) == 1:
            return profile_review(entries[0].name, entries[0].profile.evidence, entries[0].profile.config)
    record = window.run_view.record
    if tab is window.run_view and record is not None and record.finished_at is not None:
        return run_review(record)
    return None


def export_review(window: QMainWindow) -> None:
    review = current_review(window)
    if review is None:
        window.statusBar().showMessage("Nothing to export here: show a finished run, a comparison or a sweep first.")
        return
    path, chosen = QFileDialog.getSaveFileName(window, "Export review", "review.png", ";;".join(f for f, _, _ in FILTERS))
    if path:
        _, fmt, scale = next((f for f in FILTERS if f[0] == chosen), FILTERS[0])
        save_review(window, review, Path(path), fmt, scale)


def save_review(window: QMainWindow, review: Review, path: Path, fmt: str, scale: int) -> None:
    try:
        write(review, path, fmt, scale)
    except (OSError, ValueError) as exc:
        window.statusBar().showMessage(f"Review not written: {exc}")
        return
    window.statusBar().showMessage(f"Review written to {path}")


def copy_review(window: QMainWindow) -> None:
    review = current_review(window)
    if review is None:
        window.statusBar().showMessage("Nothing to copy here: show a finished run, a comparison or a sweep first.")
        return
    QApplication.clipboard().setImage(render_image(review))
    window.statusBar().showMessage("Review image copied: paste it into a document or a chat.")
