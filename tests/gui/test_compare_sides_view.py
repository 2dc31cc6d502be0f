"""The Compare tab sets side against side: n and the range on every side, a difference
coloured only where it is more than the noise, and a way to measure the settings properly
when a side has too few runs."""

from __future__ import annotations

from PySide6.QtCore import Qt

from tflaunch.core.settings.config import LaunchConfig
from tflaunch.gui.compare.compare_view import CompareView

from ..compare_builders import side


def cells(view: CompareView) -> dict[str, list[str]]:
    table = view.phases
    return {table.verticalHeaderItem(r).text(): [table.item(r, c).text() for c in range(table.columnCount())]
            for r in range(table.rowCount())}


def coloured(view: CompareView) -> list[str]:
    """The cells whose text is coloured as a win or a loss."""
    table = view.phases
    return [table.item(r, c).text() for r in range(table.rowCount()) for c in range(table.columnCount())
            if table.item(r, c).foreground().style() != Qt.BrushStyle.NoBrush]


def test_one_run_a_side_is_said_plainly_and_nothing_is_coloured(qtbot):
    view = CompareView()
    qtbot.addWidget(view)
    view.show_runs(side([2.0]) + side([1.001], intra=2, first_id=2))
    shown = cells(view)
    assert shown["Time to ready"] == ["2.02 s (1 run: no spread)", "1.02 s (1 run: no spread)"]
    assert not coloured(view), "a difference between two single runs is not a result"
    assert view.verdict.text() == "No verdict: 1 run each: no spread; measure 3+ to compare."
    # Said once, in the headline (under it, seen under Xvfb, the same sentence again), then what to do.
    assert not view.notice.isHidden() and view.notice.text().startswith("Sweep these settings measures each side")
    assert view.phases.item(0, 1).toolTip().startswith("Fewer than 3 runs on a side")


def test_sides_of_three_runs_apart_are_coloured_and_overlapping_ones_are_not(qtbot):
    view = CompareView()
    qtbot.addWidget(view)
    view.show_runs(side([2.0, 2.01, 2.02]) + side([1.0, 1.01, 1.02], intra=2, first_id=4))
    assert [view.phases.horizontalHeaderItem(c).text() for c in range(2)] == ["#1, #2, #3 (baseline)", "#4, #5, #6"]
    assert cells(view)["Time to ready"] == ["2.03 s (2.02 s–2.04 s, n=3)", "1.03 s (1.02 s–1.04 s, n=3): −1.00 s, "
                                            "1.97× faster"]
    assert "1.03 s (1.02 s–1.04 s, n=3): −1.00 s, 1.97× faster" in coloured(view)
    assert view.notice.isHidden()
    view.show_runs(side([1.0, 1.001, 1.002]) + side([1.0015, 1.0025, 1.0035], intra=2, first_id=4))
    ready = cells(view)["Time to ready"][1]
    assert ready.endswith("within the noise (1.5 ms slower)") and not coloured(view)


def test_sweep_these_settings_hands_the_settings_compared_to_the_sweep(qtbot):
    view = CompareView()
    qtbot.addWidget(view)
    runs = side([2.0]) + side([1.0], intra=2, first_id=2) + side([1.5], intra=4, first_id=3)
    view.show_runs(runs, baseline=1)  # a run of the intra=2 side as the baseline
    assert view.sweep.isEnabled() and view.sweep.text() == "Sweep these settings…"
    with qtbot.waitSignal(view.sweep_requested) as sent:
        view.sweep.click()
    base, others = sent.args
    assert isinstance(base, LaunchConfig) and base.intra == 2
    assert [c.intra for c in others] == [0, 4]
    view.show_runs(side([2.0]))
    assert not view.sweep.isEnabled()


def test_sweep_these_settings_prefills_the_sweep_tab_in_the_window(qtbot, make_window):
    """The Compare tab's offer, in the window: the baseline's settings in the panel, the
    setting that differs as the sweep's only axis, and the Sweep tab shown, ready to start."""
    window = make_window()
    window.tabs.setCurrentWidget(window.compare_view)
    window.compare_view.show_runs(side([2.0]) + side([1.0], intra=2, first_id=2))
    window.compare_view.sweep.click()
    assert window.tabs.currentWidget() is window.sweep_view
    form = window.sweep_view.form
    checked = {axis: values.text() for axis, (box, values) in form.axes.items() if box.isChecked()}
    assert checked == {"intra": "0,2"} or checked == {"intra": "default,2"}, checked
    assert window.panel.config().intra == 0
    assert "Prefilled from the comparison: intra" in window.sweep_view.status.text()


def test_a_side_measured_in_one_block_is_not_crowned_and_the_sweep_is_offered(qtbot):
    view = CompareView()
    qtbot.addWidget(view)
    view.show_runs(side([2.0, 2.01, 2.02]) + side([1.0, 1.01, 1.02], intra=2, first_id=4, at=2000.0))
    assert view.verdict.text().startswith("No winner yet:") and "as fast" not in view.verdict.text()
    assert not view.notice.isHidden() and "B was measured in one block" in view.notice.text()
    assert view.sweep.isEnabled()
    # Interleaved, the same figures crown B.
    view.show_runs(side([2.0, 2.01, 2.02]) + side([1.0, 1.01, 1.02], intra=2, first_id=4, at=1000.5))
    assert view.verdict.text().startswith("Fastest to ready:") and view.notice.isHidden()


def test_a_warm_script_and_a_program_never_join_a_model_side(qtbot):
    from ..test_compare_subjects import program_run, warm_script

    view = CompareView()
    qtbot.addWidget(view)
    view.show_runs([warm_script(999.0, 9), *side([1.0, 1.01]), program_run(1003.0, 7)])
    assert [view.phases.horizontalHeaderItem(c).text() for c in range(3)] == ["#9 (warm) (baseline)", "#1, #2", "#7"]
    peaks = cells(view)["Peak memory"]
    assert "n=" not in peaks[0] and "n=3" not in peaks[1], peaks
    labels = [view.baseline.itemText(i) for i in range(view.baseline.count())]
    # Both programs: the one launched warm ran to its exit, so the other names where it stopped.
    assert labels[2] == "#7 python train.py --name 'two words' until=first_step", labels
    assert not any("model=" in label or "program=" in label or "workdir=" in label for label in labels), labels


def test_a_failed_run_says_how_it_ended_not_a_bare_dash(qtbot):
    from ..builders import record_through

    failed = record_through(["import", "devices"], launched=1003.0)
    failed.config = failed.config.replace(intra=2)
    failed.finish(1)
    failed.history_id = 4
    view = CompareView()
    qtbot.addWidget(view)
    view.show_runs(side([2.0, 2.01, 2.02]) + [failed])
    assert cells(view)["Time to ready"][1] == "– (Failed in Load)"
