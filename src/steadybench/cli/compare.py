"""``steadybench compare`` and ``steadybench plan``: verdicts at a stated confidence (``003``)."""

from __future__ import annotations

import sys
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import click

from ..compare.choices import SMALL_SAMPLE_MODES, WEIGHTS
from ..confidence import parse_fraction
from ..errors import ConfigurationError
from ..fileio import atomic_write_pieces
from ..output.tables import style_option
from ..stats.multiple import CORRECTIONS
from .common import writable_path
from .options import (
    VerdictOptions,
    confidence_option,
    equivalence_option,
    json_option,
    quiet_option,
    seed_option,
    threshold_option,
)

if TYPE_CHECKING:
    from ..compare.readers import SampleSet
    from ..compare.result import Comparison


def _emit(text: str | Iterable[str], path: str) -> None:
    """Write ``text``, or its pieces as they come, to ``path`` (``-``: standard output)."""
    if isinstance(text, str):
        text = (text,)
    if path == "-":
        for piece in text:
            sys.stdout.write(piece)
    else:
        atomic_write_pieces(path, text)


def _results_for_report(base: SampleSet | None, new: SampleSet | None) -> list[Any]:
    from ..model.results import CaseResult, Results

    out = []
    for ss in (base, new):
        if ss is None:
            continue
        full = ss.full_results()
        if full is not None:
            out.append(full)
            continue
        res = Results(suite=ss.path)
        for s in ss.samples:
            case = CaseResult(s.name, s.implementation or s.name, dict(s.params), unit=s.unit)
            for v in s.values:
                case.add_run("ok", {"wall_time": float(v)})
                case.accumulate({"wall_time": float(v)})
            res.cases.append(case)
        out.append(res)
    return out


@click.command("compare")
@click.argument("base", required=False, type=click.Path(dir_okay=False))
@click.argument("new", required=False, type=click.Path(dir_okay=False))
@click.option("--suite", "suite_path", type=click.Path(dir_okay=False),
              help="Suite CSV with columns Name, Sample1, Sample2, ConfLevel, Coef (the reference "
                   "tool's format) instead of BASE and NEW.")
@confidence_option("'auto': the highest level in 50%..99% at which a difference is found.",
                   allow_auto=True)
@click.option("--small-sample", type=click.Choice(SMALL_SAMPLE_MODES), default="inconclusive",
              show_default=True,
              help="Mean protocol, < 30 executions on a side and normality rejected: call it "
                   "inconclusive, or use a permutation test.")
@threshold_option()
@equivalence_option()
@click.option("--between-runs", type=click.Choice(["auto", "on", "off"]), default="auto",
              show_default=True,
              help="Count the variation between separate invocations (a run as a random "
                   "effect, docs/comparison.md): auto = when both sides are results of "
                   "separate runs (steadybench results, history records).")
@click.option("--verdict-by", type=click.Choice(["median", "mean"]), default="median",
              show_default=True, help="Protocol that gives the verdict.")
@click.option("--show-min", is_flag=True,
              help="Also show min(BASE)/min(NEW), labelled as not statistically meaningful.")
@click.option("--weights", type=click.Choice(WEIGHTS), default="equal", show_default=True,
              help="Weights of the overall gain of a suite (custom = the Coef column).")
@click.option("--precision", default="0.05", show_default=True,
              help="±r for the number of benchmarks needed to know the accelerated proportion.")
@click.option("--correction", type=click.Choice(CORRECTIONS), default="holm", show_default=True,
              help="Correction for testing many benchmarks at once.")
@click.option("--column", default=None,
              help="CSV column (name or 1-based number) holding the times.")
@click.option("--metric", default=None,
              help="Compare another metric the results recorded per run (a meter's name, e.g. "
                   "energy or cpu_time) instead of the time.")
@click.option("--resamples", type=click.IntRange(min=100), default=9999, show_default=True,
              help="Permutations of the small-sample permutation test.")
@seed_option("the permutation test", default=0)
@json_option("the comparison")
@click.option("--markdown", "markdown_path", type=click.Path(dir_okay=False),
              callback=writable_path,
              help="Write a Markdown table (for a pull-request comment) ('-' for stdout).")
@click.option("--csv", "csv_path", type=click.Path(dir_okay=False), callback=writable_path,
              help="Write CSV with the reference tool's columns ('-' for stdout).")
@click.option("--report", "report_path", type=click.Path(dir_okay=False), callback=writable_path,
              help="Write a self-contained HTML report with the comparison.")
@click.option("--fail-on", type=click.Choice(["slower", "change", "never"]), default="never",
              show_default=True,
              help="Exit with status 1 when any benchmark is significantly slower (or changed).")
@click.option("--baseline", "baseline_ref", metavar="REF", default=None,
              help="Take BASE from the history: the latest record of a saved name, a git "
                   "reference (main, HEAD~1, a tag or hash) or #ID; the one argument is then NEW "
                   "(default: the latest record of HEAD).")
