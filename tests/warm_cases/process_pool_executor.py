"""concurrent.futures' process pool (the default start method) on a function defined here."""

from concurrent.futures import ProcessPoolExecutor


def cube(x):
    return x**3


if __name__ == "__main__":
    with ProcessPoolExecutor(2) as pool:
        print("cubes", list(pool.map(cube, range(5))))
