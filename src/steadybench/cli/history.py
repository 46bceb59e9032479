"""``steadybench history``: list, show, trend, compare, regressions, import, export, noise.

The store is the project's ``.steadybench/history.sqlite`` unless ``--history-url`` (or
``STEADYBENCH_HISTORY_URL``) names another (``docs/history.md``).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any

import click

from .common import writable_path
from .options import VerdictOptions, confidence_option, json_option, threshold_option

URL_HELP = ("History store: a SQLite file or postgresql://… (default: .steadybench/"
            "history.sqlite at the top of the git repository).")


def url_option(fn: Callable[..., Any]) -> Callable[..., Any]:
    return click.option("--history-url", "url", metavar="URL", envvar="STEADYBENCH_HISTORY_URL",
                        show_envvar=True, default=None, help=URL_HELP)(fn)


def _open(url: str | None, create: bool = False) -> Any:
    """The store; only ``import`` (``create``) may make a new one: the commands that read
    create no file (issue 27 item 18)."""
    from ..history.store import HistoryStore

    return HistoryStore.open(url, create=create)


def _emit(text: str, path: str) -> None:
    from ..fileio import atomic_write_text

    if path == "-":
        sys.stdout.write(text)
    else:
        atomic_write_text(path, text)


@click.group("history")
def history_group() -> None:
    """The results history: every command records with --history (docs/history.md)."""


@history_group.command("list")
@url_option
@click.option("--limit", "-n", type=click.IntRange(min=1, max=1_000_000), default=20,
              show_default=True, help="Newest records shown.")
@click.option("--benchmark", "-b", default=None, help="Only records holding this benchmark.")
@click.option("--machine", default=None, help="Only records from this machine.")
@json_option("the list")
def list_cmd(url: str | None, limit: int, benchmark: str | None, machine: str | None,
             json_path: str | None) -> None:
    """The newest records, newest first."""

    with _open(url) as store:
        records = store.records(limit=limit, benchmark=benchmark, machine=machine)
        where = store.where
    if json_path:
        _emit(json.dumps([r.summary() for r in records], indent=1) + "\n", json_path)
        if json_path == "-":
            return
    if not records:
        click.echo(f"no records in {where}")
        return
    import shutil

    from ..output.console import console_text
    from ..output.tables import Column, TableSpec, fit_plain, to_plain

    # one record per line, fields without spaces; at the terminal's width (80 off one) the
    # least useful columns are left out rather than a line wrapped
    spec = TableSpec([Column("id"), Column("time", justify="left"),
                      Column("commit", justify="left", drop=2),
                      Column("branch", justify="left", drop=4),
                      Column("name", justify="left", drop=1), Column("cases"),
                      Column("machine", justify="left", drop=3),
                      Column("source", justify="left", drop=5)])
    for r in records:
        commit = (r.git.commit[:10] + ("+" if r.git.dirty else "")) if r.git.commit else "—"
        spec.add_row(str(r.id), r.created[:16].replace("T", "_"), commit,
                     console_text(r.git.branch or "—"), console_text(r.name or "—"),
                     str(r.summary()["benchmarks"]), console_text(r.machine),
                     console_text(r.source))
    width = shutil.get_terminal_size((80, 24)).columns
    click.echo(to_plain(fit_plain(spec, width)), nl=False)


@history_group.command("show")
@click.argument("ref")
@url_option
@json_option("the record (with its full results)")
def show_cmd(ref: str, url: str | None, json_path: str | None) -> None:
    """One record: REF is #ID, a saved name, or a git reference (latest record of it)."""
    from ..history.record import measurements_of
    from ..output.format import format_value
    from ..output.sanitize import terminal_text

    with _open(url) as store:
        rec = store.resolve(ref)
    if json_path:
        _emit(json.dumps(rec.to_dict(), indent=1) + "\n", json_path)
        if json_path == "-":
            return
    s = rec.summary()
    lines = [f"record #{rec.id}" + (f" {rec.name!r}" if rec.name else ""),
             f"  time     {rec.created}",
             f"  commit   {rec.git.commit or '— (' + (rec.git.note or 'no commit data') + ')'}"
             + (" (dirty)" if rec.git.dirty else ""),
             f"  branch   {rec.git.branch or '—'}",
             f"  machine  {rec.machine}", f"  preset   {rec.preset or '—'}",
             f"  source   {rec.source}", f"  command  {rec.command or '—'}",
             f"  {s['benchmarks']} benchmark(s):"]
    for row in measurements_of(rec.results):
        ci = (f" [{format_value(row.ci_low, row.unit)}, {format_value(row.ci_high, row.unit)}]"
              if row.ci_low is not None and row.ci_high is not None else "")
        lines.append(f"    {row.label}: {format_value(row.value, row.unit)}{ci} "
                     f"({row.n_executions} execution{'s' if row.n_executions != 1 else ''})")
    for line in lines:
        click.echo(terminal_text(line))


