"""A multiprocessing pool of the start method in argv[1], on a function defined here."""

import multiprocessing
import sys


def square(x):
    return x * x


if __name__ == "__main__":
    with multiprocessing.get_context(sys.argv[1]).Pool(2) as pool:
        print(sys.argv[1], pool.map(square, range(5)))
