"""The formats CI dashboards and other benchmark tools read and write.

* write: Bencher Metric Format (:mod:`.bmf`), github-action-benchmark's
  ``customSmallerIsBetter`` (:mod:`.gab`), pytest-benchmark's JSON (:mod:`.pytest_benchmark`);
* read: pytest-benchmark JSON and asv result files (:mod:`.pytest_benchmark`, :mod:`.asv`), into
  ``compare`` (as sample sets) and into the history (as steadybench results).

Every writer takes a :class:`~steadybench.model.results.Results` and reads each case's one
:class:`~steadybench.model.estimate.Estimate`, so a dashboard shows the figure the console shows.
"""

from __future__ import annotations

#: the dashboard formats' names in the output-format registry (steadybench.registry.writers)
WRITERS = ("bmf", "github-action-benchmark", "pytest-benchmark")


def render(fmt: str, results: object) -> str:
    """``results`` in the format named ``fmt``, as text: any format of the output-format
    registry (:mod:`steadybench.output.writers`)."""
    from ..output.writers import writer

    return writer(fmt).render(results)  # type: ignore[arg-type]
