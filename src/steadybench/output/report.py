"""A self-contained HTML report of any steadybench result: ``run``, ``exec``, ``iters``,
``sweep`` (results files), ``compare`` (its JSON) and ``ab`` (its JSON).

The page answers first and explains after, the order criterion.rs and asv use:

1. **Summary**: the verdicts (``compare``, ``ab``), the plain-words relative comparisons of
   every set of variants (:mod:`steadybench.output.groups`, said by
   :func:`steadybench.output.relative.summary_lines`: "join is 1.520× faster than concat
   [1.490, 1.550]"), the growth class of every parameter scan, and what went wrong.
2. **Results**: one table of every case with its estimate and interval in one unit, then the
   figures of the whole result: time relative to the fastest, growth plots (log–log, fitted
   class), box plots, the comparison and A/B figures.
3. **Details** per case: the run-by-run series, histogram, error evolution and fits, the
   statistics, warnings and errors.
4. **Environment** and machine settings, collapsed (``<details>``).

Numbers are written with their unit everywhere (a time is never shown as a bare number of
seconds), p-values below 1e-16 as "< 1e-16", and nothing is pasted as raw JSON: nested values
become rows with dotted keys.

The plots are embedded as PNG ``data:`` URIs and the style sheet is inline, so the file needs
no network and works from a ``file://`` URL; a Content-Security-Policy forbids every fetch and
every script. Every text that comes from the measured benchmarks goes through jinja2's
autoescaping; ids are made from indices, never from names.

Scale: figures are drawn in worker processes (``fork``, one per core up to
:data:`~steadybench.output.figurepool.MAX_WORKERS`, or ``STEADYBENCH_REPORT_WORKERS``) when
there are many, each waited for at most ``STEADYBENCH_FIGURE_TIMEOUT`` seconds; beyond
:data:`COMPACT_CASES` cases each case gets one small figure instead of three.

This module is the entry point (:func:`write_report`); the work is done by four modules with
one job each: :mod:`~steadybench.output.figurepool` (drawing the figures),
:mod:`~steadybench.output.reportviews` (the typed view models the template shows),
:mod:`~steadybench.output.reportanalysis` (which cases are compared, growth series) and
:mod:`~steadybench.output.reporttext` (how a value is written).
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping, Sequence
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING, Any

import jinja2

from .. import __version__
from ..errors import ConfigurationError
from ..fileio import atomic_write_pieces
from ..model.results import PRIMARY_METRIC, Results
from . import plotdata as pd
from .figurepool import FigureSet, Image, draw_all
from .reportanalysis import headline_comparison, meter_metrics
from .reporttext import factor_words, human, num_text, pct_text, rows
from .reportviews import CONTEXT_SECTIONS, ab_view, comparison_view, input_view
from .sanitize import html_text

if TYPE_CHECKING:
    from ..compare.result import Comparison

__all__ = ["COMPACT_CASES", "CONTEXT_SECTIONS", "Image", "human", "is_ab", "meter_metrics",
           "rows", "simple_comparison", "write_report"]

TEMPLATES = Path(__file__).with_name("templates")
#: more cases than this (over all inputs) → one compact figure per case
COMPACT_CASES = 24
#: the fallback comparison of two results without ``steadybench compare``'s document
simple_comparison = headline_comparison


def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES)),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        # every plain string shown has its control characters and bidi overrides escaped
        finalize=lambda value: html_text(value) if type(value) is str else value,
    )
    env.filters["in_unit"] = pd.format_value
    env.filters["num"] = num_text
    env.filters["pct"] = pct_text
    env.filters["factor"] = factor_words
    env.filters["pvalue"] = pd.p_value_text
    return env


def is_ab(doc: Any) -> bool:
    """Whether ``doc`` is the JSON of ``steadybench ab``."""
    return isinstance(doc, Mapping) and doc.get("kind") == "steadybench-ab"


def write_report(results_list: list[Results], path: str | os.PathLike[str], *,
                 comparison: Comparison | Mapping[str, Any] | None = None,
                 plots_dir: str | None = None,
                 plot_format: str = "png", window: int = 10,
                 labels: Sequence[str] | None = None,
                 ab: Sequence[Mapping[str, Any]] | None = None,
                 confidence: float = 0.95) -> Path:
    """Write a self-contained HTML report; return the path.

    Args:
        results_list: Results of ``run``, ``exec``, ``iters`` or ``sweep`` (for example a
            baseline and a candidate); may be empty when a ``comparison`` or ``ab`` is given.
        path: the HTML file to write (atomically).
        comparison: a :class:`~steadybench.compare.result.Comparison`, or a comparison
            document (``steadybench compare --json``, or another tool's with the keys
            :mod:`steadybench.output.comparedata` reads); its verdicts and the
            suite overview are shown first. With two results and no comparison, the pairs are
            matched and the ratio of their estimates is shown with its interval (as the
            relative summaries compute it), labelled as such (no test).
        plots_dir: also write every figure there as a separate file.
        plot_format: ``png`` or ``svg`` for the files in ``plots_dir`` (the report embeds PNG).
        window: moving-median window of the run-by-run series.
        labels: a name per input (file names, by default "results 1", "results 2", ...).
        ab: documents written by ``steadybench ab --json``.
        confidence: level of the intervals of the relative comparisons.
    """
    if isinstance(results_list, Results):
        results_list = [results_list]
    results_list = list(results_list)
    ab_docs = list(ab or [])
    if not all(isinstance(r, Results) for r in results_list):
        raise ConfigurationError("write_report needs a list of Results")
    if not all(is_ab(d) for d in ab_docs):
        raise ConfigurationError("write_report: ab documents must be steadybench ab JSON")
    if not results_list and comparison is None and not ab_docs:
        raise ConfigurationError("write_report needs at least one Results, a comparison or "
                                 "an ab result")
    if plot_format not in ("png", "svg"):
        raise ConfigurationError(f"plot format must be png or svg, not {plot_format!r}")
    if labels is not None and len(labels) != len(results_list):
        raise ConfigurationError("write_report: one label per results input")
    names = list(labels) if labels else [f"results {i}" for i in range(1, len(results_list) + 1)]
    if plots_dir:  # the folder asked for (not its parents, which must exist)
        Path(plots_dir).mkdir(exist_ok=True)
    figs = FigureSet(Path(plots_dir) if plots_dir else None, plot_format)
    total_cases = sum(len(r.cases) for r in results_list)
    compact = total_cases > COMPACT_CASES

    shown = None
    if comparison is None and len(results_list) == 2:
        comparison = headline_comparison(results_list[0], results_list[1], confidence)
    from ..compare.result import Comparison

    if isinstance(comparison, Comparison):  # the view reads the document's keys
        comparison = comparison.to_dict()
    if comparison is not None:
        if not isinstance(comparison, Mapping):
            raise ConfigurationError("comparison must be a dict (the compare JSON)")
        shown = comparison_view(comparison, results_list, figs, with_pair_plots=not compact)
    ab_views = [ab_view(doc, i, figs) for i, doc in enumerate(ab_docs, start=1)]
    inputs = [input_view(results, name, i, len(results_list) > 1, figs, compact=compact,
                         window=window, confidence=confidence)
              for i, (results, name) in enumerate(zip(results_list, names), start=1)]
    draw_all(figs)

    kinds = []
    if shown is not None:
        kinds.append("compare")
    if ab_views:
        kinds.append("ab")
    kinds += [f"results (method {i.kind})" for i in inputs]
    title = " vs ".join(dict.fromkeys(r.suite for r in results_list)) or (
        "A/B comparison" if ab_views and comparison is None else "comparison")
    # rendered piece by piece into the file: the page of 10^6 cases is a gigabyte, and its
    # pieces joined in memory held several (issue 27 item 13)
    pieces = _environment().get_template("report.html.j2").generate(
        title=title,
        version=__version__,
        kinds=", ".join(dict.fromkeys(kinds)),
        inputs=inputs,
        comparison=shown,
        ab=ab_views,
        compact=compact,
        total_cases=total_cases,
        primary=PRIMARY_METRIC,
        script_src=_flame_script_source(),
    )
    return atomic_write_pieces(path, _blocks(pieces))


def _blocks(pieces: Iterator[str], size: int = 1 << 16, run: int = 64) -> Iterator[str]:
    """The template's many small pieces (10^6 cases make millions) joined into blocks of about
    ``size`` characters (a block ends at the first piece that reaches ``size``, so it holds at
    most one piece beyond it). Pieces are taken ``run`` at a time and a run that leaves the
    block short is joined whole by ``str.join``: a loop here over every piece was a tenth of a
    large report's time."""
    block: list[str] = []
    length = 0
    while chunk := list(islice(pieces, run)):
        chunk_length = sum(map(len, chunk))
        if length + chunk_length < size:  # most runs: no block ends in them
            block.append("".join(chunk))
            length += chunk_length
            continue
        for piece in chunk:
            block.append(piece)
            length += len(piece)
            if length >= size:
                yield "".join(block)
                block.clear()
                length = 0
    if block:
        yield "".join(block)


def _flame_script_source() -> str:
    """The one script a report may run (the flame graphs'), by its hash."""
    from ..profiles.flame import CSP_SOURCE

    return CSP_SOURCE
