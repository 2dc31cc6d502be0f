"""__del__ of an object held by the main module runs when the interpreter ends."""

import sys


class Writer:
    def __del__(self):
        sys.stdout.write("finalised at exit\n")


writer = Writer()
print("main ends")
