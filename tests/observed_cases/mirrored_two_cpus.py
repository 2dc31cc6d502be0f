"""MirroredStrategy over two logical CPU devices made from the one CPU.
Modelled on tensorflow.org/guide/distributed_training and tf.config.set_logical_device_configuration."""

import keras
import tensorflow as tf
from _lab import regression, seed, show

cpu = tf.config.list_physical_devices("CPU")[0]
tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
seed()
strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
show("replicas", strategy.num_replicas_in_sync)
x, y = regression()
with strategy.scope():
    model = keras.Sequential([keras.Input((8,)), keras.layers.Dense(1)])
    model.compile(optimizer=keras.optimizers.SGD(0.1), loss="mse")
history = model.fit(x, y, epochs=3, batch_size=16, verbose=0)
show("loss per epoch", history.history["loss"])
