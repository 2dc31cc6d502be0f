# Not run as a file: the table passes this text as `python -c CODE a b`.
import pickle
import sys


class Point:
    pass


print("argv", sys.argv)
print("path0", repr(sys.path[0]))
print("main is me", sys.modules["__main__"].__dict__ is globals())
print("pickled", type(pickle.loads(pickle.dumps(Point()))).__name__)
