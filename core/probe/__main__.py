"""Entry point of a child that runs this file by path: ``python .../probe/__main__.py ARGS``.

Running a file puts its folder first on sys.path, where our module names (``channel``,
``inputs``...) would shadow the user's own modules. So the folder is taken off again (what
``python -P`` does on 3.11+, but the user's interpreter may be older) and the modules are
loaded as a package from this location, under a name no user module has.
"""

import importlib.util
import os
import sys
import types
from typing import Callable, TypeVar

T = TypeVar("T")

PACKAGE = "tflaunch_probe"
_HERE = os.path.dirname(os.path.abspath(__file__))


def load_package(name: str = PACKAGE, folder: str = _HERE) -> types.ModuleType:
    """This folder as a package named `name`, found by location rather than on sys.path."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(
        name, os.path.join(folder, "__init__.py"), submodule_search_locations=[folder])
    if spec is None or spec.loader is None:  # not for a .py path: there is always a source loader
        raise ImportError(f"cannot load {folder} as a package")
    package = importlib.util.module_from_spec(spec)
    sys.modules[name] = package
    spec.loader.exec_module(package)
    return package


def own_bytecode(load: Callable[[], T]) -> T:
    """Run `load`, which imports tflaunch's own modules, with Python free to write their
    bytecode, even under PYTHONDONTWRITEBYTECODE (containers, clusters): else every launch
    compiled them from source again (about 0.1 s, counted in its spawn or against watching).
    Only what `load` imports is affected: the program's and TensorFlow's imports after it
    keep the interpreter's setting. The probe and the launch hook both load through here."""
    was = sys.dont_write_bytecode
    sys.dont_write_bytecode = False
    try:
        return load()
    finally:
        sys.dont_write_bytecode = was


if __name__ == "__main__":
    if sys.path and os.path.abspath(sys.path[0] or ".") == _HERE:
        del sys.path[0]
    own_bytecode(lambda: (load_package(), importlib.import_module(PACKAGE + ".main"))[1]).main()
