"""The waterfall's duration labels stay inside the plot when its width changes after the
run is drawn (seen under Xvfb at 1024x700: "1.36 s" read "1.36", "210 ms in all" lost its end)."""

from __future__ import annotations

from tflaunch.gui.plots.waterfall import Waterfall

SPANS = {"spawn": (0.0, 0.13), "import": (0.15, 3.83), "build": (4.0, 0.19), "first_step": (4.2, 1.36)}


def _outside(plot: Waterfall) -> list[str]:
    box = plot.getPlotItem().getViewBox()
    right = box.sceneBoundingRect().right()
    return [label.toPlainText() for label in plot.labels
            if label.isVisible() and label.sceneBoundingRect().right() > right + 1]


def test_labels_fit_after_the_plot_narrows(qtbot):
    plot = Waterfall()
    qtbot.addWidget(plot)
    plot.resize(700, 240)
    plot.show()
    qtbot.waitExposed(plot)
    plot.show_spans(SPANS, gaps=[(3.98, 0.02), (4.19, 0.01)])
    qtbot.wait(20)
    assert not _outside(plot), _outside(plot)
    plot.resize(280, 240)
    qtbot.waitUntil(lambda: plot.getPlotItem().getViewBox().width() < 250)
    qtbot.wait(20)
    assert not _outside(plot), _outside(plot)


def _anatomy_record():
    from tflaunch.core.run.anatomy import checked_anatomy

    from ..builders import finished_record

    record = finished_record(ready_s=1.2)
    record.anatomy = checked_anatomy({"window": 1.2, "phase": "first", "parts": [
        {"part": "tracing", "seconds": 0.9, "names": []}, {"part": "variables", "seconds": 0.1, "names": []}],
        "not_attributed": 0.2})
    return record


def test_a_narrow_chart_names_the_anatomy_s_largest_part_only_where_the_bars_keep_their_room(qtbot):
    """Seen under Xvfb at 1024x700: "1.71 s · tracing 1.39 s" after an anatomy run's first step
    stretched a 280 px chart's axis to 35 s for a 7 s run, its bars squeezed into the first fifth."""
    plot = Waterfall()
    qtbot.addWidget(plot)
    plot.resize(900, 240)
    plot.show()
    qtbot.waitExposed(plot)
    record = _anatomy_record()
    plot.show_record(record)
    qtbot.wait(20)
    end = max(s + d for s, d in record.offsets().values())
    named = [label.toPlainText() for label in plot.labels if "· tracing" in label.toPlainText()]
    assert named and plot.getPlotItem().getViewBox().viewRange()[0][1] <= 2 * end
    plot.resize(260, 240)
    qtbot.waitUntil(lambda: plot.getPlotItem().getViewBox().width() < 200)
    qtbot.wait(20)
    assert not [label for label in plot.labels if "· tracing" in label.toPlainText()]
    assert plot.getPlotItem().getViewBox().viewRange()[0][1] <= 3 * end and not _outside(plot), _outside(plot)
    assert plot.part_names  # the parts' bars stay


def _shown(qtbot, width: int) -> Waterfall:
    plot = Waterfall()
    qtbot.addWidget(plot)
    plot.resize(width, 240)
    plot.show()
    qtbot.waitExposed(plot)
    return plot


def test_a_live_narrow_chart_leaves_a_long_progress_note_to_the_phase_table(qtbot):
    """Seen under Xvfb at 1024x700: a program's steady steps running to its exit, "93.6 ms ·
    20/120 steps" on a 280 px chart, stretched the live axis to 28 s at 5 s into the run (and a
    live axis never shrinks), the bars in its first fifth. The note goes where it would
    stretch the axis by half again; the phase table's row says it."""
    from tflaunch.core.run import events as ev

    from ..builders import record_through

    record = record_through(["import", "first_step"])
    start = record.launched_at + 2.15
    record.apply(ev.PhaseStart(start, "steady"))
    record.phases["steady"].progress = (20, 120)
    plot = _shown(qtbot, 280)
    plot.show_live(record, start + 0.1)
    qtbot.wait(20)
    plot.show_live(record, start + 0.2)
    end = 2.15 + 0.2
    # (a live axis ends on a round figure, 1, 2 or 5 times a power of ten: up to 2.5 times its need)
    assert plot.getPlotItem().getViewBox().viewRange()[0][1] <= 2.5 * end, plot.getPlotItem().getViewBox().viewRange()
    assert not _outside(plot), _outside(plot)
    wide = _shown(qtbot, 900)
    wide.show_live(record, start + 0.2)
    assert any("20/120 steps" in label.toPlainText() for label in wide.labels), "with room, the note is there"
