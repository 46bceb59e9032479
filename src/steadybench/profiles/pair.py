"""Two variants profiled and compared: what ``ab --profile`` and ``compare`` add after the
verdict (which function moved, ranked)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .backend import ProfileSettings, for_variant, rescaled, take_profile
from .diff import ProfileDiff, diff
from .model import Profile, ProfileFailure


@dataclass(frozen=True)
class PairProfiles:
    """Each side's profile (or why it has none) and, when both have one, their difference."""

    profiles: Mapping[str, Profile]
    failures: Mapping[str, ProfileFailure] = field(default_factory=dict)
    difference: ProfileDiff | None = None
    #: file base names of A that are B's under another name (``ab a.py b.py``)
    rename: Mapping[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"profiles": {k: p.to_dict() for k, p in self.profiles.items()},
                "rename": dict(self.rename),
                "failures": {k: f.message for k, f in self.failures.items()},
                "difference": self.difference.to_dict() if self.difference else None}

    def lines(self) -> list[str]:
        from .console import diff_lines, profile_lines

        out: list[str] = []
        for label, failure in self.failures.items():
            out.append(f"{label}: {failure.message}")
        if self.difference is not None:
            out += diff_lines(self.difference)
        else:
            for label, profile in self.profiles.items():
                out += profile_lines(profile, label=label)
        notes = sorted({n for p in self.profiles.values() for n in p.notes})
        out += [f"  note: {n}" for n in notes] if self.difference is not None else []
        return out


def compare_profiles(profiles: Mapping[str, Profile], rename: Mapping[str, str] | None = None,
                     failures: Mapping[str, ProfileFailure] | None = None) -> PairProfiles:
    from .diff import guess_rename

    a, b = profiles.get("A"), profiles.get("B")
    names = {k.rsplit("/", 1)[-1]: v.rsplit("/", 1)[-1] for k, v in (rename or {}).items()}
    difference = None
    if a is not None and b is not None and a.unit == b.unit:
        names = names or guess_rename(a, b)
        difference = diff(a, b, names)
    return PairProfiles(dict(profiles), dict(failures or {}), difference, names)


def profile_variants(va: Any, vb: Any, settings: ProfileSettings, time_limit: float,
                     per_call: Mapping[str, float | None] | None = None) -> PairProfiles:
    """One profiled execution of each variant (after the measured ones), each scaled to its
    unprofiled time per call when ``per_call`` gives it."""
    profiles: dict[str, Profile] = {}
    failures: dict[str, ProfileFailure] = {}
    for variant in (va, vb):
        got = take_profile(for_variant(variant, settings), time_limit)
        if isinstance(got, ProfileFailure):
            failures[variant.label] = got
        else:
            profiles[variant.label] = rescaled(got, (per_call or {}).get(variant.label))
    rename = {}
    if getattr(va, "path", None) and getattr(vb, "path", None):
        rename = {va.path: vb.path}
    return compare_profiles(profiles, rename, failures)