def _analyse(store: Any, label: str, machine: str | None, confidence: float,
             min_change: float) -> tuple[list[Any], list[Any]]:
    from ..history.finders import analyse_steady

    points = store.series(label, machine=machine)
    if not points:
        from ..history.backends import HistoryError

        known = store.labels()
        hint = f" (recorded: {', '.join(known[:8])})" if known else ""
        raise HistoryError(f"no records of benchmark {label!r}{hint}")
    if machine is None and len({p.machine for p in points}) > 1:
        machines = sorted({p.machine for p in points})
        latest = points[-1].machine
        points = [p for p in points if p.machine == latest]
        click.echo(f"note: {label} was recorded on {len(machines)} machines; showing "
                   f"{latest} (--machine chooses)", err=True)
    analysis = analyse_steady(points, label, points[0].machine, confidence, min_change)
    if analysis.note:
        click.echo(f"note: {label}: {analysis.note}", err=True)
    return points, analysis.changes


@history_group.command("trend")
@click.argument("benchmark")
@url_option
@click.option("--machine", default=None, help="Machine (default: the latest record's).")
@click.option("--last", type=click.IntRange(min=2, max=100_000), default=60, show_default=True,
              help="Records shown in the text view.")
@click.option("--plot", "plot_path", type=click.Path(dir_okay=False), callback=writable_path,
              help="Write the trend plot (PNG, or SVG by the suffix).")
@click.option("--report", "report_path", type=click.Path(dir_okay=False), callback=writable_path,
              help="Write a self-contained HTML page with the plot and the records.")
def trend_cmd(benchmark: str, url: str | None, machine: str | None, last: int,
              plot_path: str | None, report_path: str | None) -> None:
    """A benchmark's trend: a sparkline and one line per record, change points marked."""
    from ..history.trend import trend_lines, trend_plot, trend_report
    from ..output.sanitize import terminal_text

    with _open(url) as store:
        points, changes = _analyse(store, benchmark, machine, 0.95, 0.0)
    for line in trend_lines(points, changes, width=last):
        click.echo(terminal_text(line))
    if plot_path:
        trend_plot(points, plot_path, changes)
        click.echo(f"wrote {plot_path}")
    if report_path:
        trend_report(points, report_path, changes)
        click.echo(f"wrote {report_path}")


def _compare_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    for option in reversed([
        confidence_option(),
        threshold_option(),
        json_option("the comparison"),
        click.option("--markdown", "markdown_path", type=click.Path(dir_okay=False),
                     callback=writable_path, help="Write a Markdown table ('-': stdout)."),
        click.option("--fail-on", type=click.Choice(["slower", "change", "never"]),
                     default="never", show_default=True,
                     help="Exit with status 1 when a benchmark is significantly slower (or "
                          "changed)."),
    ]):
        fn = option(fn)
    return fn


@history_group.command("compare")
@click.argument("base_ref")
@click.argument("new_ref")
@url_option
@_compare_options
def compare_cmd(base_ref: str, new_ref: str, url: str | None, confidence: float,
                threshold: float | None, json_path: str | None, markdown_path: str | None,
                fail_on: str) -> int:
    """Compare two records (each #ID, a saved name or a git reference), as compare does."""
    from ..history.baseline import record_samples

    base = record_samples(base_ref, url)
    new = record_samples(new_ref, url)
    return finish_comparison(base, new, url,
                             VerdictOptions.from_params({"confidence": confidence,
                                                         "threshold": threshold}),
                             json_path, markdown_path, fail_on)


