"""Live views of a run: memory and waterfall from the first sample, sampling off the GUI
thread, GPU memory per device, band labels inside their bands, steady progress, the log."""

from __future__ import annotations

import sys
import threading
import time
from types import SimpleNamespace

import psutil
import pytest
from PySide6.QtCore import QPointF, QRectF

from tflaunch.core.run import events as ev
from tflaunch.core.run.gpus.nvml import Gpu, GpuInventory, GpuMemorySampler
from tflaunch.core.run.record import PhaseState, RunStatus
from tflaunch.core.settings.config import LaunchConfig
from tflaunch.core.units import MIB, format_bytes
from tflaunch.gui.adapters.sampler_thread import SamplerThread
from tflaunch.gui.plots.memory_plot import MemoryPlot
from tflaunch.gui.run.phase_table import rows_of
from tflaunch.gui.widgets.palette import RSS_COLOR

from ..builders import finished_record
from ..faults.children import fake_python

RUN_MS = 30_000
# A child that reports spawn at once (before any sample can come), then stays in load.
IN_LOAD = "start_until('load')\ntime.sleep(60)"


def fake_config(python: str, **settings) -> LaunchConfig:
    return LaunchConfig(model="sample:mlp", python=python, steady=3, timeout=60, **settings)


def sampler_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("tflaunch-sampler-")]


def cancel(qtbot, window):
    with qtbot.waitSignal(window.run_finished, timeout=RUN_MS) as finished:
        window.cancel_run()
    return finished.args[0]


def x_range(plot) -> tuple[float, float]:
    return tuple(plot.getPlotItem().getViewBox().viewRange()[0])


def test_the_live_graph_and_waterfall_follow_a_run_from_its_first_sample(qtbot, window, tmp_path):
    window.use_config(fake_config(fake_python(tmp_path, IN_LOAD)))
    window.start_run()
    memory, waterfall = window.run_view.memory, window.run_view.waterfall
    qtbot.waitUntil(lambda: len(memory.sample_times) >= 3
                    and (p := window.run_view.record.phase("load")) is not None and p.started is not None,
                    timeout=RUN_MS)
    qtbot.waitUntil(lambda: "load" in waterfall.bar_names, timeout=RUN_MS)
    record = window.run_view.record
    assert record.phases["spawn"].state is PhaseState.DONE, "spawn ended before the samples came"
    low, high = x_range(memory)
    elapsed = time.time() - record.launched_at
    assert low <= 0 and high >= memory.sample_times.max(), "every sample so far is in view"
    assert high <= max(1.0, 2 * elapsed), "the axis fits the run so far (a step above it), not a fixed 5 s"
    y_low, y_high = memory.getPlotItem().getViewBox().viewRange()[1]
    assert y_high >= record.samples[-1][1] / MIB > y_low
    assert sampler_threads(), "memory is read on a thread of its own"
    # The running phase is a bar that grows with the clock.
    width = waterfall._bars.opts["width"][waterfall.bar_names.index("load")]
    qtbot.waitUntil(lambda: waterfall._bars.opts["width"][waterfall.bar_names.index("load")] > width + 0.05,
                    timeout=RUN_MS)
    bars = waterfall._bars.opts
    load = waterfall.bar_names.index("load")
    assert x_range(waterfall)[1] >= bars["x0"][load] + bars["width"][load], "the growing bar is in view"
    assert "load" in memory.band_names, "the running phase is a band already"
    assert cancel(qtbot, window).status is RunStatus.CANCELLED
    assert not sampler_threads(), "the sampler thread is joined when the run ends"


def test_closing_the_window_during_a_run_ends_its_sampler(qtbot, window, tmp_path):
    window.use_config(fake_config(fake_python(tmp_path, IN_LOAD)))
    window.start_run()
    qtbot.waitUntil(lambda: len(window.run_view.memory.sample_times) >= 1, timeout=RUN_MS)
    assert sampler_threads()
    window.close()
    assert not sampler_threads(), "stopped and joined as the window closes, not left sampling a dead child"


def test_the_session_gets_every_sample_the_graph_draws(qtbot, window, tmp_path):
    window.use_config(fake_config(fake_python(tmp_path, "start_until('load')\ntime.sleep(0.6)\nsucceed()")))
    with qtbot.waitSignal(window.run_finished, timeout=RUN_MS) as finished:
        window.start_run()
    record = finished.args[0]
    assert record.status is RunStatus.OK, record.headline
    assert len(record.samples) >= 5
    assert [t for t, _ in record.samples] == pytest.approx(list(window.run_view.memory.sample_times))
    assert not sampler_threads()


def test_sampling_starts_with_the_child_not_when_the_busy_gui_hears_it_started(qtbot, window, tmp_path):
    """The child's `started` signal waits for the event loop; a GUI thread busy (or a loaded
    machine) held it for 0.7 s, and a short run had 3 samples. Sampled from the fork on."""
    window.use_config(fake_config(fake_python(tmp_path, IN_LOAD)))
    window.start_run()
    time.sleep(0.8)  # the GUI thread busy: no event is handled meanwhile
    busy_until = time.time() - window.runner.record.launched_at
    qtbot.waitUntil(lambda: len(window.runner.record.samples) >= 1, timeout=RUN_MS)
    record = cancel(qtbot, window)
    assert record.samples[0][0] < busy_until, "no sample was taken while the GUI thread was busy"
    assert not sampler_threads()


