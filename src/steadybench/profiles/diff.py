"""The difference between two profiles: which functions' cost changed, ranked.

For each function (matched by name and file, :attr:`~.model.Frame.key`; the two variants'
own files may be named as one through ``rename``) the *self* cost per call before and after,
their difference, and its share of the total change per call. Self cost points at the code
that changed: when ``parse`` gains a loop, ``parse`` moves, not only its callers.

With an exact count (callgrind) every difference is exact. With sampling, a function's cost is
``T · c / n`` for ``c`` of ``n`` samples; its standard error is ``T · sqrt(d p (1 − p) / n)``:
the binomial proportion's, inflated by the profile's design effect ``d`` (how much clustered
samples, py-spy's on a busy machine, exceed the variance of independent draws; measured,
:data:`~.sampler.DESIGN_EFFECT`), and the error of a difference is the root sum of the two
squares. A difference smaller than ``z`` of its errors
(``z = 1.96``, 95 %) is not ranked: the console says how many such there are (docs/profiles.md
names the assumption; the uncertainty of ``T`` itself is left out).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from .model import Frame, FunctionCost, Profile

Z = 1.96


@dataclass(frozen=True)
class FunctionChange:
    """One function's self cost per call in A and in B (``unit``), and the change."""

    frame: Frame
    before: float
    after: float
    difference: float
    #: standard error of ``difference`` (0 for exact counts)
    error: float
    #: share of the total change per call (may exceed 1 or be negative when others moved back)
    share: float | None
    only_in: str | None = None  # "A" or "B" when the function appears on one side only

    @property
    def significant(self) -> bool:
        """Exact: any change; sampled: a change beyond ``Z`` standard errors."""
        if self.error == 0.0:
            return self.difference != 0.0
        return abs(self.difference) > Z * self.error


@dataclass(frozen=True)
class ProfileDiff:
    """Functions by decreasing absolute change; the ones within their error last."""

    unit: str
    exact: bool
    before_total: float
    after_total: float
    samples: tuple[int, int]
    ranked: tuple[FunctionChange, ...]
    within_error: tuple[FunctionChange, ...]

    @property
    def total_change(self) -> float:
        return self.after_total - self.before_total

    @property
    def responsible(self) -> FunctionChange | None:
        return self.ranked[0] if self.ranked else None

    def to_dict(self) -> dict[str, object]:
        def row(c: FunctionChange) -> dict[str, object]:
            return {"function": c.frame.function, "file": c.frame.file, "line": c.frame.line,
                    "before": c.before, "after": c.after, "difference": c.difference,
                    "error": c.error, "share": c.share, "only_in": c.only_in}
        return {"unit": self.unit, "exact": self.exact, "before_total": self.before_total,
                "after_total": self.after_total, "samples": list(self.samples),
                "ranked": [row(c) for c in self.ranked],
                "within_error": [row(c) for c in self.within_error]}


def _error(cost: FunctionCost | None, profile: Profile) -> float:
    if profile.exact or cost is None:
        return 0.0 if profile.exact else _absent_error(profile)
    n, whole = profile.samples, profile.total_weight
    p = cost.self_weight / whole if whole else 0.0
    return (profile.total_per_call
            * math.sqrt(profile.design_effect * max(p * (1 - p), 0.0) / n) if n else 0.0)


def _absent_error(profile: Profile) -> float:
    # a function never sampled may still cost up to about one sample's worth: the error of
    # a proportion of 0 is taken as that of one sample (the "rule of one")
    n = profile.samples
    return profile.total_per_call * math.sqrt(profile.design_effect) / n if n else 0.0


def _self_keyed(profile: Profile, rename: Mapping[str, str]) -> dict[tuple[str, str],
                                                                      FunctionCost]:
    from dataclasses import replace

    from .filtering import fold_builtins

    folded = replace(profile, stacks=fold_builtins(profile.stacks))
    out: dict[tuple[str, str], FunctionCost] = {}
    for key, cost in folded.by_key().items():
        name, base = key
        out[(name, rename.get(base, base))] = cost
    return out


def _files(profile: Profile) -> set[str]:
    return {frame.key[1] for stack, _ in profile.stacks for frame in stack
            if frame.file and not frame.file.startswith("<")}


def guess_rename(a: Profile, b: Profile) -> dict[str, str]:
    """When exactly one file appears only in A and one only in B (two versions of a program
    saved under two names), they are taken as one file."""
    only_a, only_b = _files(a) - _files(b), _files(b) - _files(a)
    if len(only_a) == 1 and len(only_b) == 1:
        return {next(iter(only_a)): next(iter(only_b))}
    return {}


def diff(a: Profile, b: Profile, rename: Mapping[str, str] | None = None) -> ProfileDiff:
    """B against A. ``rename`` maps file base names of A to those of B (``ab a.py b.py``:
    ``{"a.py": "b.py"}``), so the same function in the two files is one row; without it,
    :func:`guess_rename` decides. Built-ins count for the function that called them
    (:func:`~.filtering.fold_builtins`)."""
    if a.unit != b.unit:
        raise ValueError(f"profiles in different units: {a.unit} and {b.unit}")
    if rename is None:
        rename = guess_rename(a, b)
    names = {k.rsplit("/", 1)[-1]: v.rsplit("/", 1)[-1] for k, v in rename.items()}
    fa, fb = _self_keyed(a, names), _self_keyed(b, names)
    total = b.total_per_call - a.total_per_call
    rows = []
    for key in set(fa) | set(fb):
        ca, cb = fa.get(key), fb.get(key)
        before = ca.self_per_call if ca else 0.0
        after = cb.self_per_call if cb else 0.0
        if before == 0.0 and after == 0.0:
            continue  # a caller only: its callees carry its change
        difference = after - before
        error = math.hypot(_error(ca, a), _error(cb, b))
        frame = (cb or ca).frame  # type: ignore[union-attr]
        share = difference / total if total else None
        only = "A" if cb is None else "B" if ca is None else None
        rows.append(FunctionChange(frame, before, after, difference, error, share, only))
    rows.sort(key=lambda c: (-abs(c.difference), c.frame))
    return ProfileDiff(a.unit, a.exact and b.exact, a.total_per_call, b.total_per_call,
                       (a.samples, b.samples),
                       tuple(c for c in rows if c.significant),
                       tuple(c for c in rows if not c.significant))
