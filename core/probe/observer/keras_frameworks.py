"""Which Keras a program runs, and its classes, resolved from what is actually loaded.

Three Kerases run on TensorFlow: Keras 3 (`keras` 3.x, TensorFlow >= 2.16), the Keras 2 that
TensorFlow 2.13-2.15 bundles (`keras` 2.x), and tf-keras (`tf_keras`, Keras 2 for TensorFlow
>= 2.16, what `tf.keras` is under TF_USE_LEGACY_KERAS=1). Their methods live in different
modules (Keras 3: keras.src.trainers / keras.src.backend.tensorflow.trainer; Keras 2:
keras.src.engine.training or tf_keras.src.engine.training), so nothing here names one: each
class is taken from the framework's public names (`keras.Model`, `tf_keras.layers.Layer`,
`keras.optimizers.Optimizer`) and the hooks replace a method where that class's MRO defines
it (hook_tools.wrap). What differs between the two generations is said here, once: the
optimizer's method that ends a step (Keras 3: `apply`; Keras 2: `apply_gradients`, new and
legacy optimizers alike), and where a Keras cannot be observed, why.

This is the only module that asks which Keras is loaded; the rules stay in observe.py.
Standard library only, Python 3.8.
"""

import sys
from typing import Any, List, NamedTuple, Optional, Tuple

# The top-level packages a Keras is imported as.
KERAS_PACKAGES = ("keras", "tf_keras")


class Keras(NamedTuple):
    """One loaded Keras: its package, version and the classes the hooks go into."""

    package: str  # "keras" or "tf_keras"
    version: str
    major: int  # 2 or 3
    backend: str  # "tensorflow", or Keras 3's other backend ("jax", "torch", "numpy")
    model: type
    layer: type
    constructors: Tuple[type, ...]  # Sequential and Functional: they build after Layer.__init__
    optimizers: Tuple[type, ...]  # the optimizer bases whose apply ends a step
    apply: str  # that method's name
    load_model: Any  # the function keras.models.load_model is
    symbolic: Any  # Keras' own test for symbolic tensors (Keras 3), or None
    callbacks: Optional[type] = None  # CallbackList: fit tells it each batch's begin and end

    @property
    def name(self) -> str:
        """What a user calls it: "Keras 3.15.1", "Keras 2.15.0", "tf-keras 2.21.0"."""
        return f"tf-keras {self.version}" if self.package == "tf_keras" else f"Keras {self.version}"

    def unobservable(self) -> Optional[str]:
        """Why tflaunch cannot see this Keras' steps and inferences, or None when it can."""
        if self.backend != "tensorflow":
            return (f"{self.name} runs on its {self.backend} backend here, and tflaunch observes steps and "
                    "inferences only on TensorFlow")
        return None


def loaded() -> List[Keras]:
    """Every Keras whose import has finished, resolved; one that cannot be is left out."""
    found = []
    for package in KERAS_PACKAGES:
        module = sys.modules.get(package)
        if module is None or _initialising(module):
            continue
        keras = resolve(package, module)
        if keras is not None:
            found.append(keras)
    return found


def unresolved() -> List[str]:
    """The Keras packages loaded whose classes could not be found (a version tflaunch does not
    know), by name and version: said, never guessed at."""
    names = []
    for package in KERAS_PACKAGES:
        module = sys.modules.get(package)
        if module is not None and not _initialising(module) and resolve(package, module) is None:
            names.append(f"{package} {_version(module) or '(version unknown)'}")
    return names


def _initialising(module: Any) -> bool:
    spec = getattr(module, "__spec__", None)
    return bool(getattr(spec, "_initializing", False))


def _version(module: Any) -> str:
    # From the module's own dictionary: getattr on a lazy module can import whole trees.
    return str(vars(module).get("__version__") or "")


def resolve(package: str, module: Any) -> Optional[Keras]:
    """The classes of the Keras imported as `package`, from its public names; None when they
    are not all there (a Keras tflaunch does not know, or a package of that name that is none)."""
    try:
        version = _version(module)
        major = int(version.split(".")[0]) if version else 0
        model = module.Model
        layer = module.layers.Layer
        sequential = module.Sequential
        load_model = module.models.load_model
        optimizers = [module.optimizers.Optimizer]
    except Exception:
        return None
    if major == 3:
        apply, backend, symbolic = "apply", _keras3_backend(), _keras3_symbolic()
    elif major == 2:
        apply, backend, symbolic = "apply_gradients", "tensorflow", None
        legacy = getattr(getattr(module.optimizers, "legacy", None), "Optimizer", None)
        if isinstance(legacy, type):
            optimizers.append(legacy)
    else:
        return None
    if not all(isinstance(c, type) for c in (model, layer, sequential, *optimizers)) or not callable(load_model):
        return None
    constructors = (sequential,) + tuple(c for c in (_functional(model),) if c is not None and c is not sequential)
    callbacks = getattr(getattr(module, "callbacks", None), "CallbackList", None)
    return Keras(package, version, major, backend, model, layer, constructors, tuple(optimizers), apply,
                 load_model, symbolic, callbacks if isinstance(callbacks, type) else None)


def _functional(model: type) -> Optional[type]:
    """The functional model class (what `Model(inputs, outputs)` makes), beside the Model
    class in its own package (keras.src.models.functional, keras.src.engine.functional,
    tf_keras.src.engine.functional), if that module is loaded."""
    package = model.__module__.rpartition(".")[0]
    found = getattr(sys.modules.get(package + ".functional"), "Functional", None)
    return found if isinstance(found, type) and issubclass(found, model) else None


def _keras3_backend() -> str:
    config = sys.modules.get("keras.src.backend.config")
    backend = getattr(config, "backend", None)
    try:
        return str(backend()) if callable(backend) else "tensorflow"
    except Exception:
        return "tensorflow"


def _keras3_symbolic() -> Any:
    return getattr(sys.modules.get("keras.src.backend.common.keras_tensor"), "any_symbolic_tensors", None)


def any_symbolic(args: Any, kwargs: Any) -> bool:
    """Whether a call's arguments hold a Keras symbolic tensor (a KerasTensor from
    `keras.Input`, in any generation), looked for two levels deep as Keras nests inputs."""

    def symbolic(value: Any, depth: int) -> bool:
        if any(cls.__name__ == "KerasTensor" for cls in type(value).__mro__):
            return True
        if depth and isinstance(value, (list, tuple)):
            return any(symbolic(v, depth - 1) for v in value)
        if depth and isinstance(value, dict):
            return any(symbolic(v, depth - 1) for v in value.values())
        return False

    return any(symbolic(v, 2) for v in args) or any(symbolic(v, 2) for v in kwargs.values())