def test_the_live_axes_grow_in_steps_and_keep_every_sample_in_view(qtbot):
    plot = MemoryPlot()
    qtbot.addWidget(plot)
    plot.resize(800, 300)
    plot.clear_run()
    changes = []
    plot.getPlotItem().getViewBox().sigRangeChanged.connect(lambda *_: changes.append(1))
    for i in range(150):  # 6 s at 25 Hz, memory rising to 1.5 GiB
        t, rss = 0.05 + i * 0.04, (40 + i * 10) * MIB
        plot.add_samples([(t, rss, {})])
        (x0, x1), (y0, y1) = plot.getPlotItem().getViewBox().viewRange()
        assert x0 <= 0 < t <= x1 and 0 <= y0 and rss / MIB <= y1, (i, x1, y1)
    assert len(changes) <= 15, "the axes change in steps (13 here), not with every one of 150 samples"
    assert plot.samples_shown == 150


def test_steady_state_shows_the_calls_done(qtbot, window, tmp_path):
    body = "start_until('steady')\nemit('progress', 'steady', done=37, total=100)\ntime.sleep(60)"
    window.use_config(fake_config(fake_python(tmp_path, body)))
    window.start_run()
    table, waterfall = window.run_view.phases, window.run_view.waterfall
    qtbot.waitUntil(lambda: "steady" in rows_of(window.run_view.record), timeout=RUN_MS)
    state = table.item(rows_of(window.run_view.record).index("steady"), 1)
    qtbot.waitUntil(lambda: state.text().startswith("37/100"), timeout=RUN_MS)
    assert "37 of 100 calls" in state.toolTip()
    qtbot.waitUntil(lambda: any(label.isVisible() and "37/100 calls" in label.toPlainText()
                                for label in waterfall.labels), timeout=RUN_MS)
    cancel(qtbot, window)
    assert table.item(rows_of(window.run_view.record).index("steady"), 1).text() == "cancelled"


def test_the_probe_reports_steady_progress_between_timed_calls():
    from tflaunch.core.probe.model.inference import steady_latency

    fake_tf = SimpleNamespace(nest=SimpleNamespace(map_structure=lambda f, x: x))
    told: list[tuple[int, int]] = []
    latency = steady_latency(fake_tf, lambda packed: time.sleep(0.1), None, 6, lambda d, t: told.append((d, t)))
    assert latency["n"] == 6
    assert told[0] == (0, 6) and len(told) >= 2, told
    assert all(0 <= d < 6 and t == 6 for d, t in told), "the end is the phase's own event"
    parser = ev.EventParser()
    assert parser.parse(ev.encode("progress", "steady", 1e9, done=37, total=100)) == ev.Progress(1e9, "steady", 37, 100)
    assert parser.parse(ev.encode("progress", "steady", 1e9, done=101, total=100)) is None
    assert parser.malformed == 1


class FakeNvml:
    """NVML as the sampler calls it: two GPUs, on which every process of this test's tree
    holds memory that grows with time (GPU 1 twice GPU 0's)."""

    class NVMLError(Exception):
        pass

    def __init__(self) -> None:
        self.t0 = time.monotonic()

    def nvmlInit(self):  # noqa: N802 (NVML's names)
        pass

    def nvmlShutdown(self):  # noqa: N802 (NVML's names)
        pass

    def nvmlDeviceGetCount(self):  # noqa: N802 (NVML's names)
        return 2

    def nvmlDeviceGetHandleByIndex(self, i):  # noqa: N802 (NVML's names)
        return i

    def nvmlDeviceGetComputeRunningProcesses(self, handle):  # noqa: N802 (NVML's names)
        used = int((100 + 1000 * (time.monotonic() - self.t0)) * MIB) * (handle + 1)
        return [SimpleNamespace(pid=p.pid, usedGpuMemory=used) for p in psutil.Process().children(recursive=True)]


TWO_GPUS = GpuInventory((Gpu(0, "NVIDIA H100", 80 << 30), Gpu(1, "NVIDIA H100", 80 << 30)), "575.51", None)
GPU_RESULT = """start_until('')
time.sleep(0.5)
emit('result', 'steady', environment={'tensorflow': 'fake', 'gpus': [
    {'name': '/physical_device:GPU:0', 'allocator_peak': 300 << 20},
    {'name': '/physical_device:GPU:1', 'allocator_peak': 2 << 30}]}, model={'name': 'fake'})
"""


