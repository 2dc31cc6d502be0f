"""model.summary() printed to stdout and through a print_fn into a file.
Modelled on keras.io/guides/sequential_model ("summary")."""

import keras
from _lab import seed

seed()
model = keras.Sequential([keras.Input((8,)), keras.layers.Dense(16, activation="relu", name="hidden"),
                          keras.layers.Dense(2, name="out")], name="small")
model.summary(line_length=80)
lines = []
model.summary(print_fn=lambda line, **kwargs: lines.append(line), line_length=80)
with open("summary.txt", "w") as f:
    f.write("\n".join(lines) + "\n")
print("summary lines:", len(lines))
