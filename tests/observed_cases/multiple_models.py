"""An autoencoder: encoder, decoder and the model of both, each compiled and used on its own.
Modelled on keras.io/examples/vision/autoencoder and the functional API guide ("all models are callable")."""

import keras
from _lab import regression, seed, show

seed()
x, _ = regression(features=8)
encoder = keras.Sequential([keras.Input((8,)), keras.layers.Dense(3, activation="tanh")], name="encoder")
decoder = keras.Sequential([keras.Input((3,)), keras.layers.Dense(8)], name="decoder")
inputs = keras.Input((8,))
autoencoder = keras.Model(inputs, decoder(encoder(inputs)), name="autoencoder")
autoencoder.compile(optimizer="adam", loss="mse")
history = autoencoder.fit(x, x, epochs=3, batch_size=16, verbose=0)
show("loss per epoch", history.history["loss"])
encoder.compile(optimizer="sgd", loss="mse")
show("encoder evaluate", encoder.evaluate(x, encoder.predict(x, verbose=0), verbose=0))
show("codes", encoder.predict(x[:2], verbose=0))
show("models", [m.name for m in (encoder, decoder, autoencoder)])
show("optimizers differ", encoder.optimizer is not autoencoder.optimizer)
