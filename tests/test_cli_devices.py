"""`tflaunch devices`: GPUs through a fake NVML, builds through fake interpreters (and once
the real one), and the native-or-JIT prediction by CUDA's compatibility rules."""

from __future__ import annotations

import json
import sys
from importlib import metadata
from pathlib import Path

import pytest

from tflaunch.core.cli.main import main
from tflaunch.core.run.gpus import nvml as gpus
from tflaunch.core.run.gpus.kernels import Verdict, cache_note, driver_note, parse_target, predict
from tflaunch.core.run.interpreters.build_info import build_info

from .builders import tflaunch
from .test_gpus import FakeNvml

PIP_WHEEL = ["sm_60", "sm_70", "sm_80", "sm_89", "compute_90"]  # TensorFlow 2.21's CUDA 12 wheel


# -- the prediction ------------------------------------------------------------------------------
@pytest.mark.parametrize(("built", "card", "verdict", "target"), [
    (PIP_WHEEL, (9, 0), Verdict.JIT, "compute_90"),  # H100: only PTX fits
    (PIP_WHEEL, (10, 0), Verdict.JIT, "compute_90"),  # PTX runs on any newer card
    (PIP_WHEEL, (8, 0), Verdict.NATIVE, "sm_80"),
    (PIP_WHEEL, (8, 6), Verdict.NATIVE, "sm_80"),  # a cubin runs on the same major, newer minor
    (PIP_WHEEL, (8, 9), Verdict.NATIVE, "sm_89"),  # the closest cubin
    (PIP_WHEEL, (7, 5), Verdict.NATIVE, "sm_70"),
    (PIP_WHEEL, (5, 2), Verdict.UNSUPPORTED, None),  # older than every target
    (["sm_89"], (8, 6), Verdict.UNSUPPORTED, None),  # a cubin never runs on an older minor
    (["sm_80"], (9, 0), Verdict.UNSUPPORTED, None),  # nor on another major
    (["sm_90a"], (9, 0), Verdict.NATIVE, "sm_90a"),
    (["sm_90a", "compute_90a"], (10, 0), Verdict.UNSUPPORTED, None),  # `a`: that capability only
    (["sm_80", "sm_100"], (10, 3), Verdict.NATIVE, "sm_100"),  # three digits: 10.0
    (["sm_80", "compute_80", "compute_90"], (12, 0), Verdict.JIT, "compute_90"),  # the newest PTX
    ([], (9, 0), Verdict.UNKNOWN, None),
    (PIP_WHEEL, None, Verdict.UNKNOWN, None),
])
def test_native_or_jit_by_cudas_rules(built, card, verdict, target):
    prediction = predict(built, card)
    assert (prediction.verdict, prediction.target) == (verdict, target)


def test_the_prediction_says_what_happens_and_what_to_do():
    assert predict(PIP_WHEEL, (8, 0)).message == "native kernels for sm_80"
    assert predict(PIP_WHEEL, (8, 6)).message == "native kernels for sm_80 (they run on this sm_86 card)"
    assert predict(PIP_WHEEL, (9, 0)).message == (
        "no native kernels for sm_90: kernels are JIT-compiled from PTX (compute_90) on this card at start and kept "
        "in the CUDA cache (keep it: CUDA_CACHE_MAXSIZE ≥ 2.00 GiB)")
    assert "minutes" not in predict(PIP_WHEEL, (9, 0)).message, "a cost is said only as measured"
    assert predict(PIP_WHEEL, (5, 2)).message.startswith(
        "no kernels for sm_52: this TensorFlow is built for sm_60, sm_70, sm_80, sm_89, compute_90, none of which "
        "runs on compute capability 5.2")
    not_cuda = predict(PIP_WHEEL, (9, 0), is_cuda_build=False)
    assert not_cuda.verdict is Verdict.NOT_CUDA and "is_cuda_build False" in not_cuda.message
    assert parse_target("sm_9") is None and parse_target("gfx90a") is None


