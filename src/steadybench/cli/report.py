"""``steadybench report``: one self-contained HTML page from results files."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from ..errors import ConfigurationError, ResultsFormatError, SteadybenchError
from ..fileio import read_user_json
from ..gc_pause import gc_paused
from .options import confidence_option
from .validate import count


def _load_comparison(path: str) -> dict[str, Any]:
    data = read_user_json(path, ResultsFormatError)
    if isinstance(data, dict) and "schema_version" in data:
        raise ResultsFormatError(f"{path}: a results file, not a comparison (give results files "
                                 "as RESULTS; --comparison takes the JSON of steadybench "
                                 "compare --json)")
    if not isinstance(data, dict) or not any(
            k in data for k in ("benchmarks", "pairs", "suite")):
        raise ResultsFormatError(f"{path}: not a comparison (the JSON of steadybench compare "
                                 "--json)")
    return data


def _load_inputs(paths: tuple[str, ...]) -> tuple[list[Any], list[dict[str, Any]],
                                                  list[dict[str, Any]], tuple[str, ...]]:
    """Each file by what it holds: results (run, exec, iters, sweep), a comparison (compare
    --json) or an A/B result (ab --json). Returns (results, comparisons, ab documents, the
    paths of the results files)."""
    from ..output.report import is_ab
    from ..output.results_io import results_from_data

    results, comparisons, ab_docs, kept = [], [], [], []
    for path in paths:
        data = read_user_json(path, ResultsFormatError)
        if is_ab(data):
            ab_docs.append(data)
        elif isinstance(data, dict) and "schema_version" not in data and any(
                k in data for k in ("pairs", "suite")) and isinstance(data.get("benchmarks"),
                                                                      list):
            comparisons.append(data)
        else:
            results.append(results_from_data(data, path, consume=True))  # data not read again
            kept.append(path)
    return results, comparisons, ab_docs, tuple(kept)


def _comparison_sources(path: str, doc: dict[str, Any]) -> tuple[list[Any], tuple[str, ...]]:
    """The BASE and NEW results files a comparison names (``inputs``), looked for as written
    and beside the comparison file; none when either is missing or not a results file."""
    from ..output.results_io import load_results

    inputs = doc.get("inputs") if isinstance(doc.get("inputs"), dict) else {}
    found = []
    for side in ("base", "new"):
        name = inputs.get(side)
        if not isinstance(name, str):
            return [], ()
        candidates = [Path(name), Path(path).parent / name]
        hit = next((c for c in candidates if c.is_file()), None)
        if hit is None:
            return [], ()
        try:
            found.append((load_results(hit), str(hit)))
        except SteadybenchError:
            return [], ()
    return [r for r, _ in found], tuple(p for _, p in found)


def _protocol_comparison(base: str, new: str, confidence: float) -> dict[str, Any]:
    """The Speedup-Test comparison of two results files (``steadybench compare``)."""
    from ..compare import CompareOptions, compare_files

    comparison, _base, _new = compare_files(base, new, CompareOptions(confidence=confidence))
    return comparison.to_dict()


@click.command("report")
@click.argument("results", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("-o", "--output", "output", type=click.Path(dir_okay=False),
              default="report.html", show_default=True, help="The HTML file to write.")
@click.option("--plots", "plots_dir", type=click.Path(file_okay=False),
              help="Also write every figure as a separate file into this folder.")
@click.option("--plot-format", type=click.Choice(["png", "svg"]), default="png",
              show_default=True, help="Format of the files written with --plots.")
@click.option("--compare/--no-compare", "compare", default=None,
              help="Compare the two results files with the speedup protocol and show the "
                   "verdicts first (the default with exactly two files).")
@click.option("--comparison", "comparison_path", type=click.Path(dir_okay=False),
              help="Show this comparison (the JSON written by steadybench compare --json).")
@confidence_option(of="the comparison made with --compare")
@click.option("--window", type=count(min=1), default=10, show_default=True,
              help="Moving-median window (runs) of the run-by-run plots.")
@gc_paused()  # every case of every file is kept to the end (steadybench.gc_pause)
def report_cmd(results: tuple[str, ...], output: str, plots_dir: str | None, plot_format: str,
               compare: bool | None, comparison_path: str | None, confidence: float,
               window: int) -> None:
    """Write a self-contained HTML report (plots embedded) of one or more RESULTS files: the
    JSON of run, exec, iters, sweep, compare --json or ab --json."""
    from ..output.report import write_report

    if not 0 < confidence < 1:
        raise ConfigurationError(f"--confidence must be between 0 and 1, got {confidence}")
    loaded, comparisons, ab_docs, kept = _load_inputs(results)
    comparison_inputs = [p for p in results if p not in kept]
    results = kept
    comparison = _load_comparison(comparison_path) if comparison_path else None
    if comparisons:
        if comparison is not None or len(comparisons) > 1:
            raise ConfigurationError("give one comparison (compare --json output) at a time")
        comparison = comparisons[0]
        compare = False if compare is None else compare
        if not loaded:  # the results the comparison was made from, for its pair plots
            loaded, results = _comparison_sources(comparison_inputs[0], comparison)
    automatic = compare is None
    if len(loaded) == 2 and comparison is None and compare is not True:
        from ..counts.report import is_counts, pairing

        kinds = [is_counts(r) for r in loaded]
        if kinds[0] != kinds[1]:  # one file of counts, one of time: side by side, not a ratio
            t, c = (0, 1) if kinds[1] else (1, 0)
            loaded[c].context["counts_and_time"] = pairing(
                loaded[t], loaded[c], Path(results[t]).name, Path(results[c]).name)
            compare = False
            automatic = False
    if automatic:
        compare = len(results) == 2 and comparison is None
    if compare:
        if len(results) != 2:
            raise ConfigurationError(f"--compare needs exactly two results files, got "
                                     f"{len(results)}")
        if comparison is not None:
            raise ConfigurationError("give --compare or --comparison, not both")
        try:
            comparison = _protocol_comparison(results[0], results[1], confidence)
        except SteadybenchError as exc:
            if not automatic:
                raise
            # two files that cannot be compared still get their report, with the reason
            comparison = {"benchmarks": [], "warnings": [f"not compared: {exc}"]}
    path = write_report(loaded, output, comparison=comparison, plots_dir=plots_dir,
                        plot_format=plot_format, window=window,
                        labels=[Path(p).name for p in results], ab=ab_docs,
                        confidence=confidence)
    click.echo(f"wrote {path}" + (f" and the figures in {plots_dir}" if plots_dir else ""),
               err=True)


commands = [report_cmd]
