"""A cheaper answer to the question PySide6 asks of every module imported after it.

PySide6's import hook (shibokensupport.feature, for `from __feature__ import snake_case`)
asks of each newly imported module whether its source mentions "PySide6", through
inspect.getsource: a tokenize, a linecache entry and a decode per module. For pyqtgraph's
hundred and fifty modules and the window's own, that was some 50 ms of CPU before the
first paint. Here the same question is answered from the file's bytes (the word is ASCII,
so the answer is the same in any source encoding); anything not a .py file goes to
PySide6's own answer, and a PySide6 without that function is left as it is.
"""

from __future__ import annotations

import sys
from types import ModuleType

_MARK = "_tflaunch_reads_bytes"


def install() -> None:
    """Once, before the GUI's modules are imported (it imports PySide6 itself)."""
    import PySide6.QtCore  # noqa: F401 (loads the import hook this replaces a part of)

    feature = sys.modules.get("shibokensupport.feature")
    original = getattr(feature, "_mod_uses_pyside", None)
    if feature is None or original is None or getattr(original, _MARK, False):
        return

    def uses_pyside(module: ModuleType) -> bool:
        path = getattr(module, "__file__", None)
        if not isinstance(path, str) or not path.endswith(".py"):
            return bool(original(module))
        try:
            with open(path, "rb") as source:
                return b"PySide6" in source.read()
        except OSError:
            return bool(original(module))

    setattr(uses_pyside, _MARK, True)
    feature._mod_uses_pyside = uses_pyside  # type: ignore[attr-defined]
