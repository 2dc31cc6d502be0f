"""A crash in native code (as TensorFlow's sometimes are): SIGSEGV, with output still buffered."""

import ctypes

print("about to crash")
ctypes.string_at(0)
