"""A data_augmentation Sequential applied to a symbolic Input inside a functional model.
Modelled on keras.io/examples/vision/image_classification_from_scratch."""

import keras
import numpy as np
from _lab import seed, show

seed()
data_augmentation = keras.Sequential([keras.layers.RandomFlip("horizontal"), keras.layers.RandomRotation(0.1)])
inputs = keras.Input(shape=(8, 8, 1))
x = data_augmentation(inputs)
x = keras.layers.Rescaling(1.0 / 255)(x)
x = keras.layers.Conv2D(4, 3, activation="relu")(x)
x = keras.layers.GlobalAveragePooling2D()(x)
outputs = keras.layers.Dense(1, activation="sigmoid")(x)
model = keras.Model(inputs, outputs)
print("model built", flush=True)
rng = np.random.default_rng(4)
images = rng.integers(0, 256, size=(32, 8, 8, 1)).astype("float32")
labels = (images.mean(axis=(1, 2, 3)) > 127).astype("float32")
model.compile(optimizer="adam", loss="binary_crossentropy")
model.fit(images, labels, epochs=2, batch_size=8, verbose=0)
show("predict", model.predict(images[:3], verbose=0))
