"""``compare BASE NEW`` when both results files carry profiles (``run --profile``): per case
present in both, the functions whose cost changed most (:mod:`.diff`), BASE as A, NEW as B."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .model import Profile
from .pair import PairProfiles, compare_profiles


def _profiles(results: Any) -> dict[str, Profile]:
    raw = getattr(results, "context", {}).get("profiles") if results is not None else None
    out: dict[str, Profile] = {}
    if not isinstance(raw, Mapping):
        return out
    for label, data in raw.items():
        if isinstance(data, Mapping) and "frames" in data:
            try:
                out[str(label)] = Profile.from_dict(data)
            except ValueError:
                continue
    return out


def profile_pairs(base: Any, new: Any) -> dict[str, PairProfiles]:
    """Case label → the two profiles and their difference, for cases profiled in both."""
    a, b = _profiles(base), _profiles(new)
    return {label: compare_profiles({"A": a[label], "B": b[label]})
            for label in a if label in b}


def profile_lines(pairs: Mapping[str, PairProfiles]) -> list[str]:
    lines: list[str] = []
    for label, pair in pairs.items():
        lines.append(f"{label} (A = BASE, B = NEW):")
        lines += pair.lines()
    return lines
