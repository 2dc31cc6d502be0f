"""`python -m pkg.tool ARGS`: argv, __file__, __spec__, __package__, sys.path[0]."""

import sys

print("argv", sys.argv)
print("file", __file__)
print("spec", __spec__.name, __spec__.origin)
print("package", __package__)
print("path0", sys.path[0])
print("main is me", sys.modules["__main__"].__dict__ is globals())
