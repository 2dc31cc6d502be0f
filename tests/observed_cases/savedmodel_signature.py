"""Export a SavedModel with a serving signature, load it back and call the signature.
Modelled on tensorflow.org/guide/saved_model (tf.Module, signatures, tf.saved_model.load)."""

import tensorflow as tf
from _lab import seed, show

seed()


class Scaler(tf.Module):
    def __init__(self):
        super().__init__()
        self.w = tf.Variable([[1.0], [2.0], [3.0]])

    @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float32)])
    def __call__(self, x):
        return {"y": tf.matmul(x, self.w)}


module = Scaler()
tf.saved_model.save(module, "exported", signatures=module.__call__)
loaded = tf.saved_model.load("exported")
show("signatures", sorted(loaded.signatures))
serve = loaded.signatures["serving_default"]
show("outputs", sorted(serve.structured_outputs))
show("y", serve(tf.constant([[1.0, 1.0, 1.0], [0.0, 1.0, 0.0]]))["y"].numpy())
show("direct call", loaded(tf.constant([[1.0, 0.0, 0.0]]))["y"].numpy())
show("variables", [v.numpy().tolist() for v in loaded.variables])
