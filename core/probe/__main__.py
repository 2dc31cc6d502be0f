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


def _load_main() -> types.ModuleType:
    """The probe's modules, loaded with Python free to write their bytecode, even under
    PYTHONDONTWRITEBYTECODE: else every launch compiled them again, counted in its spawn.
    What they import later (TensorFlow, the model's code) keeps the interpreter's setting."""
    was = sys.dont_write_bytecode
    sys.dont_write_bytecode = False
    try:
        load_package()
        return importlib.import_module(PACKAGE + ".main")
    finally:
        sys.dont_write_bytecode = was


if __name__ == "__main__":
    if sys.path and os.path.abspath(sys.path[0] or ".") == _HERE:
        del sys.path[0]
    _load_main().main()
