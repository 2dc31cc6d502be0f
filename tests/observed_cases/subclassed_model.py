"""A subclassed keras.Model with layers made in __init__ and a call with a training flag.
Modelled on keras.io/guides/making_new_layers_and_models_via_subclassing."""

import keras
from _lab import classes, seed, show


class MLP(keras.Model):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.hidden = keras.layers.Dense(16, activation="relu")
        self.dropout = keras.layers.Dropout(0.5)
        self.out = keras.layers.Dense(3)

    def call(self, inputs, training=False):
        return self.out(self.dropout(self.hidden(inputs), training=training))


seed()
x, y = classes()
model = MLP()
model.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
              metrics=["accuracy"])
history = model.fit(x, y, epochs=3, batch_size=16, verbose=0)
show("loss per epoch", history.history["loss"])
show("built", model.built)
show("logits", model(x[:2]))
show("predict", model.predict(x[:2], verbose=0))
