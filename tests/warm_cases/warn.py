"""warnings.warn: the "path:line: Category: message" lines (and `-W error` turns it into an error)."""

import warnings


def check(value):
    if value > 1:
        warnings.warn("value is large", stacklevel=2)
    warnings.warn("check() is old", DeprecationWarning, stacklevel=1)


check(2)
print("done")
