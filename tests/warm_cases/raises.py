"""An uncaught exception a few calls deep: the traceback's text, paths and frames."""


def load(path):
    return parse(path)


def parse(path):
    raise ValueError(f"cannot parse {path!r}")


print("starting")
load("config.yaml")
