"""Chained exceptions: raise ... from ..., and an error while handling another."""


def read():
    try:
        {}["missing"]
    except KeyError as exc:
        raise RuntimeError("no setting") from exc


try:
    read()
except RuntimeError:
    ratio = 1 / 0
