"""What a program can read off Keras' and TensorFlow's methods: __class__, __qualname__,
__module__, __wrapped__, and which loader is which.
Modelled on the inspect docs and keras.io/api/models/model_saving_apis (aliases of load_model)."""

import keras
import tensorflow as tf
from _lab import seed, show

seed()
model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
methods = {
    "Model.compile": keras.Model.compile,
    "Model.fit": keras.Model.fit,
    "Model.predict": keras.Model.predict,
    "Model.evaluate": keras.Model.evaluate,
    "Layer.__call__": keras.layers.Layer.__call__,
    "Optimizer.apply_gradients": keras.optimizers.Optimizer.apply_gradients,
    "GradientTape.gradient": tf.GradientTape.gradient,
    "GradientTape.__enter__": tf.GradientTape.__enter__,
    "Dataset.__iter__": tf.data.Dataset.__iter__,
    "model.fit (bound)": model.fit,
}
for name, method in methods.items():
    show(f"{name} class", type(method).__name__)
    show(f"{name} qualname", method.__qualname__)
    show(f"{name} module", method.__module__)
    show(f"{name} has __wrapped__", hasattr(method, "__wrapped__"))
show("model.__class__", model.__class__.__name__)
show("load_model is saving.load_model", keras.models.load_model is keras.saving.load_model)
show("load_model module", keras.models.load_model.__module__)
show("saved_model.load module", tf.saved_model.load.__module__)
show("saved_model.load name", tf.saved_model.load.__name__)
show("tf.saved_model.load is load_v2", tf.saved_model.load is tf.compat.v2.saved_model.load)
