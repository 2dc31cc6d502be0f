"""The import X-ray of a run: where `import tensorflow` spent its time, module group by group.

The probe times it (core/probe/import_xray.py) and sends it as the ``imports`` event;
events.checked_imports checks every figure, drops what it does not know and builds an
ImportFacts from what is left, for a child's event and a stored row alike. The history and the
JSON keep its to_dict(), which is the checked dict as it was stored before these types, key
for key and in its order, so rows written before them read back unchanged.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True)
class ModuleGroup:
    """Modules under one top-level name: seconds in their own code (`own`, the probe's "self"),
    from entering the group to leaving it (`cumulative`, what it imported included), and how
    many modules it holds."""

    name: str
    own: float
    cumulative: float
    modules: int

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "self": self.own, "cumulative": self.cumulative, "modules": self.modules}


@dataclass(frozen=True)
class PackageTime:
    """A package's own code: the seconds its modules spent in themselves, and how many it imported."""

    name: str
    own: float
    modules: int

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "self": self.own, "modules": self.modules}


@dataclass(frozen=True)
class CompiledPackage:
    """How many of a package's modules were compiled at import, of those `checked` (a sample):
    `written` were compiled and cached by this import, `uncached` compiled and not saved (every run
    pays again). `folder` is the package's folder, "" where the probe did not find it."""

    package: str
    modules: int
    checked: int
    written: int
    uncached: int
    folder: str

    def to_dict(self) -> dict[str, Any]:
        """As stored: under the package's name (ImportFacts.to_dict), its figures in field order."""
        figures = asdict(self)
        del figures["package"]
        return figures


@dataclass(frozen=True)
class ImportFacts:
    """The X-ray's figures: the import's total and native (extension modules') seconds, its
    module groups and packages, which packages' .pyc files were missing, what it read from
    storage, and the oneDNN setting and Keras versions it saw."""

    method: str | None  # how the probe timed it
    total: float
    modules: int
    native: float
    native_share: float  # 0-1
    groups: tuple[ModuleGroup, ...]
    packages: tuple[PackageTime, ...]
    compiled: tuple[CompiledPackage, ...]
    read_bytes: int | None  # None where /proc/self/io could not say
    onednn: str | None  # TF_ENABLE_ONEDNN_OPTS as set, None where unset
    keras: str | None  # the Keras and tf_keras versions imported
    tf_keras: str | None

    @classmethod
    def of(cls, checked: Mapping[str, Any]) -> ImportFacts:
        """From events.checked_imports' dict, whose every figure is of its type already."""
        return cls(checked["method"], checked["total"], checked["modules"], checked["native"],
                   checked["native_share"], tuple(ModuleGroup(g["name"], g["self"], g["cumulative"], g["modules"])
                                                  for g in checked["groups"]),
                   tuple(PackageTime(p["name"], p["self"], p["modules"]) for p in checked["packages"]),
                   tuple(CompiledPackage(name, c["modules"], c["checked"], c["written"], c["uncached"], c["folder"])
                         for name, c in checked["compiled"].items()),
                   checked["read_bytes"], checked["onednn"], checked["keras"]["keras"], checked["keras"]["tf_keras"])

    def compiled_of(self, package: str) -> CompiledPackage | None:
        return next((c for c in self.compiled if c.package == package), None)

    def to_dict(self) -> dict[str, Any]:
        """As the history and the JSON keep it: the checked dict, in its order."""
        return {"method": self.method, "total": self.total, "modules": self.modules, "native": self.native,
                "native_share": self.native_share, "groups": [g.to_dict() for g in self.groups],
                "packages": [p.to_dict() for p in self.packages],
                "compiled": {c.package: c.to_dict() for c in self.compiled}, "read_bytes": self.read_bytes,
                "onednn": self.onednn, "keras": {"keras": self.keras, "tf_keras": self.tf_keras}}
