"""A whole model saved as .h5, loaded back and served: predict is the first inference."""
import numpy as np
import tensorflow as tf
from _stack_lab import mlp, regression, seed, show, truth

seed()
x, y = regression()
model = mlp()
model.compile(optimizer="adam", loss="mse")
model.save("model.h5")
loaded = tf.keras.models.load_model("model.h5", compile=False)
preds = loaded.predict(x[:8], verbose=0)
truth("first_inference_end")
for _ in range(3):
    loaded.predict(x[:8], verbose=0)
np.save("preds.npy", np.round(preds, 4))
show("prediction shape", str(tuple(preds.shape)))
