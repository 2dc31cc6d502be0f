"""Unseeded random numbers: each run of a script must draw new ones."""

import random
import tempfile
import uuid

import numpy as np

print("random:", random.random())
print("numpy global:", np.random.rand())
print("numpy generator:", np.random.default_rng().random())
print("uuid4:", uuid.uuid4())
print("tempfile name:", tempfile.NamedTemporaryFile().name)
