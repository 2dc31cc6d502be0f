"""GPU inventory and per-process GPU memory against a fake at the NVML boundary."""

from __future__ import annotations

from types import SimpleNamespace

from tflaunch.core.run import gpus


class FakeNvml:
    """The part of pynvml tflaunch uses, with two GPUs and two processes on GPU 1."""

    class NVMLError(Exception):
        pass

    def __init__(self, count=2, fail_init=False):
        self.count, self.fail_init, self.open = count, fail_init, 0

    def nvmlInit(self):
        if self.fail_init:
            raise self.NVMLError("Driver Not Loaded")
        self.open += 1

    def nvmlShutdown(self):
        self.open -= 1

    def nvmlSystemGetDriverVersion(self):
        return b"575.51"

    def nvmlDeviceGetCount(self):
        return self.count

    def nvmlDeviceGetHandleByIndex(self, i):
        return i

    def nvmlDeviceGetName(self, handle):
        return f"NVIDIA H200 #{handle}"

    def nvmlDeviceGetMemoryInfo(self, handle):
        return SimpleNamespace(total=141 * 2**30)

    def nvmlDeviceGetComputeRunningProcesses(self, handle):
        if handle == 1:
            return [SimpleNamespace(pid=100, usedGpuMemory=3 * 2**30),
                    SimpleNamespace(pid=101, usedGpuMemory=None),
                    SimpleNamespace(pid=999, usedGpuMemory=5 * 2**30)]
        return []


def test_inventory_lists_gpus_and_driver():
    nvml = FakeNvml()
    inv = gpus.inventory(nvml)
    assert inv.available and inv.driver == "575.51" and inv.reason is None
    assert [g.name for g in inv.gpus] == ["NVIDIA H200 #0", "NVIDIA H200 #1"]
    assert nvml.open == 0, "NVML is shut down after listing"


def test_no_driver_gives_a_reason():
    inv = gpus.inventory(FakeNvml(fail_init=True))
    assert not inv.available and "No NVIDIA driver" in inv.reason


def test_driver_without_gpus_gives_a_reason():
    assert gpus.inventory(FakeNvml(count=0)).reason == "The NVIDIA driver reports no GPU."


def test_real_nvml_on_this_machine_never_raises():
    inv = gpus.inventory()
    assert inv.available or inv.reason


def test_memory_sampler_sums_only_the_run_processes():
    sampler = gpus.GpuMemorySampler(FakeNvml())
    assert sampler.available
    assert sampler.sample([100, 101]) == {1: 3 * 2**30}
    assert sampler.sample([42]) == {}
    sampler.close()
    assert not gpus.GpuMemorySampler(FakeNvml(fail_init=True)).available
