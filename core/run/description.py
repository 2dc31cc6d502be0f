"""What a child described (its model, its environment, the settings it read back), kept as it
came: the history and the JSON write it back unchanged, keys nobody reads yet and their order
included, while the typed facts built on it (model_facts, environment_facts, read_back) read
the figures tflaunch uses."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Self


@dataclass(frozen=True)
class Description:
    """`described` is what the child sent; a subclass reads its figures in __post_init__."""

    described: Mapping[str, Any] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.described)  # as the dict it replaces: empty until the child says anything

    def told(self, more: Mapping[str, Any]) -> Self:
        """This description with what a later word said (its keys replace the same keys, in
        their place, or are added)."""
        return type(self)({**self.described, **more})

    def to_dict(self) -> dict[str, Any]:
        """As the history and the JSON keep it: the description as it came."""
        return dict(self.described)
