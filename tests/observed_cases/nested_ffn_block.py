"""A transformer block whose feed-forward part is a Sequential (`ffn`), called on symbolic
inputs while a functional model is built. Modelled on keras.io/examples/nlp/text_classification_with_transformer."""

import keras
import numpy as np
from _lab import seed, show


class TransformerBlock(keras.layers.Layer):
    def __init__(self, embed_dim, num_heads, ff_dim, **kwargs):
        super().__init__(**kwargs)
        self.att = keras.layers.MultiHeadAttention(num_heads=num_heads, key_dim=embed_dim)
        self.ffn = keras.Sequential([keras.layers.Dense(ff_dim, activation="relu"), keras.layers.Dense(embed_dim)])
        self.norm1 = keras.layers.LayerNormalization(epsilon=1e-6)
        self.norm2 = keras.layers.LayerNormalization(epsilon=1e-6)

    def call(self, inputs):
        out1 = self.norm1(inputs + self.att(inputs, inputs))
        return self.norm2(out1 + self.ffn(out1))


seed()
inputs = keras.Input(shape=(6,))
x = keras.layers.Embedding(20, 8)(inputs)
x = TransformerBlock(8, 2, 16)(x)
x = keras.layers.GlobalAveragePooling1D()(x)
outputs = keras.layers.Dense(2, activation="softmax")(x)
model = keras.Model(inputs, outputs)
print("model built", flush=True)
model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
rng = np.random.default_rng(3)
tokens = rng.integers(0, 20, size=(32, 6))
labels = (tokens[:, 0] > 9).astype("int32")
history = model.fit(tokens, labels, epochs=2, batch_size=8, verbose=0)
show("loss per epoch", history.history["loss"])
show("params", model.count_params())
show("predict", model.predict(tokens[:2], verbose=0))
