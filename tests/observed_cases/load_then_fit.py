"""Restore-then-train: a compiled model saved by one job, loaded and trained further by the next.
Modelled on keras.io/guides/serialization_and_saving (the model "can be trained further")."""

import json

import keras
from _lab import regression, seed, show

seed()
x, y = regression()
model = keras.Sequential([keras.Input((8,)), keras.layers.Dense(8, activation="relu"), keras.layers.Dense(1)])
model.compile(optimizer=keras.optimizers.SGD(0.05), loss="mse")
model.fit(x, y, epochs=1, batch_size=16, verbose=0)
model.save("first_job.keras")

resumed = keras.models.load_model("first_job.keras")
history = resumed.fit(x, y, epochs=3, batch_size=16, verbose=0)
show("iterations after fit", int(resumed.optimizer.iterations.numpy()))
show("loss per epoch", history.history["loss"])
with open("history.json", "w") as f:
    json.dump({k: [round(v, 3) for v in vs] for k, vs in history.history.items()}, f)
