"""Comparing benchmark results with a stated confidence (the Speedup-Test protocol, ``003``).

* :mod:`.readers` — plain/CSV sample files, steadybench results, hyperfine and pyperf exports;
* :mod:`.protocol` — the mean and median protocols for one pair, in both directions;
* :mod:`.suite` — overall gain, proportion of accelerated benchmarks, suite CSV files;
* :mod:`.plan` — runs needed for a precision or a power;
* :mod:`.output` — table, JSON, Markdown and CSV renderings.
"""

from .core import NoMatchError, compare_files, compare_sets, compare_suite, match
from .protocol import FASTER, INCONCLUSIVE, NO_DIFFERENCE, SLOWER, CompareOptions
from .readers import Sample, SampleFormatError, SampleSet, read_samples

__all__ = [
    "FASTER", "INCONCLUSIVE", "NO_DIFFERENCE", "SLOWER", "CompareOptions", "NoMatchError",
    "Sample", "SampleFormatError", "SampleSet", "compare_files", "compare_sets", "compare_suite",
    "match", "read_samples",
]
