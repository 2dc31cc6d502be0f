"""A model class that overrides compile (to add its own setting), saved and loaded.
Modelled on keras.io/guides/customizing_what_happens_in_fit (the GAN's compile override)."""

import keras
from _lab import regression, seed, show


@keras.saving.register_keras_serializable(package="cases")
class Weighted(keras.Sequential):
    def compile(self, *args, loss_weight=1.0, **kwargs):
        self.loss_weight = loss_weight
        super().compile(*args, **kwargs)


seed()
x, y = regression()
model = Weighted([keras.Input((8,)), keras.layers.Dense(1)])
model.compile(optimizer="sgd", loss="mse", loss_weight=0.5)
show("loss_weight", model.loss_weight)
show("compile is custom", type(model).compile is not keras.Model.compile)
model.fit(x, y, epochs=2, verbose=0)
model.save("weighted.keras")
loaded = keras.models.load_model("weighted.keras")
show("loaded class", type(loaded).__name__)
show("loaded compiled", loaded.compiled)
show("loaded has loss_weight", hasattr(loaded, "loss_weight"))
