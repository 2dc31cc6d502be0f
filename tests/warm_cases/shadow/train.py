"""A project whose own package `code` shares its name with a standard module TensorFlow imports."""

from code.models import build

print("built", build())
