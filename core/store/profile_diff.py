"""What differs between two profiles, setting by setting and figure by figure."""

from __future__ import annotations

from typing import Any, Protocol

from ..settings.config import LaunchConfig


class Profile(Protocol):
    """What a diff reads of a profile (profiles.Profile, which imports this module)."""

    config: LaunchConfig
    evidence: dict[str, Any]


def diff(a: Profile, b: Profile) -> list[tuple[str, Any, Any]]:
    """(key, value in a, value in b) for every setting or evidence figure that differs."""
    flat_a, flat_b = _flatten(_profile_dict(a)), _flatten(_profile_dict(b))
    return [(k, flat_a.get(k), flat_b.get(k)) for k in sorted(set(flat_a) | set(flat_b))
            if flat_a.get(k) != flat_b.get(k)]


def _profile_dict(profile: Profile) -> dict[str, Any]:
    return {"settings": profile.config.to_dict(), "evidence": profile.evidence}


def _flatten(value: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, item in value.items():
            out.update(_flatten(item, f"{prefix}.{key}" if prefix else str(key)))
        return out
    return {prefix: value}
