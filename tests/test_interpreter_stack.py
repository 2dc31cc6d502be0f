"""The interpreter check names the stack it found (Python, TensorFlow, Keras 2 or 3, the
build) and what tflaunch observes there, from one child of that interpreter: against this
venv and the other stacks of this machine where they are installed (skipped, with the
reason, where not), and the rules on their own."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tflaunch.core.run.interpreters.interpreter import ask, check_command, interpret_check
from tflaunch.core.run.interpreters.observed import (
    OBSERVED_KERAS_2,
    OBSERVED_KERAS_3,
    OBSERVED_NO_TF_KERAS,
    build_of,
    keras_of,
    observed_on,
    stack_of,
)

STACKS = Path("/root/.cache/tflaunch-stacks")
TF215 = STACKS / "py310-tf215" / "bin" / "python"
TFKERAS = STACKS / "py311-tf221-tfkeras" / "bin" / "python"


def _checked(python: str):
    asked = ask(python, check_command(python)[2], 60)
    assert not isinstance(asked, str), asked
    return interpret_check(python, asked.exit_code, asked.stdout, asked.stderr)


def test_which_keras_tf_keras_is_follows_tensorflows_own_rules() -> None:
    assert keras_of("2.15.1", "2.15.0", None, legacy=False) == (2, "keras 2.15.0")  # TensorFlow's own Keras 2
    assert keras_of("2.13.1", "2.13.1", None, legacy=True) == (2, "keras 2.13.1")  # the variable came with 2.16
    assert keras_of("2.21.0", "3.15.1", None, legacy=False) == (3, "keras 3.15.1")
    assert keras_of("2.21.0", "3.15.1", "2.21.0", legacy=True) == (2, "tf-keras 2.21.0")
    assert keras_of("2.16.0rc0", "3.0.0", None, legacy=True)[0] is None
    assert keras_of("2.21.0", None, None, legacy=False) == (None, "")


def test_the_build_and_the_words_for_each_kind_of_stack() -> None:
    assert build_of({"is_cuda_build": True, "cuda_version": "12.5.1"}) == "CUDA 12.5.1 build"
    assert build_of({"is_cuda_build": False, "is_rocm_build": True}) == "ROCm build"
    assert build_of({"is_cuda_build": False}) == "CPU build" and build_of(None) is None
    legacy = stack_of({"python": "3.11.7", "tensorflow": "2.21.0", "keras": "3.15.1", "tf_keras": "2.21.0",
                       "legacy_keras": "1", "build_info": {"is_cuda_build": False}})
    assert legacy.words == "Python 3.11.7, TensorFlow 2.21.0, Keras 2 (tf-keras 2.21.0), CPU build"
    assert observed_on(legacy) == OBSERVED_KERAS_2
    missing = stack_of({"python": "3.12.1", "tensorflow": "2.21.0", "keras": "3.15.1", "legacy_keras": "True"})
    assert missing.words == ("Python 3.12.1, TensorFlow 2.21.0, no Keras (tf-keras asked for, not installed), "
                             "build not known")
    assert observed_on(missing) == OBSERVED_NO_TF_KERAS
    assert stack_of({"tensorflow": "2.21.0", "keras": "3.1.0", "legacy_keras": "0"}).keras == 3  # not a true value


def test_this_venv_is_named_as_keras_3_and_fully_observed() -> None:
    info = _checked(sys.executable)
    assert info.ok and info.stack is not None
    assert info.stack.keras == 3 and info.stack.tensorflow == info.tensorflow
    assert info.stack.build is not None and info.stack.build.endswith("build")  # read from build_info.py
    assert info.message == f"{info.stack.words}. {OBSERVED_KERAS_3}."
    assert info.message.startswith(f"Python {sys.version.split()[0]}, TensorFlow {info.tensorflow}, Keras 3 (keras ")


@pytest.mark.skipif(not TF215.exists(), reason=f"{TF215} is not installed here (the py310-tf215 stack)")
def test_the_tf215_stack_is_named_as_keras_2() -> None:
    info = _checked(str(TF215))
    assert info.ok and info.stack is not None
    assert info.stack.python is not None and info.stack.python.startswith("3.10.")
    assert info.tensorflow is not None and info.tensorflow.startswith("2.15.")
    assert info.stack.keras == 2 and info.stack.keras_package.startswith("keras 2.15")
    assert info.message.endswith(f"{OBSERVED_KERAS_2}.")


@pytest.mark.skipif(not TFKERAS.exists(), reason=f"{TFKERAS} is not installed here (the py311-tf221-tfkeras stack)")
def test_tf_keras_is_named_when_the_environment_asks_for_it(monkeypatch: pytest.MonkeyPatch) -> None:
    assert _checked(str(TFKERAS)).stack.keras == 3  # type: ignore[union-attr]
    monkeypatch.setenv("TF_USE_LEGACY_KERAS", "1")
    stack = _checked(str(TFKERAS)).stack
    assert stack is not None and stack.keras == 2 and stack.keras_package.startswith("tf-keras ")
