"""A Keras callback that looks at the model it is given: its optimizer, its loss, whether
compile is Keras' own, the signatures and source of its methods.
Modelled on keras.io/guides/writing_your_own_callbacks."""

import inspect

import keras
from _lab import regression, seed, show


class Inspect(keras.callbacks.Callback):
    def on_train_begin(self, logs=None):
        model = self.model
        show("optimizer", type(model.optimizer).__name__)
        show("learning rate", float(model.optimizer.learning_rate.numpy()))
        show("loss", model.loss)
        show("has compiled_loss (tf.keras 2's name)", hasattr(model, "compiled_loss"))
        show("metrics", [m.name for m in model.metrics])
        show("compile is keras'", type(model).compile is keras.Model.compile)
        show("fit is keras'", type(model).fit is keras.Model.fit)
        show("fit signature", str(inspect.signature(model.fit)))
        show("compile signature", str(inspect.signature(model.compile)))
        show("train_step source starts", inspect.getsource(type(model).train_step).splitlines()[0].strip())
        show("compile defined in", inspect.getsourcefile(type(model).compile).rsplit("site-packages", 1)[-1])

    def on_epoch_end(self, epoch, logs=None):
        show(f"epoch {epoch} loss", logs["loss"])


seed()
x, y = regression()
model = keras.Sequential([keras.Input((8,)), keras.layers.Dense(1)])
model.compile(optimizer=keras.optimizers.Adam(0.01), loss="mse")
model.fit(x, y, epochs=2, batch_size=16, verbose=0, callbacks=[Inspect()])