def finish_comparison(base: Any, new: Any, url: str | None, verdict: VerdictOptions,
                      json_path: str | None, markdown_path: str | None,
                      fail_on: str) -> int:
    """Compare two sample sets with the history's run-to-run noise available, write and print
    the result; the exit status of ``--fail-on``."""
    from ..compare.core import compare_sets
    from ..compare.output import print_table, to_json, to_markdown
    from ..compare.protocol import CompareOptions, gate_status
    from ..counts.verdict import is_count_comparison
    from ..history.noise import history_noise_lookup, run_noise_lookup
    from .compare import compare_counts

    if is_count_comparison(base.samples, new.samples):  # exact counts: no noise to look up
        return compare_counts(base, new, verdict.threshold, json_path, fail_on, False,
                              markdown_path=markdown_path)
    lookup, note = history_noise_lookup(url, new.environment or base.environment)
    if note:
        click.echo(f"note: {note}", err=True)
    opts = CompareOptions(confidence=verdict.confidence, threshold=verdict.threshold,
                          noise=lookup,
                          run_noise=run_noise_lookup(url, new.environment or base.environment))
    comparison = compare_sets(base, new, opts)
    for path, render in ((json_path, to_json), (markdown_path, to_markdown)):
        if path:
            _emit(render(comparison), path)
    if "-" not in (json_path, markdown_path):
        print_table(comparison)
        from ..profiles.compare import profile_lines, profile_pairs

        # two records that were both profiled (--profile): which functions moved
        for line in profile_lines(profile_pairs(getattr(base, "results", None),
                                                getattr(new, "results", None))):
            click.echo(line)
    return gate_status(comparison.verdicts, fail_on)


@history_group.command("regressions")
@url_option
@click.option("--benchmark", "-b", "benchmarks", multiple=True,
              help="Only this benchmark (repeatable; default: all).")
@click.option("--machine", default=None, help="Only this machine (default: each on its own).")
@click.option("--branch", default=None, help="Only records made on this branch.")
@confidence_option("(A record-level test against the between-record noise, trend removed.)",
                   of="a reported change")
@click.option("--min-change", default=None,
              help="Report a change only when it is at least this large (e.g. 5%). Default: "
                   "the thresholds of steadybench.toml (2% without one: about half the band "
                   "between runs of identical code).")
@click.option("--thresholds", "thresholds_path", type=click.Path(dir_okay=False), default=None,
              help="Thresholds file (default: steadybench.toml at the top of the repository).")
@click.option("--recent", type=click.IntRange(min=1, max=1_000_000), default=None,
              help="Only changes among the last N records of a series (for CI: 1 = this "
                   "record).")
@click.option("--fail-on", type=click.Choice(["slower", "change", "never"]), default="slower",
              show_default=True, help="Exit with status 1 when a change of this kind is found.")
