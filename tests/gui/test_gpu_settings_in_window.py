"""The GPU settings in the app: an editor per setting whose tooltip names the variable or
API, values that reach the LaunchConfig, and a GPU run's devices phase in parts."""

from __future__ import annotations

from tflaunch.core.run.gpus.nvml import Gpu, GpuInventory
from tflaunch.core.settings.config import LaunchConfig

from ..test_gpu_lab import gpu_record

TWO_GPUS = GpuInventory((Gpu(0, "NVIDIA H100 80GB HBM3", 80 << 30, compute_capability=(9, 0)),
                         Gpu(1, "NVIDIA H100 80GB HBM3", 80 << 30, compute_capability=(9, 0))), "570.86", None)


def test_each_gpu_setting_has_an_editor_naming_its_variable(make_window, screenshot):
    window = make_window(TWO_GPUS, size=(1024, 700))
    panel = window.panel
    for name, words in (("allocator", "TF_GPU_ALLOCATOR"), ("cudnn_autotune", "TF_CUDNN_USE_AUTOTUNE"),
                        ("module_loading", "CUDA_MODULE_LOADING"), ("cuda_cache", "CUDA_CACHE_PATH"),
                        ("xla_cache", "tf_xla_persistent_cache_directory"), ("nvtx", "Nsight"),
                        ("memory_limit_mb", "LogicalDeviceConfiguration")):
        assert words in getattr(panel, name).toolTip(), name
    config = LaunchConfig(model="sample:mlp", allocator="cuda_malloc_async", cudnn_autotune=False,
                          module_loading="eager", cuda_cache="warm", xla_cache=True, nvtx=True)
    panel.set_config(config)
    assert panel.config() == config  # every value goes through its editor and back unchanged
    screenshot(window, "gpu-settings-1024x700")


def test_a_gpu_runs_devices_phase_shows_its_parts(window):
    record = gpu_record()
    window.run_view.show_record(record)
    table = window.run_view.phases
    row = [table.item(r, 0).text() for r in range(table.rowCount())].index("Devices")
    cell = table.item(row, 2)
    assert cell.text().endswith("+")
    assert "driver and device discovery: 600 ms" in cell.toolTip()
    assert "contexts and allocators: 1.40 s" in cell.toolTip()
    first = table.item([table.item(r, 0).text() for r in range(table.rowCount())].index("First inference"), 2)
    assert "one-time work in the first call" in first.toolTip()
    # Not on every run: a JIT card's verdict and its measured cost are said by `devices` and the doctor.
    assert "JIT" not in window.run_view.summary.settings.text()


def test_gpu_only_settings_are_disabled_without_a_gpu_and_say_why(window):
    for name in ("allocator", "cudnn_autotune", "module_loading", "cuda_cache", "memory_growth"):
        widget = getattr(window.panel, name)
        assert not widget.isEnabled() and "Disabled: No NVIDIA driver found" in widget.toolTip()
    assert window.panel.xla_cache.isEnabled() and window.panel.nvtx.isEnabled()
