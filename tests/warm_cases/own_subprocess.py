"""The script's own children: a Python subprocess and a shell, writing into the same stdout."""

import os
import subprocess
import sys

print("parent first (buffered)")
subprocess.run([sys.executable, "-c", "import sys; print('child', sys.argv[1:])", "x"], check=True)
os.system("echo from the shell")
print("child exit", subprocess.run([sys.executable, "-c", "raise SystemExit(4)"]).returncode)