@json_option("the changes")
def regressions_cmd(url: str | None, benchmarks: tuple[str, ...], machine: str | None,
                    branch: str | None, confidence: float, min_change: str | None,
                    thresholds_path: str | None, recent: int | None, fail_on: str,
                    json_path: str | None) -> int:
    """Change points in every benchmark's history (PELT via ruptures; docs/history.md): the
    commit range, the magnitude and the confidence of each."""
    from ..compare.protocol import gate_status
    from ..history.changes import confidence_text
    from ..history.finders import regressions
    from ..output.sanitize import terminal_text
    from .compare import parse_fraction

    level = confidence
    from ..history.thresholds import PERCENT, Threshold, Thresholds, load_thresholds

    if min_change is not None:
        text = min_change.strip()
        change = 0.0 if text in ("0", "0%") else float(parse_fraction(text, "--min-change")
                                                        or 0.0)
        rules = Thresholds(Threshold(PERCENT, change, "--min-change"))
    else:
        rules = load_thresholds(thresholds_path)
    with _open(url) as store:
        found = regressions(store, list(benchmarks) or None, machine, branch, level, 0.0)
    changes = []
    for analysis in found:
        for c in analysis.changes:
            if not rules.for_label(c.label).passes(c.before_median, c.after_median):
                continue
            if recent is None or c.index >= analysis.points - recent:
                changes.append(c)
    if json_path:
        doc = {"kind": "steadybench-regressions",
               "series": [{"benchmark": a.label, "machine": a.machine, "points": a.points,
                           "sigma": a.sigma, "sigma_source": a.sigma_source, "note": a.note}
                          for a in found],
               "thresholds": rules.to_dict(),
               "changes": [c.to_dict() for c in changes]}
        _emit(json.dumps(doc, indent=1) + "\n", json_path)
    if json_path != "-":
        if not found:
            click.echo("no benchmarks recorded")
        for a in found:
            if a.note:
                click.echo(terminal_text(f"{a.label} on {a.machine}: {a.note}"))
        if not changes:
            click.echo(f"no change found in {len(found)} series at {level:.0%} confidence")
        from ..output.format import COUNT_UNITS

        counted = False
        for c in changes:
            name = f" ({c.after_name})" if c.after_name else ""
            word = c.direction.upper()
            if c.unit in COUNT_UNITS:  # exact: more or fewer, never slower, no confidence
                counted = True
                click.echo(terminal_text(c.line()))
                continue
            click.echo(terminal_text(
                f"{word}: {c.label} on {c.machine}: {c.magnitude:+.1%} "
                f"in {c.commit_range}{name}, confidence {confidence_text(c.confidence)} "
                f"(median {c.before_median:.4g} → {c.after_median:.4g} {c.unit}; "
                f"{c.n_before} vs {c.n_after} records)"))
        if counted:
            from ..counts.backend import NOT_TIME

            click.echo(f"note: {NOT_TIME}")
    return gate_status((c.direction for c in changes), fail_on)


@history_group.command("publish")
@click.argument("directory", type=click.Path(file_okay=False))
@url_option
@click.option("--repo-url", default=None,
              help="Link commits to this repository (https://github.com/OWNER/REPO, or a URL "
                   "with {commit}); default: [dashboard] repository of steadybench.toml.")
@click.option("--baseline", default=None,
              help="Saved record name the index compares with (default: each series' first "
                   "record).")
@confidence_option("(A rank test between the segments.)", of="the change points shown")
@click.option("--thresholds", "thresholds_path", type=click.Path(dir_okay=False), default=None,
              help="Thresholds file (default: steadybench.toml at the top of the repository).")
@click.option("--jobs", "-j", type=click.IntRange(min=1, max=256), default=None,
              help="Processes finding change points and writing pages (default: the CPUs "
                   "available).")
def publish_cmd(directory: str, url: str | None, repo_url: str | None, baseline: str | None,
                confidence: float, thresholds_path: str | None, jobs: int | None) -> None:
    """Write the history as a static site in DIRECTORY: an index of every benchmark, a page
    per benchmark with its chart, and the open regressions. Works from file:// and from any
    static host (GitHub Pages); nothing is fetched at view time (docs/dashboard.md)."""
    import os
    import time

    from ..history.git import git_info
    from ..history.publish.collect import collect
    from ..history.publish.site import link_template, write_site
    from ..history.thresholds import load_thresholds, repository_url
    level = confidence
    rules = load_thresholds(thresholds_path)
    link = repo_url or repository_url()
    link_template(link)  # a bad URL is one line now, not after reading the store
    workers = jobs or (len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
                       else os.cpu_count() or 1)
    started = time.monotonic()
    with _open(url) as store:
        board = collect(store, rules, confidence=level, baseline=baseline,
                        repository=git_info().toplevel, workers=workers,
                        progress=lambda text: click.echo(f"publish: {text}", err=True))
    if not board.pages:
        from ..history.backends import HistoryError

        raise HistoryError(f"history {board.where}: no benchmark recorded: nothing to publish")
    out = write_site(board, directory, repository_url=link, baseline=baseline,
                     workers=workers)
    opened = sum(1 for s in board.series if s.open_change)
    click.echo(f"wrote {out}/index.html: {len(board.pages)} benchmarks, {len(board.series)} "
               f"series, {len(board.commits)} commits, {opened} open regression(s) "
               f"({time.monotonic() - started:.1f} s)")


