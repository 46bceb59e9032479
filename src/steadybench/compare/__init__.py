"""Comparing benchmark results with a stated confidence (the Speedup-Test protocol, ``003``).

* :mod:`.readers` — plain/CSV sample files, steadybench results, hyperfine and pyperf exports;
* :mod:`.protocol` — the mean and median protocols for one pair, in both directions;
* :mod:`.suite` — overall gain, proportion of accelerated benchmarks, suite CSV files;
* :mod:`.plan` — runs needed for a precision or a power;
* :mod:`.output` — table, JSON, Markdown and CSV renderings;
* :mod:`.choices` — the values of the command line's choice options (light).

The names below load on first use (PEP 562), so the command line can import
:mod:`.choices` without numpy and scipy.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

#: public name → module (relative to this package) that defines it
_EXPORTS: dict[str, str] = {
    **dict.fromkeys(
        ("NoMatchError", "compare_files", "compare_sets", "compare_suite", "match"), ".core"),
    **dict.fromkeys(
        ("FASTER", "INCONCLUSIVE", "NO_DIFFERENCE", "SLOWER", "CompareOptions"), ".protocol"),
    **dict.fromkeys(("Sample", "SampleFormatError", "SampleSet", "read_samples"), ".readers"),
}

__all__ = [
    "FASTER", "INCONCLUSIVE", "NO_DIFFERENCE", "SLOWER", "CompareOptions", "NoMatchError",
    "Sample", "SampleFormatError", "SampleSet", "compare_files", "compare_sets", "compare_suite",
    "match", "read_samples",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))


if TYPE_CHECKING:  # for type checkers and editors: the same names, eagerly
    from .core import NoMatchError, compare_files, compare_sets, compare_suite, match
    from .protocol import FASTER, INCONCLUSIVE, NO_DIFFERENCE, SLOWER, CompareOptions
    from .readers import Sample, SampleFormatError, SampleSet, read_samples
