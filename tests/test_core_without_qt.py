"""core/ is the model layer: importable with neither Qt nor TensorFlow."""

from __future__ import annotations

import pkgutil
import subprocess
import sys

import tflaunch.core

BLOCKER = """
import sys
class Block:
    def find_spec(self, name, path=None, target=None):
        if name.split('.')[0] in ('PySide6', 'shiboken6', 'pyqtgraph', 'tensorflow', 'keras'):
            raise ImportError('blocked: ' + name)
sys.meta_path.insert(0, Block())
import importlib
for name in {modules!r}:
    importlib.import_module(name)
bad = [m for m in sys.modules if m.split('.')[0] in ('PySide6', 'tensorflow') or m.startswith('tflaunch.gui')]
assert not bad, bad
print('ok')
"""


def test_every_core_module_imports_with_qt_and_tensorflow_blocked():
    modules = [f"tflaunch.core.{m.name}" for m in pkgutil.iter_modules(tflaunch.core.__path__)]
    assert len(modules) >= 10
    done = subprocess.run([sys.executable, "-c", BLOCKER.format(modules=modules)],
                          capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "ok", done.stderr
