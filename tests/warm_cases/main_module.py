"""The attributes of the __main__ module as a cold interpreter sets them."""

import sys

main = sys.modules["__main__"]
print("main is me", main.__dict__ is globals())
print("globals", sorted(globals()))
print("spec", __spec__)
print("package", repr(__package__))
print("loader", type(__loader__).__name__)
print("cached", __cached__)
print("builtins", type(__builtins__).__name__)
print("annotations", __annotations__ if "__annotations__" in globals() else "missing")
