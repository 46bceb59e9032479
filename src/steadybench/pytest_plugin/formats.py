"""The plugin's results files: ``--steadybench-OPTION PATH`` for every output format of the
registry (:mod:`steadybench.output.writers`), named as ``run``'s ``--OPTION FILE``."""

from __future__ import annotations

from collections.abc import Iterator

from ..output.writers import ResultsWriter, builtin_writers

#: options an output format would take but that mean something else here: the plugin's
#: Markdown is the comparison with the baseline (run's --markdown writes the results)
TAKEN = ("--steadybench-markdown",)


def result_formats() -> Iterator[tuple[str, type[ResultsWriter]]]:
    """(option, format) of every results file the plugin writes, e.g.
    ("--steadybench-bmf", Bmf)."""
    for cls in builtin_writers():
        option = f"--steadybench-{cls.option}"
        if option not in TAKEN:
            yield option, cls
