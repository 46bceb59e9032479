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

from typing import TYPE_CHECKING

from ..lazy import lazy_exports

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

__getattr__, __dir__ = lazy_exports(__name__, globals(), _EXPORTS)


if TYPE_CHECKING:  # for type checkers and editors: the same names, eagerly
    from .core import NoMatchError, compare_files, compare_sets, compare_suite, match
    from .protocol import FASTER, INCONCLUSIVE, NO_DIFFERENCE, SLOWER, CompareOptions
    from .readers import Sample, SampleFormatError, SampleSet, read_samples
