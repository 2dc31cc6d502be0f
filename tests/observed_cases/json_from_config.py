"""A model's architecture to JSON and back (to_json / model_from_json, get_config / from_config),
the JSON kept in a file. Modelled on keras.io/guides/serialization_and_saving ("config")."""

import json

import keras
from _lab import seed, show

seed()
inputs = keras.Input((4,), name="features")
outputs = keras.layers.Dense(2, name="head")(keras.layers.Dense(3, name="body")(inputs))
model = keras.Model(inputs, outputs, name="configured")
text = model.to_json()
with open("model.json", "w") as f:
    json.dump(json.loads(text), f, indent=1, sort_keys=True)
rebuilt = keras.models.model_from_json(text)
clone = keras.Model.from_config(model.get_config())
show("layers", [layer.name for layer in rebuilt.layers])
show("same config", rebuilt.get_config() == clone.get_config())
show("params", rebuilt.count_params())
show("class name in json", json.loads(text)["class_name"])
