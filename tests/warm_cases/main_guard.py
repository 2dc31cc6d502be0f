"""`if __name__ == "__main__"`, and the script importing itself as a module."""

import sys

if __name__ == "__main__":
    import main_guard

    print("imported as", main_guard.__name__, "main is", sys.modules["__main__"].__name__)
    print("same module", main_guard is sys.modules["__main__"])
else:
    print("running as a module")
