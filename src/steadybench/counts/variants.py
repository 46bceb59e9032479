"""One variant of ``ab`` counted: what ``ab --measure`` and ``bisect --measure`` share.

A variant (:mod:`steadybench.ab.variants`) is a case of a benchmark file, maybe in a git
worktree of another revision, or a command line. Its count is the same in every invocation
(:mod:`steadybench.counts`), so it is counted once, never in rounds: a Python case through
:class:`~.python.PythonCountBackend` (the line over call counts, one execution per layout),
a command per process (:func:`~.programs.count_command`).
"""

from __future__ import annotations

from typing import Any

from ..model.implementation import Implementation
from ..model.parameters import Parameters
from ..model.results import CaseResult
from .python import CountMethod, CountSettings, PythonCountBackend, count_case
from .valgrind import Valgrind


def count_variant(variant: Any, settings: CountSettings, valgrind: Valgrind,
                  name: str | None = None) -> CaseResult:
    """Count ``variant`` once into a case named ``name`` (default: the variant's label). A
    failure is in the case's ``errors`` and its estimate is missing or not ``ok``
    (:func:`count_failure`)."""
    name = name or variant.label
    case = CaseResult(name, name, unit=settings.measure, method="count")
    if hasattr(variant, "argv"):  # a command: the count per process
        from .programs import count_command

        count_command(case, valgrind, variant.argv, settings)
        return case
    backend = PythonCountBackend(
        Implementation(name), Parameters(), name, settings, valgrind, variant.python,
        select=(variant.path, variant.selector), cwd=variant.cwd,
        extra_path=tuple(variant.extra_path or ()))
    count_case(case, backend)
    CountMethod(settings).finish(case)
    return case


def count_failure(case: CaseResult) -> str | None:
    """Why ``case`` has no count, or None when it has one."""
    if case.errors or case.estimate is None or not case.estimate.ok:
        return "; ".join(case.errors) or "no count"
    return None
