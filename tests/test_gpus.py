"""GPU inventory and per-process GPU memory against a fake at the NVML boundary."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from tflaunch.core.run.gpus import nvml as gpus


class NVMLError(Exception):
    """As pynvml's: the NVML return code in `value`, its text as the message."""

    TEXT = {3: "Not Supported", 9: "Driver Not Loaded", 12: "NVML Shared Library Not Found", 999: "Unknown Error"}

    def __init__(self, value):
        super().__init__(self.TEXT[value])
        self.value = value


class FakeNvml:
    """The part of pynvml tflaunch uses: two GPUs (an H100 and an A100, the second without
    persistence mode support), two processes on GPU 1."""

    NVMLError = NVMLError

    def __init__(self, count=2, fail_init=None, capabilities=((9, 0), (8, 0)), cuda_driver=12080):
        self.count, self.fail_init, self.open = count, fail_init, 0
        self.capabilities, self.cuda_driver = capabilities, cuda_driver

    def nvmlInit(self):
        if self.fail_init:
            raise NVMLError(self.fail_init)
        self.open += 1

    def nvmlShutdown(self):
        self.open -= 1

    def nvmlSystemGetDriverVersion(self):
        return b"575.51"

    def nvmlDeviceGetCount(self):
        return self.count

    def nvmlDeviceGetHandleByIndex(self, i):
        return i

    def nvmlSystemGetCudaDriverVersion(self):
        return self.cuda_driver

    def nvmlDeviceGetName(self, handle):
        return f"NVIDIA H200 #{handle}"

    def nvmlDeviceGetMemoryInfo(self, handle):
        return SimpleNamespace(total=141 * 2**30, used=(handle + 1) * 2**30, free=0)

    def nvmlDeviceGetCudaComputeCapability(self, handle):
        return self.capabilities[handle]

    def nvmlDeviceGetPersistenceMode(self, handle):
        if handle == 1:
            raise NVMLError(3)
        return 1

    def nvmlDeviceGetUUID(self, handle):
        return f"GPU-0000000{handle}-aaaa-bbbb-cccc-dddddddddddd".encode()

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
    assert inv.cuda_driver == "12.8", "NVML's 12080 as CUDA writes it"
    assert [g.name for g in inv.gpus] == ["NVIDIA H200 #0", "NVIDIA H200 #1"]
    first, second = inv.gpus
    assert first == gpus.Gpu(0, "NVIDIA H200 #0", 141 * 2**30, "GPU-00000000-aaaa-bbbb-cccc-dddddddddddd", (9, 0),
                             2**30, True)
    assert first.sm == "sm_90" and second.compute_capability == (8, 0)
    assert second.persistence_mode is None, "a figure the card does not report is left out, the card is listed"
    assert nvml.open == 0, "NVML is shut down after listing"


def test_an_nvml_without_the_newer_calls_still_lists_the_gpus():
    class OldNvml(FakeNvml):
        def __getattribute__(self, name):
            if name in ("nvmlSystemGetCudaDriverVersion", "nvmlDeviceGetCudaComputeCapability",
                        "nvmlDeviceGetPersistenceMode", "nvmlDeviceGetUUID"):
                raise AttributeError(name)
            return super().__getattribute__(name)

    inv = gpus.inventory(OldNvml())
    assert [g.index for g in inv.gpus] == [0, 1] and inv.cuda_driver is None
    assert inv.gpus[0].compute_capability is None and inv.gpus[0].uuid is None


@pytest.mark.parametrize(("code", "says"), [
    (12, "No NVIDIA driver found: its library libnvidia-ml.so.1 is not installed here. Install the driver to use a "
         "GPU."),
    (9, "The NVIDIA driver is installed but not loaded (NVML: Driver Not Loaded). `nvidia-smi` says why;"),
    (999, "No NVIDIA driver found (NVML: Unknown Error)."),
])
def test_no_driver_gives_the_reason(code, says):
    inv = gpus.inventory(FakeNvml(fail_init=code))
    assert not inv.available and inv.reason.startswith(says)


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
    assert not gpus.GpuMemorySampler(FakeNvml(fail_init=9)).available
