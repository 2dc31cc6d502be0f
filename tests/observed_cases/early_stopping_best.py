"""fit with EarlyStopping(restore_best_weights) and a CSVLogger writing a file, on a validation
split. Modelled on keras.io/api/callbacks/early_stopping and keras.io/api/callbacks/csv_logger."""

import keras
from _lab import regression, seed, show

seed()
x, y = regression(n=96)
model = keras.Sequential([keras.Input((8,)), keras.layers.Dense(1)])
model.compile(optimizer=keras.optimizers.SGD(0.05), loss="mse")
stop = keras.callbacks.EarlyStopping(monitor="val_loss", patience=1, restore_best_weights=True)
history = model.fit(x, y, validation_split=0.25, epochs=6, verbose=0, shuffle=False,
                    callbacks=[stop, keras.callbacks.CSVLogger("log.csv")])
show("epochs run", len(history.history["loss"]))
show("val_loss", history.history["val_loss"])
show("stopped epoch", stop.stopped_epoch)
