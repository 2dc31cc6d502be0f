"""A serving script: load a compiled .keras model, evaluate and predict.
Modelled on keras.io/guides/serialization_and_saving ("save, load, use")."""

import keras
import numpy as np
from _lab import regression, seed, show

seed()
x, y = regression()
model = keras.Sequential([keras.Input((8,)), keras.layers.Dense(4, activation="relu"), keras.layers.Dense(1)])
model.compile(optimizer="adam", loss="mse", metrics=["mae"])
model.fit(x, y, epochs=2, batch_size=16, verbose=0)
model.save("model.keras")

served = keras.models.load_model("model.keras")
show("optimizer", type(served.optimizer).__name__)
show("evaluate", served.evaluate(x, y, verbose=0, return_dict=True))
preds = served.predict(x[:4], verbose=0)
show("predict", preds)
np.save("preds.npy", np.round(preds, 3))
