"""inspect on the script's own functions: the source text and the file it comes from."""

import inspect


def step(x):
    return x + 1  # the source inspect shows


print(inspect.getsource(step))
print("file", inspect.getsourcefile(step))
print("module", inspect.getmodule(step).__name__)
