"""A program that sets warnings filters and records what Keras warns about.
Modelled on the warnings docs (catch_warnings, simplefilter) and Keras' input_shape warning."""

import warnings

before = [(f[0], f[2].__name__) for f in warnings.filters]
import keras  # noqa: E402
from _lab import seed, show  # noqa: E402

show("filters before import", before[:4])
warnings.simplefilter("ignore", DeprecationWarning)
seed()
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    keras.Sequential([keras.layers.Dense(2, input_shape=(3,))])
    warnings.warn("the program's own warning", UserWarning, stacklevel=1)
for w in caught:
    show("caught", f"{w.category.__name__}: {str(w.message).splitlines()[0][:60]}")
    show("from", w.filename.rsplit("/", 1)[-1])
with warnings.catch_warnings():
    warnings.simplefilter("error")
    try:
        warnings.warn("made an error", RuntimeWarning, stacklevel=1)
    except RuntimeWarning as exc:
        show("raised", repr(exc))
show("first filter now", (warnings.filters[0][0], warnings.filters[0][2].__name__))
