"""The import X-ray in the run view: top modules with units, flags as warnings, and room
for it all in a 1024×700 window."""

from __future__ import annotations

from tflaunch.core.run import events as ev
from tflaunch.core.units import format_duration
from tflaunch.gui.run.import_breakdown import EMPTY, ImportBreakdown

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
    assert view.summary.text().startswith(
        "Import 2.00 s, own code: tensorflow 1.60 s, keras 300 ms, others 100 ms; native libraries 25 %")
    assert [row.name for row in view.bars.rows] == ["tensorflow", "tensorflow.python.ops", "keras.src.layers"]
    assert "tensorflow.python.ops 600 ms" in view.own_time.text()
    warnings = view.warnings.text()
    assert "TensorFlow's .pyc files are missing (90 % of 200" in warnings
    assert "-m compileall -q /env/lib/python3.11/site-packages/tensorflow" in warnings
    assert "were both imported" in warnings and "TF_ENABLE_ONEDNN_OPTS" not in warnings
    assert len(view.flags) == 2 and "TF_ENABLE_ONEDNN_OPTS" in view.notes.text()  # a note, not a warning
    view.show_record(None)  # no run: says so
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
    for label in (breakdown.summary, breakdown.warnings, breakdown.bars_caption, breakdown.own_time, breakdown.notes):
        assert label.geometry().right() <= viewport.width()
        assert label.height() >= label.heightForWidth(label.width()) - 1
    widest = max(bars.fontMetrics().horizontalAdvance(
        f"{format_duration(r.cumulative)} (self {format_duration(r.own)})") for r in bars.rows)
    assert widest <= 150 and bars.width() >= bars.minimumSizeHint().width()
    assert path.stat().st_size > 0


def test_the_review_image_carries_the_xray_and_its_flags(qtbot, tmp_path):
    from tflaunch.core.report.review import run_review
    from tflaunch.gui.review.review_image import write

    review = run_review(_record(SLOW))
    facts = dict(review.facts)
    assert facts["Import X-ray"] == ("Import 2.00 s, own code: tensorflow 1.60 s, keras 300 ms, others 100 ms; "
                                     "native libraries 25 %")
    assert [label for label, _ in review.facts].count("Import warning") == 2
    assert "Import X-ray" in review.markdown()
    out = tmp_path / "run.png"
    write(review, out)
    assert out.stat().st_size > 0


# -- what the pane says in each state, and figures that agree -------------------------------
def _live(config=None):
    from tflaunch.core.run.record import RunRecord
    from tflaunch.core.settings.config import LaunchConfig

    record = RunRecord(config or LaunchConfig(), launched_at=1000.0)
    record.apply(ev.Hello(1000.02, "spawn", 7, 0.02, "python"))
    record.apply(ev.PhaseEnd(1000.02, "spawn", 0.02, 10, 10))
    return record


def test_while_the_import_runs_the_pane_says_it_is_measuring_not_that_the_run_ended(qtbot):
    view = ImportBreakdown()
    qtbot.addWidget(view)
    record = _live()
    record.apply(ev.PhaseStart(1000.02, "import"))
    view.show_record(record)
    assert "Measuring" in view.summary.text() and "ended" not in view.summary.text()
    record.apply(ev.PhaseEnd(1002.02, "import", 2.0, 100, 100))  # the X-ray is folded just after
    view.show_record(record)
    assert "Measuring" in view.summary.text()
    record.apply(ev.ImportsMeasured(1002.05, "import", ev.checked_imports(SLOW)))
    view.show_record(record)
    assert view.summary.text().startswith("Import 2.00 s") and view.bars.isVisibleTo(view)


def test_a_program_run_says_why_it_has_no_xray_and_how_to_get_one(qtbot):
    from tflaunch.core.settings.config import LaunchConfig

    view = ImportBreakdown()
    qtbot.addWidget(view)
    record = _live(LaunchConfig(program=("python", "train.py")))
    record.apply(ev.PhaseStart(1000.02, "import"))
    record.apply(ev.PhaseEnd(1001.81, "import", 1.79, 100, 100))
    record.finish(0)
    view.show_record(record)
    text = view.summary.text()
    assert "program" in text and "program's import took 1.79 s" in text
    assert "tflaunch bench --imports --model sample:mlp" in text and "ended before" not in text
    assert view.bars.isHidden()


def test_a_run_without_an_xray_says_which_of_the_reasons_it_is(qtbot):
    view = ImportBreakdown()
    qtbot.addWidget(view)
    failed = _live()
    failed.apply(ev.PhaseStart(1000.02, "import"))
    failed.finish(1)
    view.show_record(failed)
    assert "ended before its import finished" in view.summary.text()
    view.show_record(finished_record())  # imported, finished, no X-ray: an older tflaunch
    assert "older tflaunch" in view.summary.text() and "ended before" not in view.summary.text()


def test_the_summary_and_the_rows_say_which_time_each_figure_is(qtbot):
    # Measured: summary "tensorflow 1.48 s" (its modules' own code) beside a row "tensorflow
    # 1.79 s" (the tensorflow module and all it imported, the whole import): both labelled.
    view = ImportBreakdown()
    qtbot.addWidget(view)
    view.show_record(_record(SLOW))
    summary = view.summary.text()
    assert "own code" in summary and "others 100 ms" in summary  # 1.60 + 0.30 + 0.10 = 2.00
    caption = view.bars_caption.text()
    assert "what it imported" in caption and "whole import" in caption
    assert view.bars.rows[0].cumulative == SLOW["total"]


def test_an_import_phase_longer_than_its_modules_says_where_the_rest_went(qtbot):
    view = ImportBreakdown()
    qtbot.addWidget(view)
    record = _live()
    record.apply(ev.PhaseStart(1000.02, "import"))
    record.apply(ev.PhaseEnd(1002.52, "import", 2.5, 100, 100))
    record.apply(ev.ImportsMeasured(1002.55, "import", ev.checked_imports(SLOW)))
    view.show_record(record)
    assert "Import phase 2.50 s, of which module imports 2.00 s" in view.summary.text()
    assert "500 ms" in view.summary.text()
