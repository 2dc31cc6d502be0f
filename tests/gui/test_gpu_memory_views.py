"""GPU memory in the views: Compare's rows per GPU, GPU curves in review images, and the
Sweep tab's per-count table of an instances sweep (fake children, a fake NVML)."""

from __future__ import annotations

from PySide6.QtGui import QColor

from tflaunch.core.report.review import comparison_review, run_review
from tflaunch.core.run.gpus.nvml import GpuMemorySampler
from tflaunch.core.settings.config import LaunchConfig
from tflaunch.core.units import MIB, format_bytes
from tflaunch.gui.compare.compare_view import CompareView
from tflaunch.gui.plots.charts import run_color
from tflaunch.gui.review.review_image import render_image
from tflaunch.gui.widgets.palette import GPU_COLORS

from ..builders import finished_record
from ..faults.children import fake_python as scripted_python
from ..test_gpu_history import GIB, gpu_record
from ..test_instances import CROWDED_OOM, FakeNvml

SWEEP_MS = 60_000


def test_compare_shows_a_memory_peak_row_per_gpu_with_units(qtbot):
    view = CompareView()
    qtbot.addWidget(view)
    view.show_runs([gpu_record(), finished_record(at=2000.0)])
    table = view.phases
    labels = [table.verticalHeaderItem(r).text() for r in range(table.rowCount())]
    assert labels[-4:] == ["Peak memory", "GPU 0 memory peak", "GPU 0 TensorFlow allocator peak", "GPU 1 memory peak"]
    row = labels.index("GPU 1 memory peak")
    assert [table.item(row, c).text() for c in range(2)] == [format_bytes(2 * GIB), "–"]
    view.show_runs([finished_record(), finished_record(at=2000.0)])
    assert table.verticalHeaderItem(table.rowCount() - 1).text() == "Peak memory", "no GPU rows without GPUs"


def colour_pixels(image, colour: str, area) -> int:
    """Pixels within `area` (x0, y0, x1, y1) close to `colour`: how much of a curve was drawn."""
    want = QColor(colour)
    count = 0
    x0, y0, x1, y1 = area
    for y in range(y0, y1, 2):
        for x in range(x0, x1, 2):
            got = image.pixelColor(x, y)
            if abs(got.red() - want.red()) + abs(got.green() - want.green()) + abs(got.blue() - want.blue()) < 60:
                count += 1
    return count


MEMORY_AREA = (40, 500, 1000, 860)  # the review image's bottom left: the memory chart


def test_review_images_draw_gpu_curves(tmp_path):
    with_gpu, without = render_image(run_review(gpu_record())), render_image(run_review(finished_record()))
    with_gpu.save(str(tmp_path / "run-review-gpu.png"))
    assert colour_pixels(with_gpu, GPU_COLORS[0], MEMORY_AREA) > 30, "GPU 0's curve in its colour"
    assert colour_pixels(with_gpu, GPU_COLORS[0], MEMORY_AREA) > 5 * colour_pixels(without, GPU_COLORS[0], MEMORY_AREA)
    runs = [gpu_record(), finished_record(at=2000.0)]
    runs[1].gpu_samples = [(0.2, {0: 50 * MIB}), (1.2, {0: 900 * MIB})]
    compared = render_image(comparison_review(runs))
    compared.save(str(tmp_path / "compare-review-gpu.png"))
    # The same chart's scale (run 1's GPU 1 is the top of both) without run 2's GPU samples.
    plain = [gpu_record(), finished_record(at=2000.0)]
    area = (40, 500, 600, 860)
    assert colour_pixels(compared, run_color(1), area) > colour_pixels(render_image(comparison_review(plain)),
                                                                         run_color(1), area) + 20, \
        "the second run's GPU curve beside its RSS, in its colour"


def test_an_instances_sweep_in_the_app_shows_the_per_count_table(qtbot, window, tmp_path, screenshot):
    window.use_config(LaunchConfig(model="sample:mlp", steady=1, python=scripted_python(tmp_path, CROWDED_OOM)))
    view = window.sweep_view
    view.instances.setText("1,2")
    view.repeat.setValue(1)
    view.warmup.setValue(0)
    assert "2 settings" in view.estimate.text() and "1 or 2 probes at once" in view.estimate.text(), \
        "several counts vary like a setting, with nothing else ticked"
    window.gpu_sampler = GpuMemorySampler(FakeNvml())
    with qtbot.waitSignal(window.sweeper.finished, timeout=SWEEP_MS):
        view.start_button.click()
    table = view.instance_table
    assert table.isVisible() and table.rowCount() == 2
    cells = [[table.item(r, c).text() for c in range(table.columnCount())] for r in range(2)]
    assert cells[0][:2] == ["instances=1 (baseline)", "1"] and cells[0][-1] == "yes"
    assert cells[1][:2] == ["instances=2", "2"] and cells[1][-1] == "no: out of memory"
    assert cells[1][3:5] == ["1.00 GiB (GPU 0)", "2.00 GiB (GPU 0)"], "per process, and both on the card"
    assert "RESOURCE_EXHAUSTED" in table.item(1, 6).toolTip()
    screenshot(window, "sweep-instances")
    view.instances.setText("1,x")
    assert "Instances: 'x' is not a count" in view.estimate.text()
