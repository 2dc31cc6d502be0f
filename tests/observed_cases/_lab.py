"""What every case program shares: seeds, data made in code, and printing rounded so that a
run repeats exactly (plain and observed alike). Imported by the programs, never run."""

import numpy as np


def seed(n=0):
    """Seeds Python, numpy and TensorFlow, and asks TensorFlow for deterministic kernels."""
    import keras
    import tensorflow as tf

    keras.utils.set_random_seed(n)
    tf.config.experimental.enable_op_determinism()


def regression(n=64, features=8, seed_=1):
    """y = a fixed linear map of x plus nothing: a loss that falls within a few steps."""
    rng = np.random.default_rng(seed_)
    x = rng.normal(size=(n, features)).astype("float32")
    w = np.linspace(-1, 1, features, dtype="float32")[:, None]
    return x, (x @ w).astype("float32")


def classes(n=64, features=8, k=3, seed_=2):
    rng = np.random.default_rng(seed_)
    x = rng.normal(size=(n, features)).astype("float32")
    return x, (np.argmax(x[:, :k], axis=1)).astype("int32")


def show(label, value, digits=3):
    """One `label: value` line, numbers rounded (a float's last bits are not the program's)."""
    if isinstance(value, dict):
        value = {k: round(float(v), digits) for k, v in sorted(value.items())}
    elif hasattr(value, "shape") or (isinstance(value, (list, tuple)) and not any(isinstance(v, str) for v in value)):
        value = np.round(np.asarray(value, dtype="float64"), digits).tolist()
    elif isinstance(value, float):
        value = round(value, digits)
    print(f"{label}: {value}", flush=True)
