"""hyperfine's vocabulary for ``steadybench exec``: its option names, its defaults and its
export formats, so hyperfine users find their habits (sharkdp/hyperfine, ``src/cli.rs``).

==========================  ===========================================================
hyperfine                   steadybench exec
==========================  ===========================================================
``-r/--runs N``             exactly N measured runs
``-w/--warmup N``           N warm-up runs, left out
``-m/--min-runs N``         at least N runs (default 10)
``-M/--max-runs N``         at most N runs
(3 s, built in)             ``--min-time S``: at least S seconds of runs (default 3)
``-n/--command-name``       display name of each command, in order
``-N``                      no shell (steadybench's default anyway)
``-p/--prepare CMD``        before every run, warm-up included (one for all, or one per
                            command)
``--conclude CMD``          after every run (the same)
``-s/--setup CMD``          once before the runs of each command
``-c/--cleanup CMD``        once after the runs of each command
``--show-output``           the commands' output goes to the terminal
``--export-json/-csv/-markdown FILE``  hyperfine's formats (``-``: standard output)
==========================  ===========================================================

Hook commands run through ``/bin/sh -c`` (as hyperfine's do, with its default shell) and may
use the same ``{NAME}`` placeholders as the commands; a hook that fails ends the benchmark
with one line naming it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from ..errors import ConfigurationError
from .common import TIME_LIMIT_HELP, positive, writable_path
from .options import confidence_option
from .validate import POSITIVE_SECONDS, count

#: hyperfine's defaults: at least 10 runs and at least 3 s of runs
MIN_RUNS = 10
MIN_TIME = 3.0


def exec_stop_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    """The stop options of ``exec`` in hyperfine's spelling, with steadybench's precision
    targets beside them."""
    options = [
        click.option("-r", "--runs", type=count(min=1), default=None,
                     help="Exactly this many measured runs (overrides --min-runs, "
                          "--max-runs, --min-time)."),
        click.option("-w", "--warmup", type=click.IntRange(min=0), default=0,
                     show_default=True, help="Warm-up runs before the measured ones."),
        click.option("-m", "--min-runs", type=count(min=1), default=MIN_RUNS,
                     show_default=True, help="Measured runs at least."),
        click.option("-M", "--max-runs", type=count(min=1), default=None,
                     help="Measured runs at most (default: no limit)."),
        click.option("--min-time", type=POSITIVE_SECONDS, default=MIN_TIME,
                     show_default=True,
                     help="Seconds of runs at least, per command (hyperfine's built-in 3 s)."),
        click.option("--max-time", type=float, callback=positive,
                     help="Stop a command after this many seconds of its runs, even before "
                          "--min-runs (a warning says so)."),
        click.option("--target-cov", type=float, callback=positive,
                     help="Instead of --min-time: stop when the CoV of the last --window "
                          "runs is at most this (e.g. 0.02)."),
        click.option("--window", type=click.IntRange(min=2), default=20, show_default=True,
                     help="Sliding window of runs for --target-cov."),
        click.option("--target-ci", type=float, callback=positive,
                     help="Instead of --min-time: stop when the CI of the mean is within ± "
                          "this fraction of the mean."),
        confidence_option(of="the intervals and of --target-ci"),
        click.option("--time-limit", type=float, default=600.0, show_default=True,
                     callback=positive,
                     help=TIME_LIMIT_HELP + " A case is a command at one parameter set."),
    ]
    for option in reversed(options):
        fn = option(fn)
    return fn


def hyperfine_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    """-n, -N, --prepare, --conclude, --setup, --cleanup, --show-output, --export-*."""
    options = [
        click.option("-n", "--command-name", "command_names", multiple=True,
                     help="Display name of each command, in order (repeatable; as --name)."),
        click.option("-N", "no_shell", is_flag=True,
                     help="Run commands without a shell (the default; accepted for hyperfine "
                          "users)."),
        click.option("-p", "--prepare", multiple=True, metavar="CMD",
                     help="Run CMD before every run, warm-up included: once for all commands, "
                          "or once per command, in order."),
        click.option("--conclude", multiple=True, metavar="CMD",
                     help="Run CMD after every run (one for all, or one per command)."),
        click.option("-s", "--setup", metavar="CMD",
                     help="Run CMD once before the runs of each command."),
        click.option("-c", "--cleanup", metavar="CMD",
                     help="Run CMD once after the runs of each command."),
        click.option("--show-output", is_flag=True,
                     help="Show the commands' standard output (default: discarded)."),
    ]
    for fmt, shown in (("json", "JSON"), ("csv", "CSV"), ("markdown", "Markdown")):
        options.append(click.option(
            f"--export-{fmt}", f"export_{fmt}", type=click.Path(dir_okay=False),
            callback=writable_path, metavar="FILE",
            help=f"Write the results in hyperfine's {shown} format ('-': standard output)."))
    for option in reversed(options):
        fn = option(fn)
    return fn


def exec_stop_condition(opts: dict[str, Any]):  # noqa: ANN201 - a StopCondition
    """The stop rule of ``exec``: ``-r N`` exactly; otherwise at least ``--min-runs`` runs and
    ``--min-time`` seconds (or the precision targets instead of the time), at most
    ``--max-runs``, ended by ``--max-time`` whatever the rest says."""
    from ..runner.stop import CiHalfWidth, CovWindow, ElapsedTime, Runs

    runs, max_time, max_runs = opts.get("runs"), opts.get("max_time"), opts.get("max_runs")
    if max_runs is not None and max_runs < opts["min_runs"]:
        raise ConfigurationError(f"--max-runs {max_runs} is below --min-runs "
                                 f"{opts['min_runs']}")
    if runs is not None:
        cond = Runs(runs)
    else:
        targets = []
        if opts.get("target_cov"):
            targets.append(CovWindow(opts["target_cov"], opts.get("window", 20)))
        if opts.get("target_ci"):
            targets.append(CiHalfWidth(opts["target_ci"], opts["confidence"]))
        cond = Runs(opts["min_runs"])
        for target in targets or [ElapsedTime(opts["min_time"])]:
            cond = cond & target
        if max_runs is not None:
            cond = cond | Runs(max_runs)
    if max_time is not None:
        cond = cond | ElapsedTime(max_time)
    return cond


def few_runs_warning(n: int, opts: dict[str, Any]) -> str | None:
    """The warning for a command that ended with fewer runs than ``--min-runs`` (its
    ``--max-time`` or a failure ended it first), None otherwise."""
    if opts.get("runs") is not None or n >= opts["min_runs"] or n == 0:
        return None
    return (f"only {n} run(s), fewer than --min-runs {opts['min_runs']} (--max-time ended "
            "it): the interval is wide; raise --max-time or give -r")