@click.option("--history-url", "history_url", metavar="URL", default=None,
              envvar="STEADYBENCH_HISTORY_URL", show_envvar=True,
              help="History store for --baseline and for run-to-run noise (default: "
                   ".steadybench/history.sqlite in the project, when it exists).")
@quiet_option("no table")
@click.option("--by-host", is_flag=True,
              help="Pair each case with the same case on the same host (results of a fleet: "
                   "run --cluster --every-host; docs/fleet.md).")
@style_option
def compare_cmd(base: str | None, new: str | None, suite_path: str | None,
                confidence: float | None, small_sample: str, threshold: float | None,
                equivalence: bool, verdict_by: str,
                show_min: bool,
                weights: str, precision: str, correction: str, column: str | None,
                metric: str | None, resamples: int, seed: int, json_path: str | None,
                markdown_path: str | None,
                csv_path: str | None, report_path: str | None, fail_on: str,
                baseline_ref: str | None, history_url: str | None, quiet: bool,
                by_host: bool = False, style: str = "table",
                between_runs: str = "auto") -> int:
    """Compare BASE and NEW with a stated confidence (the Speedup-Test protocol).

    BASE and NEW are steadybench results files, plain sample files (one time per line), CSV
    files (--column), hyperfine/pyperf/pytest-benchmark JSON exports or asv result files; with
    --baseline REF, BASE comes from the history (docs/history.md). A side with one execution is
    tested with the run-to-run noise the history learned for it on that machine, when it has.
    """
    from ..compare.core import compare_suite
    from ..compare.output import json_pieces, print_table, to_csv, to_markdown
    from ..compare.protocol import CompareOptions, gate_status
    verdict = VerdictOptions.from_params(
        {"confidence": confidence, "threshold": threshold, "equivalence": equivalence,
         "seed": seed})
    opts = CompareOptions(
        confidence=verdict.confidence, small_sample=small_sample, threshold=verdict.threshold,
        equivalence=verdict.equivalence, verdict_by=verdict_by, show_min=show_min,
        correction=correction, resamples=resamples, seed=seed, between_runs=between_runs)
    r = parse_fraction(precision, "--precision")
    assert r is not None
    from ..history.noise import history_noise_lookup, run_noise_lookup

    base_set = new_set = None
    if baseline_ref is not None:
        from ..compare.core import compare_sets
        from ..compare.readers import read_samples
        from ..history.baseline import baseline_samples, record_samples

        if suite_path or new:
            raise ConfigurationError("--baseline REF takes at most one argument, NEW")
        from ..history.record import current_machine

        new_set = read_samples(base, column) if base else record_samples("HEAD", history_url)
        machine = current_machine(new_set.environment) if new_set.environment else None
        base_set = baseline_samples(baseline_ref, history_url, machine)
        opts.noise, note = history_noise_lookup(history_url, new_set.environment)
        opts.run_noise = run_noise_lookup(history_url, new_set.environment)
        comparison = _with_profiles(compare_sets(base_set, new_set, opts, weights, r),
                                    note, base_set, new_set)
    elif suite_path:
        if base or new:
            raise ConfigurationError("give either BASE and NEW, or --suite, not both")
        comparison = compare_suite(suite_path, opts, column=column, weights=weights,
                                   precision=r)
    else:
        if not base or not new:
            raise ConfigurationError("compare needs BASE and NEW (or --suite FILE)")
        from ..compare.core import compare_sets
        from ..compare.readers import read_samples

        if by_host:
            from ..fleet.pairing import with_hosts

            base_set = with_hosts(read_samples(base, column))
            new_set = with_hosts(read_samples(new, column))
        else:
            base_set = read_samples(base, column, metric)
            new_set = read_samples(new, column, metric)
        from ..counts.verdict import is_count_comparison

        if is_count_comparison(base_set.samples, new_set.samples):
            return compare_counts(base_set, new_set, opts.threshold, json_path, fail_on, quiet,
                                  markdown_path=markdown_path, csv_path=csv_path,
                                  report_path=report_path)
        opts.noise, note = history_noise_lookup(history_url, new_set.environment)
        opts.run_noise = run_noise_lookup(history_url, new_set.environment)
        comparison = _with_profiles(compare_sets(base_set, new_set, opts, weights, r),
                                    note, base_set, new_set)
    # the JSON in pieces, a row at a time (10^6 rows: issue 27 item 13)
    for path, render in ((json_path, json_pieces), (markdown_path, to_markdown),
                         (csv_path, to_csv)):
        if path:
            _emit(render(comparison), path)
    if report_path:
        from ..output.report import write_report

        write_report(_results_for_report(base_set, new_set), report_path,
                     comparison=comparison)
    stdout_used = "-" in (json_path, markdown_path, csv_path)
    if not quiet and not stdout_used:
        print_table(comparison, style=style)
        if comparison.profiles:
            from ..profiles.compare import profile_lines, profile_pairs

            for line in profile_lines(profile_pairs(base_set, new_set)):
                click.echo(line)
    return gate_status(comparison.verdicts, fail_on)


