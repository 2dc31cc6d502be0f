"""tf.function with an input_signature: one trace for every batch size, its concrete function.
Modelled on tensorflow.org/guide/function ("Specifying an input signature")."""

import tensorflow as tf
from _lab import seed, show

seed()
traces = []


@tf.function(input_signature=[tf.TensorSpec(shape=[None, 3], dtype=tf.float32)])
def scaled_sum(x):
    traces.append(x.shape.as_list())
    return tf.reduce_sum(x * 2.0, axis=1)


for n in (1, 2, 5):
    show(f"batch {n}", scaled_sum(tf.ones((n, 3))).numpy())
show("traces", str(traces))
concrete = scaled_sum.get_concrete_function()
show("concrete inputs", str([spec.shape.as_list() for spec in concrete.structured_input_signature[0]]))
show("concrete call", concrete(tf.constant([[1.0, 2.0, 3.0]])).numpy())
show("function name", scaled_sum.__name__)
show("python function", scaled_sum.python_function.__name__)
try:
    scaled_sum(tf.ones((2, 4)))
except (TypeError, ValueError) as exc:
    show("wrong shape refused", type(exc).__name__)
