"""Where the script thinks it is: argv, __file__, sys.path[0], __name__ (run in every argv form)."""

import os
import sys

print("argv", sys.argv)
print("file", __file__)
print("path0", sys.path[0])
print("name", __name__)
print("dir of file exists", os.path.isdir(os.path.dirname(os.path.abspath(__file__))))
