"""Pickling a class and a function defined in __main__ (what multiprocessing and checkpoints do)."""

import pickle


class Point:
    def __init__(self, x):
        self.x = x


def scale(p):
    return p.x * 2


data = pickle.dumps((Point(21), scale))
point, function = pickle.loads(data)
print("round trip", function(point), b"__main__" in data)