@history_group.command("import")
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False))
@url_option
@click.option("--name", default=None, help="Save the records under this name.")
def import_cmd(files: tuple[str, ...], url: str | None, name: str | None) -> None:
    """Record existing results: steadybench JSON, pytest-benchmark JSON, asv result files. The
    commit, branch and time are taken from the file when it says them."""
    from ..errors import ResultsFormatError
    from ..fileio import read_user_json
    from ..formats.asv import is_asv, read_asv
    from ..formats.pytest_benchmark import is_pytest_benchmark, read_pytest_benchmark
    from ..history.git import GitInfo
    from ..history.options import describe
    from ..output.results_io import finite_in_place

    with _open(url, create=True) as store:
        for path in files:
            data = read_user_json(path, ResultsFormatError)
            if is_pytest_benchmark(data):
                results, source = read_pytest_benchmark(path, data), "pytest-benchmark"
            elif is_asv(data):
                results, source = read_asv(path, data), "asv"
            else:  # one benchmark at a time (issue 27 item 13)
                from ..history.importing import encode_results

                encoded = encode_results(data, path)
                del data
                rec = store.add_encoded(encoded.top, encoded.text, encoded.measurements,
                                        name=name, command=f"history import {path}",
                                        git=None, source="steadybench",
                                        created=encoded.created or None)
                click.echo(describe(rec, store.where))
                continue
            del data  # one copy at a time (issue 27 item 13)
            git = results.context.get("git") if source != "steadybench" else None
            info = None
            if isinstance(git, dict):
                info = GitInfo(commit=git.get("commit"), branch=git.get("branch"),
                               dirty=git.get("dirty"),
                               note=None if git.get("commit") else f"{source} file names no "
                                                                   "commit")
            created = results.created or None
            doc = results.to_dict()
            del results  # one copy at a time, made finite where it is (issue 27 item 13)
            doc = finite_in_place(doc)
            rec = store.add(doc, name=name, command=f"history import {path}", git=info,
                            source=source, created=created)
            click.echo(describe(rec, store.where))


@history_group.command("export")
@click.argument("ref")
@url_option
@click.option("--format", "fmt", default="steadybench", show_default=True, metavar="NAME",
              help="Output format, any of the output-format registry (steadybench.writers "
                   "entry points included): steadybench, xml, csv, markdown, bmf, "
                   "github-action-benchmark, pytest-benchmark.")
@click.option("-o", "--output", "output", type=click.Path(dir_okay=False),
              callback=writable_path, default="-", show_default=True,
              help="File to write ('-' for stdout).")
def export_cmd(ref: str, url: str | None, fmt: str, output: str) -> None:
    """Write a record's results in a format CI dashboards read."""
    from ..output.results_io import results_from_data
    from ..output.writers import writer

    chosen = writer(fmt)  # an unknown name is one line listing the formats, before the store
    with _open(url) as store:
        rec = store.resolve(ref)
    results = results_from_data(rec.results, f"record #{rec.id}")
    _emit(chosen.render(results), output)


@history_group.command("noise")
@click.argument("benchmark")
@url_option
@click.option("--machine", default=None, help="Machine (default: every machine separately).")
def noise_cmd(benchmark: str, url: str | None, machine: str | None) -> None:
    """The run-to-run noise of BENCHMARK learned from the history, per machine: what compare
    uses when a result holds one execution."""
    from ..history.noise import run_to_run_noise

    with _open(url) as store:
        machines = [machine] if machine else sorted({p.machine for p in
                                                    store.series(benchmark)})
        if not machines:
            click.echo(f"no records of {benchmark!r}")
        for m in machines:
            noise = run_to_run_noise(store, benchmark, m)
            click.echo(f"{benchmark} on {m}: " + (noise.describe() if noise else
                                                  "not enough repeated executions recorded"))


commands = [history_group]