def _with_profiles(comparison: Comparison, note: str | None, base_set: SampleSet,
                   new_set: SampleSet) -> Comparison:
    """The comparison with the history's note on the noise among its warnings and, when both
    files were profiled, what moved between the profiles."""
    from ..profiles.compare import profile_pairs

    if note:
        comparison = comparison.with_warning(note)
    profiled = profile_pairs(base_set, new_set)
    if profiled:
        comparison = comparison.with_profiles(
            {label: pair.to_dict() for label, pair in profiled.items()})
    return comparison


def compare_counts(base_set: SampleSet, new_set: SampleSet, threshold: float,
                   json_path: str | None, fail_on: str, quiet: bool, *,
                   markdown_path: str | None = None, csv_path: str | None = None,
                   report_path: str | None = None) -> int:
    """``compare`` of two results files measured with --measure instructions|cycles: exact
    differences, the layout and fit parts, one sentence per case (steadybench.counts.verdict);
    the JSON, Markdown, CSV and report files as for time (steadybench.counts.output)."""
    import json

    from ..compare.protocol import gate_status
    from ..counts.output import report_comparison, to_csv, to_markdown
    from ..counts.verdict import compare_count_samples, render

    comparison = compare_count_samples(base_set.samples, new_set.samples,
                                       base_set.full_results(), new_set.full_results(),
                                       threshold)
    for path, text in ((json_path, lambda: json.dumps(comparison.to_dict(), indent=1) + "\n"),
                       (markdown_path, lambda: to_markdown(comparison)),
                       (csv_path, lambda: to_csv(comparison))):
        if path:
            _emit(text(), path)
    if report_path:
        from ..output.report import write_report

        write_report(_results_for_report(base_set, new_set), report_path,
                     comparison=report_comparison(comparison))
    if not quiet and "-" not in (json_path, markdown_path, csv_path):
        for line in render(comparison):
            click.echo(line)
    return gate_status((row.verdict for row in comparison.rows), fail_on)


@click.command("plan")
@click.argument("samples", type=click.Path(dir_okay=False))
@click.option("--ci-width", default=None, help="Target CI half-width, e.g. 1% of the mean/median.")
@click.option("--detect", default=None, help="Change to detect, e.g. 5%.")
@click.option("--power", default="0.9", show_default=True, help="Power for --detect.")
@confidence_option(of="the planned interval and test")
@click.option("--column", default=None, help="CSV column (name or 1-based number).")
@json_option("the plan")
def plan_cmd(samples: str, ci_width: str | None, detect: str | None, power: str,
             confidence: float, column: str | None, json_path: str | None) -> int:
    """From pilot SAMPLES, the runs needed for a CI width or to detect a change with power P."""
    import functools
    import json

    from ..compare.plan import plan
    from ..compare.readers import read_samples
    from ..output.results_io import _finite
    from ..stats.overflow import overflow_checked

    conf = confidence
    pw = parse_fraction(power, "--power")
    width = None if ci_width is None else parse_fraction(ci_width, "--ci-width")
    change = None if detect is None else parse_fraction(detect, "--detect")
    assert conf is not None and pw is not None
    sset = read_samples(samples, column)
    plans = []
    for s in sset.samples:
        pilot = s.executions if s.executions.size >= 2 else s.values
        p = overflow_checked(functools.partial(plan, pilot, ci_width=width, detect=change,
                                               power=pw, confidence=conf),
                             f"{samples}: the samples")
        p["name"] = s.label
        if pilot is s.values and s.per_execution is not None:
            p["notes"].append("the pilot has one execution: its runs were used, which "
                              "understates the noise between executions")
        plans.append(p)
    if json_path:
        _emit(json.dumps(_finite({"kind": "steadybench-plan", "plans": plans}), indent=1,
                         ensure_ascii=False) + "\n", json_path)
        if json_path == "-":
            return 0
    for p in plans:
        pilot = p["pilot"]
        cov = f"{pilot['cov']:.2%}" if pilot["cov"] is not None else "—"
        click.echo(f"{p['name']}: pilot of {pilot['n']} runs, mean {pilot['mean']:.6g}, "
                   f"CoV {cov}")
        if "ci" in p:
            ci = p["ci"]
            med = ci["runs_median"] if ci["runs_median"] is not None else "—"
            click.echo(f"  CI of ±{ci['width']:.2%} at {conf:.0%}: {ci['runs_mean']} runs "
                       f"(mean), {med} runs (median)")
        if "detect" in p:
            d = p["detect"]
            rank = d["runs_per_side_rank"] if d["runs_per_side_rank"] is not None else "—"
            click.echo(f"  detect a {d['change']:.2%} change with power {d['power']:.0%} at "
                       f"{conf:.0%}: {d['runs_per_side_t']} runs per side (t-test), {rank} "
                       "(Wilcoxon–Mann–Whitney)")
        for note in p["notes"]:
            click.echo(f"  note: {note}")
    return 0


commands = [compare_cmd, plan_cmd]
