"""The formats CI dashboards and other benchmark tools read and write.

* write: Bencher Metric Format (:mod:`.bmf`), github-action-benchmark's
  ``customSmallerIsBetter`` (:mod:`.gab`), pytest-benchmark's JSON (:mod:`.pytest_benchmark`);
* read: pytest-benchmark JSON and asv result files (:mod:`.pytest_benchmark`, :mod:`.asv`), into
  ``compare`` (as sample sets) and into the history (as steadybench results).

Every writer takes a :class:`~steadybench.model.results.Results` and reads each case's one
:class:`~steadybench.model.estimate.Estimate`, so a dashboard shows the figure the console shows.
"""

from __future__ import annotations

#: ``--format`` names of the writers, for ``steadybench history export`` and the pytest plugin
WRITERS = ("bmf", "github-action-benchmark", "pytest-benchmark")


def render(fmt: str, results: object) -> str:
    """``results`` in the format named ``fmt`` (one of :data:`WRITERS`), as JSON text."""
    from ..errors import ConfigurationError

    if fmt == "bmf":
        from .bmf import to_bmf_json

        return to_bmf_json(results)  # type: ignore[arg-type]
    if fmt == "github-action-benchmark":
        from .gab import to_gab_json

        return to_gab_json(results)  # type: ignore[arg-type]
    if fmt == "pytest-benchmark":
        from .pytest_benchmark import to_pytest_benchmark_json

        return to_pytest_benchmark_json(results)  # type: ignore[arg-type]
    raise ConfigurationError(f"unknown format {fmt!r}; choose one of {', '.join(WRITERS)}")
