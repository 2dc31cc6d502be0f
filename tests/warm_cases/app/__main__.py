"""`python app`: a folder with a __main__.py; then an error, to see the traceback's frames."""

import sys

print("argv0", sys.argv[0], "path0", sys.path[0], "file", __file__, "spec", __spec__)
raise RuntimeError("from the folder's __main__")
