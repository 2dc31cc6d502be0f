"""Weights to an .h5 file and into a fresh model; the legacy whole-model .h5 format too.
Modelled on keras.io/guides/serialization_and_saving ("weights-only saving")."""

import keras
import numpy as np
from _lab import regression, seed, show


def make():
    model = keras.Sequential([keras.Input((8,)), keras.layers.Dense(4), keras.layers.Dense(1)])
    model.compile(optimizer="adam", loss=keras.losses.MeanSquaredError())
    return model


seed()
x, y = regression()
trained = make()
trained.fit(x, y, epochs=2, verbose=0)
trained.save_weights("trained.weights.h5")
fresh = make()
fresh.load_weights("trained.weights.h5")
show("same weights", all(np.array_equal(a, b) for a, b in zip(trained.get_weights(), fresh.get_weights(), strict=True)))
keras.saving.save_model(trained, "legacy.h5")
legacy = keras.models.load_model("legacy.h5")
show("legacy predict", legacy.predict(x[:2], verbose=0))
show("legacy evaluate", legacy.evaluate(x, y, verbose=0))
np.save("weights0.npy", np.round(fresh.get_weights()[0], 4))
