"""What the interpreter was started with: flags, options, prefixes, the whole sys.path."""

import sys

print("flags", sys.flags)
print("warnoptions", sys.warnoptions, "xoptions", sys._xoptions)
print("executable", sys.executable, "prefix", sys.prefix, sys.base_prefix)
print("path", sys.path)
print("recursion", sys.getrecursionlimit(), "switch", sys.getswitchinterval())
