"""A program's own `type(obj).method is Base.method` checks, as libraries make them (Keras'
compile_from_config, Lightning-style hooks, wrappers that call a method only if overridden).
Modelled on keras/src/trainers/trainer.py's "the compile() method is custom" check."""

import keras
import tensorflow as tf
from _lab import seed, show


def defined_in(cls, name):
    """The classes of cls's MRO whose own namespace holds `name` (a patch shows as one more)."""
    return [c.__name__ for c in cls.__mro__ if name in vars(c)]


seed()
model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
layer = model.layers[0]
trainer = next(c for c in keras.Model.__mro__ if c.__name__ == "Trainer")  # Keras' own check is against it
checks = {
    "Sequential.compile is Trainer.compile (compile_from_config's check)": type(model).compile is trainer.compile,
    "Sequential.compile is Model.compile": type(model).compile is keras.Model.compile,
    "Sequential.fit is Model.fit": type(model).fit is keras.Model.fit,
    "Sequential.evaluate is Model.evaluate": type(model).evaluate is keras.Model.evaluate,
    "Sequential.predict is Model.predict": type(model).predict is keras.Model.predict,
    "Sequential.train_step is Model.train_step": type(model).train_step is keras.Model.train_step,
    "Sequential.__call__ is Layer.__call__": type(model).__call__ is keras.layers.Layer.__call__,
    "Dense.__call__ is Layer.__call__": type(layer).__call__ is keras.layers.Layer.__call__,
    "Adam.apply_gradients is Optimizer.apply_gradients":
        keras.optimizers.Adam.apply_gradients is keras.optimizers.Optimizer.apply_gradients,
    "model.compile.__func__ is Model.compile": model.compile.__func__ is keras.Model.compile,
    "tf.GradientTape.gradient is its own": tf.GradientTape.gradient is tf.GradientTape.__dict__["gradient"],
    "Dataset.__iter__ in DatasetV2": "__iter__" in tf.data.Dataset.__dict__,
    "tf.function is the def_function": tf.function.__module__.startswith("tensorflow."),
}
for name, held in checks.items():
    show(name, held)
for name in ("compile", "fit", "predict", "evaluate", "train_step", "__call__"):
    show(f"Sequential.{name} defined in", defined_in(type(model), name))
show("Model.compile is a function", type(keras.Model.compile).__name__)
show("Sequential class", type(model).__mro__[0].__name__)
