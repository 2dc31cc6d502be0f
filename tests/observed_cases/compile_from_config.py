"""A model rebuilt from its config and compiled from its compile config.
Modelled on keras.io/api/models/model_saving_apis (get_compile_config / compile_from_config)."""

import keras
from _lab import classes, seed, show

seed()
x, y = classes()
model = keras.Sequential([keras.Input((8,)), keras.layers.Dense(3)])
model.compile(optimizer="rmsprop", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
              metrics=["accuracy"])
compile_config = model.get_compile_config()

twin = keras.Sequential.from_config(model.get_config())
twin.compile_from_config(compile_config)
show("compiled", twin.compiled)
show("optimizer", type(twin.optimizer).__name__)
show("loss", type(twin.loss).__name__)
twin.fit(x, y, epochs=2, verbose=0)
show("evaluate", twin.evaluate(x, y, verbose=0, return_dict=True))