def test_gpu_memory_is_drawn_per_device_with_its_peaks(qtbot, make_window, tmp_path):
    window = make_window(TWO_GPUS)
    window.runner.gpu_sampler = GpuMemorySampler(FakeNvml())
    window.use_config(fake_config(fake_python(tmp_path, GPU_RESULT)))
    window.start_run()
    memory = window.run_view.memory
    qtbot.waitUntil(lambda: set(memory.gpus) == {0, 1}, timeout=RUN_MS)
    legend = {memory.legend.getLabel(g.curve).text for g in memory.gpus.values()}
    assert legend == {"GPU 0 (process tree)", "GPU 1 (process tree)"}, "live, before the run ends"
    with qtbot.waitSignal(window.run_finished, timeout=RUN_MS) as finished:
        pass
    record = finished.args[0]
    assert record.status is RunStatus.OK, record.headline
    # Both devices while the child lived (the last sample may come after it left a device).
    assert record.gpu_samples and any(set(used) == {0, 1} for _, used in record.gpu_samples)
    colors = {g.curve.opts["pen"].color().name() for g in memory.gpus.values()}
    assert len(colors) == 2 and RSS_COLOR.lower() not in colors, "one colour per GPU, none the RSS curve's"
    for index, allocator in ((0, format_bytes(300 << 20)), (1, format_bytes(2 << 30))):
        gpu = memory.gpus[index]
        peak = max(used.get(index, 0) for _, used in record.gpu_samples) / MIB
        assert gpu.peak.value() == pytest.approx(peak) and gpu.peak.isVisible()
        text = memory.legend.getLabel(gpu.curve).text
        assert text.startswith(f"GPU {index} (process tree) · peak ") and text.endswith(
            f"TensorFlow allocator peak {allocator}"), text
    assert memory.getPlotItem().getViewBox().viewRange()[1][1] >= max(
        max(used.values(), default=0) for _, used in record.gpu_samples) / MIB


def band_x_in_scene(plot: MemoryPlot, name: str) -> tuple[float, float]:
    start, end = plot.bands.extent(name)
    view = plot.getPlotItem().getViewBox()
    return view.mapViewToScene(QPointF(start, 0)).x(), view.mapViewToScene(QPointF(end, 0)).x()


def assert_labels_inside_their_bands(plot: MemoryPlot) -> list[str]:
    shown = []
    for name, label in plot.bands.labels.items():
        if not label.isVisible():
            continue
        left, right = band_x_in_scene(plot, name)
        rect = label.sceneBoundingRect()
        assert left - 0.5 <= rect.left() and rect.right() <= right + 0.5, (name, rect, left, right)
        shown.append(name)
    return shown


def test_each_band_label_sits_inside_its_band(qtbot):
    record = finished_record(ready_s=5.0)  # phases of 1 s each
    record.phases["trace"].duration = 0.1  # narrower than its name at this size
    for i in range(1, 63):  # sampled to its end
        record.add_sample(record.launched_at + 0.1 * i, (100 + i) * MIB)
    plot = MemoryPlot()
    qtbot.addWidget(plot)
    plot.resize(900, 300)
    plot.show()
    qtbot.waitExposed(plot)
    plot.show_record(record)
    shown = assert_labels_inside_their_bands(plot)
    assert {"import", "devices", "load", "first"} <= set(shown) and "trace" not in shown and "spawn" not in shown
    plot.resize(400, 300)  # narrower: labels that no longer fit go, the rest stay inside
    qtbot.waitUntil(lambda: plot.getPlotItem().getViewBox().width() < 400)
    assert_labels_inside_their_bands(plot)
    # As the review image paints it: the plot item given a size, without a shown widget.
    review = MemoryPlot()
    review.show_series(record.samples, record.offsets(), record.peak_rss)
    item = review.getPlotItem()
    item.setGeometry(QRectF(0, 0, 960, 360))
    item.layout.activate()
    assert {"import", "load"} <= set(assert_labels_inside_their_bands(review))


def test_a_failing_scripts_output_appears_once_in_the_log(qtbot, window, tmp_path):
    script = tmp_path / "fails.py"
    script.write_text("import sys\nprint('first line of output')\nprint('last words', file=sys.stderr)\nsys.exit(1)\n")
    with qtbot.waitSignal(window.run_finished, timeout=RUN_MS) as finished:
        window.start_script([sys.executable, str(script)])
    assert finished.args[0].status is RunStatus.FAILED
    log = window.log.text.toPlainText()
    assert log.count("first line of output") == 1 and log.count("last words") == 1, log
    assert "exited with code 1" in log
    # A stored run shown again: the same.
    window.log.show_record(finished.args[0])
    assert window.log.text.toPlainText().count("last words") == 1


def test_the_sampler_thread_hands_over_samples_and_stops():
    class Counting:
        pid = 1

        def __init__(self):
            self.calls = 0

        def sample(self):
            self.calls += 1
            return 1000 + self.calls, {0: 5}

    sampler = Counting()
    thread = SamplerThread(sampler, interval=0.005)
    thread.start()
    deadline = time.monotonic() + 10
    taken = []
    while len(taken) < 5 and time.monotonic() < deadline:
        taken += thread.drain()
        time.sleep(0.005)
    thread.stop()
    assert not thread.alive
    taken += thread.drain()
    assert len(taken) == sampler.calls >= 5, "every sample read is handed over, in order"
    assert [rss for _, rss, _ in taken] == sorted(rss for _, rss, _ in taken)
    thread.stop()  # twice is harmless
