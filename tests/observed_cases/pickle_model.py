"""A program that pickles its model (Keras models pickle through the .keras format), a
function and a method. Modelled on keras.io/api/models/model_saving_apis and the pickle docs."""

import pickle

import keras
from _lab import regression, seed, show


def scale(v):
    return v * 2


seed()
x, y = regression()
model = keras.Sequential([keras.Input((8,)), keras.layers.Dense(1)])
model.compile(optimizer="adam", loss="mse")
model.fit(x, y, epochs=1, verbose=0)
show("function", pickle.loads(pickle.dumps(scale))(3))
for method in (keras.Model.fit, keras.Model.compile, keras.Model.predict, keras.layers.Layer.__call__):
    show(f"pickled {method.__qualname__}", pickle.loads(pickle.dumps(method)) is method)
show("bound method", pickle.loads(pickle.dumps(model.summary)).__func__ is keras.Model.summary)
with open("model.pkl", "wb") as f:
    pickle.dump(model, f)
with open("model.pkl", "rb") as f:
    back = pickle.load(f)
show("class", type(back).__name__)
show("same predictions", bool((back.predict(x[:4], verbose=0) == model.predict(x[:4], verbose=0)).all()))
show("compiled after pickle", back.compiled)
show("optimizer after pickle", type(back.optimizer).__name__)
