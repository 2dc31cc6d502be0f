"""Generated input values a model would see in use, not zeros.

Token ids are drawn from 1 to the model's smallest embedding size minus one (0 is the
usual padding id, and an all-padding sequence is masked away entirely); strings come from
a lookup layer's vocabulary where one is reachable, else a non-empty placeholder; floats
are uniform in [0, 1). Seeded, so every run feeds the same values.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

from ..failure import ProbeFailure
from .entry_point import Declared
from .input_shapes import InputSpecError, parse_shape, resolve, spec_text

DEFAULT_TOKEN_LIMIT = 100  # ids 1..99 when no embedding says how many there are
PLACEHOLDER_STRING = "tflaunch"


class Fed:
    """One input as fed: shape with batch, dtype, and whether a default filled it."""

    def __init__(self, declared: Declared, shape: List[int], dtype: str, assumed: bool) -> None:
        self.declared, self.shape, self.dtype, self.assumed = declared, shape, dtype, assumed
        self.values = ""

    @property
    def name(self) -> str:
        return self.declared.name

    def text(self) -> str:
        return f"{self.name}={spec_text(tuple(self.shape), self.dtype)}" + (" (assumed)" if self.assumed else "")

    def to_dict(self) -> Dict[str, Any]:
        return {**self.declared.to_dict(), "fed_shape": self.shape, "fed_dtype": self.dtype,
                "assumed": self.assumed, "values": self.values}


def plan(declared: List[Declared], user: Dict[str, str], batch: int) -> List[Fed]:
    """The shape and dtype of every input; ProbeFailure naming the input when a user's
    shape does not fit or names an input the model does not have."""
    names = [d.name for d in declared]
    unknown = [n for n in user if n not in names]
    if unknown:
        raise ProbeFailure("bad_input", f"The model has no input '{unknown[0]}'; its inputs are "
                           f"{', '.join(names)}. Check the name in --input NAME=SHAPE.")
    fed = []
    for d in declared:
        try:
            given = parse_shape(user[d.name], d.name) if d.name in user else None
            shape, dtype, assumed = resolve(d.name, d.shape, d.dtype, batch, given)
        except InputSpecError as exc:
            raise ProbeFailure("bad_input", f"{exc}. Give the shape without the batch dimension.") from None
        fed.append(Fed(d, shape, dtype, assumed))
    return fed


def vocabulary_hints(tf: Any, model: Any, variables: List[Any]) -> Tuple[Optional[int], List[str]]:
    """(smallest embedding size, some vocabulary strings) where the model shows them."""
    sizes: List[int] = []
    words: List[str] = []
    for layer in _layers(model):
        if hasattr(layer, "input_dim") and type(layer).__name__ == "Embedding":
            sizes.append(int(layer.input_dim))
        if hasattr(layer, "get_vocabulary") and not words:
            try:
                vocabulary = [str(w) for w in layer.get_vocabulary()]
            except Exception:  # a lookup layer without a vocabulary yet; keep looking
                vocabulary = []
            words = [w for w in vocabulary if w and not w.startswith("[")][:64]
    if not sizes:  # a SavedModel: Keras names its embedding tables ".../embeddings"
        sizes = [int(v.shape[0]) for v in variables
                 if "embedding" in getattr(v, "name", "") and len(v.shape) == 2 and v.shape[0]]
    return (min(sizes) if sizes else None), words


def _layers(model: Any) -> List[Any]:
    found: List[Any] = []
    todo = list(getattr(model, "layers", []) or [])
    while todo and len(found) < 10000:
        layer = todo.pop()
        found.append(layer)
        todo.extend(getattr(layer, "layers", []) or [])
    return found


def generate(tf: Any, fed: List[Fed], vocabulary: Tuple[Optional[int], List[str]]) -> Dict[str, Any]:
    size, words = vocabulary
    out = {}
    for i, f in enumerate(fed):
        seed = (0, i)
        dtype = tf.as_dtype(f.dtype)
        if dtype == tf.string:
            count = 1
            for d in f.shape:
                count *= d
            pool = words or [PLACEHOLDER_STRING]
            out[f.name] = tf.reshape(tf.constant([pool[j % len(pool)] for j in range(count)]), f.shape)
            f.values = "words from the model's vocabulary" if words else f"the string '{PLACEHOLDER_STRING}'"
        elif dtype.is_floating:
            out[f.name] = tf.cast(tf.random.stateless_uniform(f.shape, seed=seed), dtype)
            f.values = "uniform in [0, 1)"
        elif dtype == tf.bool:
            out[f.name] = tf.random.stateless_uniform(f.shape, seed=seed, maxval=2, dtype=tf.int32) > 0
            f.values = "random true/false"
        elif dtype.is_integer:
            limit = size or DEFAULT_TOKEN_LIMIT
            if dtype.max < limit:
                limit = int(dtype.max)
            ids = tf.random.stateless_uniform(f.shape, seed=seed, minval=min(1, limit - 1), maxval=max(limit, 2),
                                              dtype=tf.int64)
            out[f.name] = tf.cast(ids, dtype)
            f.values = (f"ids 1 to {limit - 1} (the embedding has {size})" if size
                        else f"ids 1 to {limit - 1} (no embedding found to size them)")
        else:
            raise ProbeFailure("bad_input", f"tflaunch cannot generate {f.dtype} values for input {f.name}.")
    return out
