"""Output formats: one class per format, found by name in :data:`steadybench.registry.writers`.

A format is a subclass of :class:`ResultsWriter` with a name, the command-line option that asks
for it and a :meth:`~ResultsWriter.render` of a :class:`~steadybench.model.results.Results`
to text. ``run``, ``evaluate`` and ``edges`` (:func:`steadybench.cli.common.output_options`:
one ``--OPTION FILE`` per built-in format), ``history export --format NAME``, and the pytest
plugin (``--steadybench-OPTION FILE``) all write through the registry, so each offers every
format, and a format added here (or by another package under the ``steadybench.writers``
entry-point group, ``history export --format`` then finds it) is one class::

    class Lines(ResultsWriter):
        name, option, label = "lines", "lines", "one line per case"

        def render(self, results):
            return "".join(f"{c.label} {c.estimate['value']}\\n" for c in results.cases)

Built in: steadybench's own JSON (the results file every other command reads), JUnit-style XML,
CSV, Markdown, and the formats of CI dashboards and other tools (:mod:`steadybench.formats`:
Bencher's BMF, github-action-benchmark's, pytest-benchmark's JSON). Every file is written
atomically. Nothing heavy is imported until a format renders.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

if TYPE_CHECKING:
    from ..model.results import Results


class ResultsWriter:
    """One output format of results."""

    #: the name ``history export --format`` and the registry know it by
    name: ClassVar[str] = ""
    #: the option asking for it: ``--OPTION FILE`` (``--steadybench-OPTION`` in the plugin)
    option: ClassVar[str] = ""
    #: what the file is, for ``--help``
    label: ClassVar[str] = ""

    def render(self, results: Results) -> str:
        """The file's text."""
        raise NotImplementedError

    def write(self, results: Results, path: str | os.PathLike[str]) -> Path:
        """Write the file atomically; the path written."""
        from ..fileio import atomic_write_text

        return atomic_write_text(path, self.render(results))


class SteadybenchJson(ResultsWriter):
    name, option, label = "steadybench", "json", "steadybench's JSON (the results file)"

    def render(self, results: Results) -> str:
        from .results_io import results_to_json

        return results_to_json(results)

    def write(self, results: Results, path: str | os.PathLike[str]) -> Path:
        from .results_io import write_results

        return write_results(results, path)


class Xml(ResultsWriter):
    name, option, label = "xml", "xml", "XML"

    def render(self, results: Results) -> str:
        from .files import results_to_xml

        return results_to_xml(results)


class Csv(ResultsWriter):
    name, option, label = "csv", "csv", "CSV"

    def render(self, results: Results) -> str:
        from .files import results_to_csv

        return results_to_csv(results)


class Markdown(ResultsWriter):
    name, option, label = "markdown", "markdown", "Markdown"

    def render(self, results: Results) -> str:
        from .files import results_to_markdown

        return results_to_markdown(results)


class Bmf(ResultsWriter):
    name, option, label = "bmf", "bmf", "Bencher Metric Format JSON"

    def render(self, results: Results) -> str:
        from ..formats.bmf import to_bmf_json

        return to_bmf_json(results)


class GithubActionBenchmark(ResultsWriter):
    name, option, label = ("github-action-benchmark", "gab",
                           "github-action-benchmark's customSmallerIsBetter JSON")

    def render(self, results: Results) -> str:
        from ..formats.gab import to_gab_json

        return to_gab_json(results)


class PytestBenchmark(ResultsWriter):
    name, option, label = "pytest-benchmark", "pb-json", "pytest-benchmark's JSON"

    def render(self, results: Results) -> str:
        from ..formats.pytest_benchmark import to_pytest_benchmark_json

        return to_pytest_benchmark_json(results)


def writer(name: str) -> ResultsWriter:
    """The format called ``name`` (ConfigurationError listing the names when unknown)."""
    from ..registry import writers

    return writers.create(name)


def builtin_writers() -> list[type[ResultsWriter]]:
    """The built-in formats, in the order their files are written (no entry point is read:
    the command-line options are made from these at start-up)."""
    from ..registry import writers

    return [writers.get(name) for name in writers.builtin_names()]


def __getattr__(attr: str) -> Any:
    """``WRITERS``: every built-in format's ``write`` by its option name (json, xml, csv,
    markdown, bmf, gab, pb-json), made on first use."""
    if attr == "WRITERS":
        return {cls.option: cls().write for cls in builtin_writers()}
    raise AttributeError(f"module {__name__!r} has no attribute {attr!r}")


def write(name: str, results: Results, path: str | os.PathLike[str]) -> Path:
    """``results`` written as ``name`` to ``path`` (atomically)."""
    return writer(name).write(results, path)
