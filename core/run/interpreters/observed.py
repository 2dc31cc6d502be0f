"""The stack an interpreter holds (Python, TensorFlow, which Keras its `tf.keras` is, how
TensorFlow was built) and what tflaunch observes of a program there: the one place those
words live, so that they change in one place as observation grows (observed_on).

Which Keras a program gets is TensorFlow's decision, made once inside `import tensorflow`:
TensorFlow <= 2.15 brings its own Keras 2 (the `keras` 2.x package); 2.16 and later use
Keras 3, or tf-keras (Keras 2) when TF_USE_LEGACY_KERAS is one of TensorFlow's own true
values in the program's environment.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

# TensorFlow's own test (tensorflow/__init__.py, lazy_loader.py): these values make tf.keras tf-keras.
LEGACY_KERAS_VALUES = ("true", "True", "1")
LEGACY_KERAS_ENV = "TF_USE_LEGACY_KERAS"
# What tflaunch observes of a program, by the Keras it runs: changed here, and only here.
OBSERVED_KERAS_3 = "tflaunch observes every phase here"
OBSERVED_KERAS_2 = ("tflaunch observes spawn, import, devices and data here; Keras 2's build, compile, first step "
                    "and steady are not observed yet (measure to a mark, or --until exit)")
OBSERVED_NO_KERAS = ("tflaunch observes spawn, import, devices, data and load here; steps and inferences are "
                     "observed through Keras, which is not installed")
OBSERVED_NO_TF_KERAS = (f"{LEGACY_KERAS_ENV} asks for tf-keras, which is not installed: the program's tf.keras fails "
                        f"(pip install tf-keras, or unset {LEGACY_KERAS_ENV})")


@dataclass(frozen=True)
class InterpreterStack:
    """What one interpreter runs a program with, as its check read it (nothing imported)."""

    python: str | None  # "3.11.7"
    tensorflow: str | None  # "2.21.0"; None: not installed
    keras: int | None  # 2 or 3: what the program's tf.keras is; None: no Keras to use
    keras_package: str  # "keras 3.15.1", "tf-keras 2.21.0"; without Keras, "" or why
    legacy_asked: bool  # TF_USE_LEGACY_KERAS in the environment it was checked in
    build: str | None  # "CUDA 12.5.1 build", "ROCm build", "CPU build"; None: not known

    @property
    def words(self) -> str:
        """`Python 3.11.7, TensorFlow 2.21.0, Keras 3 (keras 3.15.1), CUDA 12.5.1 build`."""
        parts = [f"Python {self.python}" if self.python else "", f"TensorFlow {self.tensorflow}"
                 if self.tensorflow else "no TensorFlow"]
        if self.tensorflow:
            parts.append(f"Keras {self.keras} ({self.keras_package})" if self.keras
                         else f"no Keras ({self.keras_package})" if self.keras_package else "no Keras")
            parts.append(self.build or "build not known")
        return ", ".join(p for p in parts if p)


def observed_on(stack: InterpreterStack) -> str:
    """What tflaunch observes of a program on `stack`, in a clause a sentence can end with."""
    if stack.legacy_asked and stack.keras is None and _version(stack.tensorflow) >= (2, 16):
        return OBSERVED_NO_TF_KERAS
    if stack.keras == 3:
        return OBSERVED_KERAS_3
    if stack.keras == 2:
        return OBSERVED_KERAS_2
    return OBSERVED_NO_KERAS


def stack_of(answer: Mapping[str, Any]) -> InterpreterStack:
    """The interpreter check's answer (interpreter.CHECK_CODE's JSON) as an InterpreterStack."""
    tensorflow = _text(answer.get("tensorflow"))
    legacy = _text(answer.get("legacy_keras")) in LEGACY_KERAS_VALUES
    keras, package = keras_of(tensorflow, _text(answer.get("keras")), _text(answer.get("tf_keras")), legacy)
    return InterpreterStack(_text(answer.get("python")), tensorflow, keras, package, legacy,
                            build_of(answer.get("build_info")))


def keras_of(tensorflow: str | None, keras: str | None, tf_keras: str | None,
             legacy: bool) -> tuple[int | None, str]:
    """(2 or 3 or None, the package) that `import tensorflow`'s tf.keras will be."""
    tf_version = _version(tensorflow)
    if tf_version and tf_version < (2, 16):  # its own Keras 2 (the keras 2.x wheel it depends on)
        return (2, f"keras {keras}") if keras else (None, "")
    if legacy:
        return (2, f"tf-keras {tf_keras}") if tf_keras else (None, "tf-keras asked for, not installed")
    if not keras:
        return None, ""
    return (3 if _version(keras) >= (3,) else 2), f"keras {keras}"


def build_of(info: Any) -> str | None:
    """How TensorFlow was built, from get_build_info()'s dict; None when it was not read."""
    if not isinstance(info, Mapping):
        return None
    if info.get("is_cuda_build"):
        cuda = _text(info.get("cuda_version"))
        return f"CUDA {cuda} build" if cuda else "CUDA build"
    if info.get("is_rocm_build"):
        return "ROCm build"
    return "CPU build"


def _text(value: Any) -> str | None:
    return str(value) if value not in (None, "") else None


def _version(text: str | None) -> tuple[int, ...]:
    """(2, 15) of "2.15.1" or "2.16.0rc0"; () when there is no number to read."""
    numbers = re.findall(r"\d+", (text or "").split("+")[0])[:2]
    return tuple(int(n) for n in numbers)
