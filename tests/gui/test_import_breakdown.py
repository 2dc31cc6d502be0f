"""The import X-ray in the run view: top modules with units, flags as warnings, and room
for it all in a 1024×700 window."""

from __future__ import annotations

from tflaunch.core.run import events as ev
from tflaunch.core.units import format_duration
from tflaunch.gui.import_breakdown import EMPTY, ImportBreakdown

from ..builders import finished_record
from ..test_import_xray import XRAY
from .test_theme_and_sizes import fit

SLOW = {**XRAY, "keras": {"keras": "3.15.1", "tf_keras": "2.21.0"}, "onednn": None,
        "compiled": {"tensorflow": {"modules": 1600, "checked": 200, "written": 0, "uncached": 180,
                                    "folder": "/env/lib/python3.11/site-packages/tensorflow"}}}


def _record(imports):
    record = finished_record()
    record.apply(ev.ImportsMeasured(1000.5, "import", ev.checked_imports(imports)))
    return record


def test_the_breakdown_shows_top_modules_with_units_and_flags(qtbot):
    view = ImportBreakdown()
    qtbot.addWidget(view)
    view.show_record(_record(SLOW))
    assert view.summary.text().startswith("Import 2.00 s: tensorflow 1.60 s, keras 300 ms, native libraries 25 %")
    assert [row["name"] for row in view.bars.rows] == ["tensorflow", "tensorflow.python.ops", "keras.src.layers"]
    assert "tensorflow.python.ops 600 ms" in view.own_time.text()
    warnings = view.warnings.text()
    assert "TensorFlow's .pyc files are missing (90 % of 200" in warnings
    assert "-m compileall -q /env/lib/python3.11/site-packages/tensorflow" in warnings
    assert "were both imported" in warnings and "TF_ENABLE_ONEDNN_OPTS" not in warnings
    assert len(view.flags) == 2 and "TF_ENABLE_ONEDNN_OPTS" in view.notes.text()  # a note, not a warning
    view.show_record(finished_record())  # a run without an X-ray says why
    assert view.summary.text() == EMPTY and view.bars.isHidden() and view.warnings.isHidden()


def test_the_imports_tab_fits_a_small_window(qtbot, make_window, screenshot):
    window = make_window()
    fit(qtbot, window, 1024, 700)
    run_view = window.run_view
    run_view.show_record(_record(SLOW))
    assert run_view.below.tabText(1) == "Imports" and "2 warnings" in run_view.below.tabToolTip(1)
    run_view.below.setCurrentWidget(run_view.imports)
    qtbot.waitUntil(run_view.imports.bars.isVisible)
    breakdown, bars = run_view.imports, run_view.imports.bars
    path = screenshot(window, "run-imports-1024x700")
    qtbot.waitUntil(lambda: window.frameGeometry().height() <= 700)
    # Nothing cut at the right: the labels wrap inside the view, the bars' figures fit.
    viewport = breakdown.findChild(type(breakdown.layout().itemAt(0).widget())).viewport()
    for label in (breakdown.summary, breakdown.warnings, breakdown.own_time, breakdown.notes):
        assert label.geometry().right() <= viewport.width()
        assert label.height() >= label.heightForWidth(label.width()) - 1
    widest = max(bars.fontMetrics().horizontalAdvance(
        f"{format_duration(r['cumulative'])} (self {format_duration(r['self'])})") for r in bars.rows)
    assert widest <= 150 and bars.width() >= bars.minimumSizeHint().width()
    assert path.stat().st_size > 0


def test_the_review_image_carries_the_xray_and_its_flags(qtbot, tmp_path):
    from tflaunch.core.report.review import run_review
    from tflaunch.gui.review_image import write

    review = run_review(_record(SLOW))
    facts = dict(review.facts)
    assert facts["Import X-ray"] == "Import 2.00 s: tensorflow 1.60 s, keras 300 ms, native libraries 25 %"
    assert [label for label, _ in review.facts].count("Import warning") == 2
    assert "Import X-ray" in review.markdown()
    out = tmp_path / "run.png"
    write(review, out)
    assert out.stat().st_size > 0
