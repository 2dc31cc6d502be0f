"""A tf.function and a model's predict called from worker threads (a server's handler threads).
Modelled on tensorflow.org/guide/function and concurrent.futures.ThreadPoolExecutor."""

import threading
from concurrent.futures import ThreadPoolExecutor

import keras
import tensorflow as tf
from _lab import seed, show

seed()


@tf.function
def square_sum(x):
    return tf.reduce_sum(x * x)


model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1, kernel_initializer="ones")])
results = {}


def work(i):
    return i, float(square_sum(tf.fill((3,), float(i))).numpy()), float(model.predict(tf.fill((1, 3), float(i)),
                                                                                        verbose=0)[0, 0])


thread = threading.Thread(target=lambda: results.update(first=work(1)), name="worker")
thread.start()
thread.join()
show("thread result", results["first"])
with ThreadPoolExecutor(3) as pool:
    for i, s, p in sorted(pool.map(work, range(2, 6))):
        show(f"item {i}", [s, p])
show("threads left", sorted(t.name for t in threading.enumerate() if t.name == "worker"))
