"""Options and helpers shared by several sub-commands."""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ..errors import ConfigurationError
from ..fileio import writable_path
from .options import confidence_option

if TYPE_CHECKING:
    from ..model.results import Results
    from ..output.writing import Output
    from ..runner.stop import StopCondition

#: what ``--time-limit`` means in every command (the execution layer's hard limit,
#: :func:`steadybench.execution.driver.run_executions`)
TIME_LIMIT_HELP = ("Hard limit in seconds for each case: all its executions together, "
                   "whatever the stop rule; an execution still running then is stopped.")


def positive(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
    """Click callback: the option's value, when given, must be a positive number (not NaN)."""
    if value is not None and not value > 0:  # NaN too
        raise click.BadParameter(f"must be positive, got {value}")
    return value


def stop_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    """--runs, --warmup, --max-time, --target-cov, --window, --target-ci, --confidence,
    --time-limit: the stop condition of the foundation (Rancid §IV-B)."""
    options = [
        click.option(
            "--runs",
            "-n",
            type=int,
            callback=positive,
            help="Measured runs after the warm-up, in each execution (-p): --runs 10 with "
            "25 executions is 250 runs.",
        ),
        click.option(
            "--warmup",
            type=click.IntRange(min=0),
            default=None,
            help="Warm-up runs, made first and left out of the statistics.",
        ),
        click.option(
            "--max-time",
            type=float,
            callback=positive,
            help="Stop each execution after this many seconds (a benchmark takes -p times "
            "as long).",
        ),
        click.option(
            "--target-cov",
            type=float,
            callback=positive,
            help="Stop when the coefficient of variation of the last --window runs is "
            "at most this (e.g. 0.02).",
        ),
        click.option(
            "--window",
            type=click.IntRange(min=2),
            default=20,
            show_default=True,
            help="Sliding window of runs for --target-cov.",
        ),
        click.option(
            "--target-ci",
            type=float,
            callback=positive,
            help="Stop when the CI of the mean is within ± this fraction of the mean.",
        ),
        confidence_option(of="the intervals and of --target-ci"),
        click.option(
            "--stop-condition",
            "stop_condition",
            default=None,
            metavar="NAME[:OPT=VALUE,...]",
            help="One more target, a registered stop condition: cov_after_warmup (Rancid's "
            "ErrorStopCondition), ci_width_window, median_iqr_stable, ... e.g. "
            "median_iqr_stable:tolerance=0.005.",
        ),
        click.option(
            "--time-limit",
            type=float,
            default=600.0,
            show_default=True,
            callback=positive,
            help=TIME_LIMIT_HELP[:-1] + " (never shorter than --max-time).",
        ),
    ]
    for option in reversed(options):
        fn = option(fn)
    return fn


def stop_condition_from(opts: dict[str, Any]) -> StopCondition:
    """Build the stop condition from the values of :func:`stop_options`."""
    confidence = opts.get("confidence", 0.95)
    if not 0 < confidence < 1:
        raise ConfigurationError(f"--confidence must be between 0 and 1, got {confidence}")
    from ..runner.stop import build_stop_condition, parse_stop_condition

    named = opts.get("stop_condition")
    return build_stop_condition(
        runs=opts.get("runs"),
        max_time=opts.get("max_time"),
        target_cov=opts.get("target_cov"),
        window=opts.get("window", 20),
        target_ci=opts.get("target_ci"),
        confidence=confidence,
        condition=parse_stop_condition(named) if named else None,
    )


def output_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    """One ``--OPTION FILE`` per output format of the registry (--json, --xml, --csv,
    --markdown, --bmf, --gab, --pb-json: steadybench.output.writers) and --report: files the
    results are written to; --history, --history-url, --history-name: the history record
    (steadybench.history.options)."""
    from ..history.options import history_options
    from ..output.writers import builtin_writers

    fn = history_options(fn)
    fn = click.option(
        "--report",
        "report_path",
        type=click.Path(dir_okay=False),
        callback=writable_path,
        help="Write a self-contained HTML report to this file.",
    )(fn)
    for cls in reversed(builtin_writers()):
        fn = click.option(
            f"--{cls.option}",
            _dest(cls.option),
            type=click.Path(dir_okay=False),
            callback=writable_path,
            help=f"Write the results as {cls.label} to this file ('-': standard output).",
        )(fn)
    return fn


def _dest(option: str) -> str:
    """The keyword argument of a format's option: ``json_path``, ``pb_json_path``."""
    return option.replace("-", "_") + "_path"


def stdout_taken(opts: dict[str, Any]) -> bool:
    """True when a results file goes to standard output (``--json -``): the table then goes
    to standard error, so the file stays parseable."""
    from ..output.writers import builtin_writers

    return any(opts.get(_dest(cls.option)) == "-" for cls in builtin_writers())


def _to_stdout(writer: Callable[..., Any], results: Results) -> Path:
    """Run a file writer into a temporary file and copy what it wrote to standard output
    (``-`` means standard output for every file option)."""
    import sys
    import tempfile

    with tempfile.TemporaryDirectory(prefix="steadybench-out-") as tmp:
        path = Path(tmp) / "out"
        writer(results, path)
        sys.stdout.write(path.read_text(encoding="utf-8"))
        sys.stdout.flush()
    return Path("-")


def output_list(results: Results, opts: dict[str, Any]) -> list[Output]:
    """The files asked for with :func:`output_options`, in the order they are written."""
    from ..output.writers import builtin_writers
    from ..output.writing import Output

    outputs = []
    for cls in builtin_writers():
        path = opts.get(_dest(cls.option))
        writer = cls().write
        if path == "-":
            outputs.append(Output(f"--{cls.option}", "standard output",
                                  functools.partial(_to_stdout, writer, results)))
        elif path:
            outputs.append(Output(f"--{cls.option}", path,
                                  functools.partial(writer, results, path)))
    if opts.get("report_path"):
        from ..output.report import write_report

        outputs.append(Output("--report", opts["report_path"],
                              functools.partial(write_report, [results], opts["report_path"])))
    return outputs


def write_outputs(results: Results, opts: dict[str, Any]) -> list[Path]:
    """Write the files asked for with :func:`output_options` (each atomically).

    Every file is tried, whatever happens to the others, and Ctrl-C or SIGTERM waits until all
    were tried (:func:`~steadybench.output.writing.write_each`). Each failure is printed as
    one ``error:`` line; then :class:`~steadybench.output.writing.OutputsFailed` ends the
    command, unless the results are interrupted (the caller then ends it with status 130).
    """
    from ..output.writing import failed_summary, write_each
    from . import one_line

    outputs = output_list(results, opts)
    written, failures = write_each(
        outputs, lambda message: click.echo(f"error: {one_line(message)}", err=True))
    if failures and not results.interrupted:
        raise failed_summary(failures, len(outputs))
    from ..history.options import record_from_opts

    record_from_opts(results, opts)  # after the files: a broken history costs none of them
    return written


def pass_root(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Give the command the global ``--root`` as a ``root`` keyword argument."""

    @click.pass_context
    @functools.wraps(fn)
    def wrapper(ctx: click.Context, *args: Any, **kwargs: Any) -> Any:
        return ctx.invoke(fn, *args, root=(ctx.obj or {}).get("root", "/"), **kwargs)

    return wrapper
