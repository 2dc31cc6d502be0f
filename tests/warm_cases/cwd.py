"""The working folder: os.getcwd, relative paths, and what multiprocessing recorded as the start folder."""

import multiprocessing.process
import os

print("cwd", os.getcwd())
print("relative exists", os.path.exists("cwd.py"), os.path.abspath("x"))
print("multiprocessing's original dir", multiprocessing.process.ORIGINAL_DIR)
