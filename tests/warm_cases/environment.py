"""The environment the script sees: os.environ, the C library's getenv, the temporary folder."""

import ctypes
import os
import tempfile

print("environ", sorted(os.environ.items()))
getenv = ctypes.CDLL(None).getenv
getenv.restype = ctypes.c_char_p
print("C getenv", getenv(b"CASES_LAUNCHER_PID"), getenv(b"HOME"))
print("tempdir", tempfile.gettempdir())