def test_cache_and_driver_notes():
    assert "not set here" in cache_note({})
    assert cache_note({"CUDA_CACHE_MAXSIZE": str(4 << 30)}) == (
        "CUDA_CACHE_MAXSIZE is 4294967296 (4.00 GiB) here: enough")
    assert "too small" in cache_note({"CUDA_CACHE_MAXSIZE": str(256 << 20)})
    assert "every start compiles the kernels again" in cache_note({"CUDA_CACHE_DISABLE": "1"})
    assert "CUDA_ERROR_UNSUPPORTED_PTX_VERSION" in driver_note("12.2", "12.5.1", Verdict.JIT)
    assert driver_note("12.8", "12.5.1", Verdict.JIT) is None
    assert driver_note("12.2", "12.5.1", Verdict.NATIVE) is None, "cubins need no newer driver within CUDA 12"
    assert "needs CUDA 12" in driver_note("11.8", "12.5.1", Verdict.NATIVE)


# -- interpreters --------------------------------------------------------------------------------
BUILD_INFO = "import collections\nbuild_info = collections.OrderedDict({!r})\n"
REFUSE_IMPORT = "raise ImportError('tflaunch imported TensorFlow to read its build info')\n"


def fake_tensorflow(folder: Path, build: dict | None, init: str = REFUSE_IMPORT) -> str:
    """An interpreter (this one, with `folder` first on its path) whose TensorFlow 2.99.0 has
    `build` in build_info.py (no such file when None) and `init` as its __init__.py."""
    package = folder / "site" / "tensorflow"
    (package / "python" / "platform").mkdir(parents=True)
    (package / "__init__.py").write_text(init)
    if build is not None:
        (package / "python" / "platform" / "build_info.py").write_text(BUILD_INFO.format(list(build.items())))
    dist = folder / "site" / "tensorflow-2.99.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: tensorflow\nVersion: 2.99.0\n")
    return wrapper(folder, f'PYTHONPATH="{folder / "site"}" exec "{sys.executable}" "$@"')


def wrapper(folder: Path, line: str, name: str = "python") -> str:
    path = folder / name
    path.write_text(f"#!/bin/sh\n{line}\n")
    path.chmod(0o755)
    return str(path)


@pytest.fixture
def two_gpus(monkeypatch):
    """An H100 (9.0) and an A100 (8.0) at the NVML boundary."""
    monkeypatch.setattr(gpus, "_load_nvml", lambda: FakeNvml())


