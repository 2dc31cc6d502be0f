"""The probe runs in any interpreter with TensorFlow: at module level it imports only the
standard library and its own package, never tflaunch's other modules."""

from __future__ import annotations

import ast
import sys

from tflaunch.core.settings.child import PROBE_DIR


def module_level_imports(source: str) -> list[tuple[str, int]]:
    """(module, relative level) of every import executed when the module loads."""
    found = []
    for node in ast.parse(source).body:  # top-level statements only: imports in functions are lazy
        if isinstance(node, ast.Import):
            found += [(alias.name, 0) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            found.append((node.module or "", node.level))
    return found


def test_every_module_level_import_of_the_probe_is_standard_library():
    files = sorted(PROBE_DIR.rglob("*.py"))  # its rooms (observer/, model/, warm/, serving/) too
    assert len(files) >= 8 and any(p.parent != PROBE_DIR for p in files), files
    for path in files:
        for module, level in module_level_imports(path.read_text(encoding="utf-8")):
            if level:  # its own package
                continue
            top = module.split(".")[0]
            where = path.relative_to(PROBE_DIR)
            assert top in sys.stdlib_module_names or top == "__future__", f"{where} imports {module}"


def test_the_check_sees_a_third_party_import():
    assert module_level_imports("import numpy\nfrom tflaunch.core import units\n") == [
        ("numpy", 0), ("tflaunch.core", 0)]
