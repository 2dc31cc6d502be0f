"""A program that looks where the observer's hooks are: a Keras warning's file:line, a traceback
through a hooked method (a model called on input of the wrong shape) and what inspect says of
hooked methods. Identical observed and plain on Python 3.12+ (sys.monitoring: no wrapper); on
3.8-3.11 the hooks are wrappers, which these lines show (README, "Watching changes nothing")."""

import inspect
import traceback
import warnings

import numpy as np
import tensorflow as tf
from _stack_lab import seed

keras = tf.keras
seed()
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    keras.layers.Dense(4, input_shape=(3,))  # Keras 3 warns, naming the caller by stacklevel
for w in caught:
    print("warned", w.category.__name__, w.filename, w.lineno, flush=True)
model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(2)])
for name in ("fit", "predict", "compile"):
    method = getattr(type(model), name)
    print("inspect", name, inspect.getsourcefile(method), inspect.getsourcelines(method)[1],
          method.__code__.co_name, method.__code__.co_firstlineno, flush=True)
print("inspect __call__", inspect.signature(keras.layers.Layer.__call__), flush=True)
try:
    model.predict(np.ones((2, 5), "float32"), verbose=0)
except ValueError as exc:
    frames = traceback.extract_tb(exc.__traceback__)
    print("frames", len(frames), flush=True)
    for frame in frames:
        print("frame", frame.filename, frame.lineno, frame.name, flush=True)