def test_devices_predicts_jit_on_an_h100_and_native_on_an_a100(capsys, tmp_path, two_gpus, monkeypatch):
    monkeypatch.delenv("CUDA_CACHE_MAXSIZE", raising=False)
    monkeypatch.delenv("CUDA_CACHE_DISABLE", raising=False)
    python = fake_tensorflow(tmp_path, {"is_cuda_build": True, "cuda_version": "12.5.1", "cudnn_version": "9",
                                        "cuda_compute_capabilities": PIP_WHEEL})
    assert main(["devices", "--python", python]) == 0
    out = capsys.readouterr().out
    assert "GPUs (NVIDIA driver 575.51, CUDA 12.8):" in out
    assert ("  GPU 0: NVIDIA H200 #0, compute capability 9.0, 141.00 GiB memory, 1.00 GiB in use, persistence mode "
            "on") in out and "GPU-00000000-aaaa-bbbb-cccc-dddddddddddd" in out
    assert "persistence mode unknown" in out
    assert (f"  Python {sys.version.split()[0]}, TensorFlow 2.99.0: CUDA build (CUDA 12.5.1, cuDNN 9); native "
            "kernels for sm_60, sm_70, sm_80, sm_89; PTX for compute_90") in out
    assert "  GPU 0: no native kernels for sm_90: kernels are JIT-compiled from PTX (compute_90)" in out
    assert ("         what a cold CUDA cache costs on this card is not measured yet: tflaunch devices "
            "--measure-cuda-cache measures it") in out
    assert "minutes" not in out
    assert "  GPU 1: native kernels for sm_80\n" in out
    assert "CUDA_CACHE_MAXSIZE is not set here" in out

    assert main(["devices", "--python", python, "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["cuda_driver"] == "12.8" and result["gpus"][0]["compute_capability"] == "9.0"
    assert result["gpus"][1]["memory_used"] == 2 * 2**30 and result["gpus"][0]["persistence_mode"] is True
    (interpreter,) = result["interpreters"]
    assert interpreter["tensorflow"] == "2.99.0" and interpreter["build_info"]["cuda_compute_capabilities"] == PIP_WHEEL
    assert [(g["index"], g["verdict"], g["target"]) for g in interpreter["gpus"]] == [
        (0, "jit", "compute_90"), (1, "native", "sm_80")]
    assert interpreter["gpus"][0]["cuda_cache_cost"] is None and "not measured" in \
        interpreter["gpus"][0]["cuda_cache_cost_note"]
    assert "cuda_cache_cost" not in interpreter["gpus"][1], "a native card has no JIT cost to measure"


def test_an_older_layout_is_asked_through_get_build_info(tmp_path):
    init = "class sysconfig:\n    get_build_info = staticmethod(lambda: {'is_cuda_build': False})\n"
    info = build_info(fake_tensorflow(tmp_path, None, init))
    assert info.ok and info.tensorflow == "2.99.0" and info.is_cuda_build is False


def test_a_cpu_build_says_it_will_not_use_the_gpus(capsys, tmp_path, two_gpus):
    python = fake_tensorflow(tmp_path, {"is_cuda_build": False, "is_rocm_build": False})
    assert main(["devices", "--python", python]) == 0
    out = capsys.readouterr().out
    assert "TensorFlow 2.99.0: CPU-only build (is_cuda_build False)" in out
    assert "  GPU 0: this TensorFlow is not built with CUDA (is_cuda_build False): it runs on the CPU only." in out


@pytest.mark.parametrize(("make", "says"), [
    (lambda d: wrapper(d, "echo 'no python here' >&2; exit 3"), "{p} did not run as Python (no python here). "),
    (lambda d: wrapper(d, f'exec "{sys.executable}" -S "$@"'), "{p} (Python 3."),  # -S: no site-packages
    (lambda d: fake_tensorflow(d, None), "TensorFlow 2.99.0 in {p} could not say how it was built (ImportError: "
                                         "tflaunch imported TensorFlow to read its build info). Reinstall it:"),
    (lambda d: str(d / "missing"), "The interpreter {p} does not exist."),
])
def test_an_interpreter_that_cannot_answer_is_named_with_the_cause(capsys, tmp_path, make, says):
    python = make(tmp_path)
    assert main(["devices", "--python", python]) == 1
    captured = capsys.readouterr()
    assert captured.err.startswith("tflaunch: " + says.format(p=python))
    assert says.format(p=python) in captured.out, "the report says it too, under the interpreter"


def test_an_interpreter_that_hangs_is_stopped_at_the_timeout(tmp_path):
    python = wrapper(tmp_path, "exec sleep 30")
    info = build_info(python, timeout=0.3)
    assert not info.ok and info.message.startswith(f"{python} did not answer within 0.3 s;")


def test_the_real_tensorflow_here(tmp_path):
    """This venv's TensorFlow, read in a child of the real interpreter; the GPUs from the
    real NVML (none on a CPU machine: then the reason is said)."""
    done = tflaunch("devices", "--json", timeout=60)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    (interpreter,) = result["interpreters"]
    assert interpreter["ok"] and interpreter["tensorflow"] == metadata.version("tensorflow")
    build = interpreter["build_info"]
    assert isinstance(build["is_cuda_build"], bool)
    if build["is_cuda_build"]:
        assert build["cuda_version"] and build["cuda_compute_capabilities"]
    if result["gpus"]:
        assert len(interpreter["gpus"]) == len(result["gpus"])
    else:
        assert result["no_gpu_reason"] and interpreter["gpus"] == []
        text = tflaunch("devices", timeout=60).stdout
        assert text.startswith(f"GPUs: none. {result['no_gpu_reason']}") and "No GPU to run on" in text
