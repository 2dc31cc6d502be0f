"""A model that overrides __call__ to count its calls (a common logging wrapper).
Modelled on keras.io/guides/making_new_layers_and_models_via_subclassing."""

import keras
from _lab import regression, seed, show


class Counted(keras.Model):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.dense = keras.layers.Dense(1)
        self.calls = 0

    def call(self, x):
        return self.dense(x)

    def __call__(self, *args, **kwargs):
        self.calls += 1
        return super().__call__(*args, **kwargs)


seed()
x, y = regression()
model = Counted()
show("first output", model(x[:2]))
model.compile(optimizer="sgd", loss="mse")
model.fit(x, y, epochs=2, batch_size=32, verbose=0)
show("output after fit", model(x[:2]))
show("python calls", model.calls)
show("__call__ is own", type(model).__call__ is Counted.__call__)
