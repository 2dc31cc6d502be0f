"""argparse's --help: the program's name from argv[0], the description from the docstring."""

import argparse

parser = argparse.ArgumentParser(description=__doc__)
parser.add_argument("--epochs", type=int, default=1, help="how many passes over the data")
parser.parse_args()
