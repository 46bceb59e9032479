"""``--measure NAME``: what a command measures, the same option everywhere time is measured.

``time`` (the default) is the clock; ``instructions`` and ``cycles`` are counts under valgrind
(:mod:`steadybench.counts`). A count measure excludes the options that only make sense for
time (a machine preset, in-process measurement, a fleet, a time method): they are refused with
one line rather than ignored.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import click

from ..errors import ConfigurationError

#: the measures (kept here too so that --help imports nothing heavy; equal to counts.MEASURES)
MEASURE_NAMES = ("time", "instructions", "cycles")
HELP = ("What to measure: time (the clock; default), instructions (instructions executed "
        "under valgrind's cachegrind: exact, the same on every run, not time) or cycles "
        "(instructions and simulated cache misses weighted as estimated cycles). Counts need "
        "valgrind (docs/methods.md, \"Counts\").")


def measure_option(fn: Callable[..., Any]) -> Callable[..., Any]:
    """The ``--measure`` option (``measure`` in the command's options)."""
    return click.option("--measure", type=click.Choice(MEASURE_NAMES), default="time",
                        show_default=True, help=HELP)(fn)


def counting(opts: dict[str, Any]) -> bool:
    return (opts.get("measure") or "time") != "time"


#: per command, the options a count cannot honour: rounds, stop rules and time budgets (a count
#: is exact and made once), the clock and time methods, machine presets and their lock (a count
#: does not depend on the machine's state), fleets and remote targets (counting runs valgrind
#: here), in-process runs (counting needs a fresh interpreter under valgrind), shell wrappers
#: and hooks (they would be counted with the command), memory tracking. Given on the command
#: line with --measure instructions|cycles, each is refused in one line
#: (:func:`refuse_with_counts`); left at its default it is not.
_CLUSTER = ("cluster", "every_host", "hosts_report", "cluster_wait")
_TARGET = ("target", "push")
TIME_ONLY: dict[str, tuple[str, ...]] = {
    "run": ("in_process", "preset", "wait_lock", "method", "method_option", "layout", "clock",
            "stream", "runs", "warmup", "max_time", "target_cov", "target_ci", "window",
            "stop_condition", "remove_outliers", "track_memory", "profile", *_CLUSTER),
    "timeit": ("preset", "max_time", "max_rounds", "execution_time", "seed", "profile"),
    "ab": ("duet", "equivalence", "preset", "max_rounds", "max_time", "min_rounds",
           "execution_time", "layout", "warmup", "seed", "check_output", "profile", *_CLUSTER),
    "exec": ("shell", "preset", "wait_lock", "best_of", "prepare", "setup", "cleanup",
             "conclude", "runs", "warmup", "min_runs", "max_runs", "min_time", "max_time",
             "target_cov", "target_ci", "window", "no_correction", "order", "profile",
             *_TARGET, *_CLUSTER),
    "iters": ("shell", "preset", "wait_lock", "max_time", "min_points", "max_points", "runs",
              "target_cov", "window", "warmup", "bootstrap", "seed", "outlier_threshold",
              *_TARGET),
    "bisect": ("max_rounds", "max_time", "min_rounds", "execution_time", "warmup", "layout",
               "clock", "seed", "confidence"),
}
TIME_ONLY["sweep"] = TIME_ONLY["iters"]


def _given(name: str, opts: dict[str, Any]) -> bool:
    """Whether option ``name`` was given (on the command line or in the environment) rather
    than left at its default; outside a click command, whether its value is set."""
    ctx = click.get_current_context(silent=True)
    if ctx is not None and any(p.name == name for p in ctx.command.params):
        source = ctx.get_parameter_source(name)
        return source not in (None, click.core.ParameterSource.DEFAULT,
                              click.core.ParameterSource.DEFAULT_MAP)
    return bool(opts.get(name))


def _flag(name: str) -> str:
    ctx = click.get_current_context(silent=True)
    for param in ctx.command.params if ctx is not None else ():
        if param.name == name:
            longs = [o for o in param.opts if o.startswith("--")]
            return longs[0] if longs else param.opts[0]
    return "--" + name.replace("_", "-")


def refuse_with_counts(opts: dict[str, Any], names: Sequence[str]) -> None:
    """A ConfigurationError, in one line, when a count measure is combined with an option
    among ``names`` (a command's :data:`TIME_ONLY` entry) that was given."""
    if not counting(opts):
        return
    for name in names:
        if _given(name, opts):
            raise ConfigurationError(
                f"--measure {opts['measure']} does not take {_flag(name)} (it applies to time "
                "measurements only: a count is exact, made once, in a fresh interpreter under "
                "valgrind, whatever the machine's state)")


def count_settings(opts: dict[str, Any], layouts_key: str = "processes"):
    """The :class:`~steadybench.counts.python.CountSettings` of a command's options: ``-p K``
    is the number of layouts (default 1), ``--time-limit`` each counted process's limit."""
    from ..counts.python import CountSettings

    return CountSettings(measure=opts["measure"], layouts=opts.get(layouts_key) or 1,
                         time_limit=opts.get("time_limit") or 600.0,
                         confidence=opts.get("confidence", 0.95))
