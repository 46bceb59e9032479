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


def refuse_with_counts(opts: dict[str, Any], names: Sequence[str]) -> None:
    """A ConfigurationError when a count measure is combined with an option among ``names``
    that only applies to time."""
    if not counting(opts):
        return
    for name in names:
        if opts.get(name):
            raise ConfigurationError(
                f"--measure {opts['measure']} does not take --{name.replace('_', '-')} (it "
                "applies to time measurements only)")


def count_settings(opts: dict[str, Any], layouts_key: str = "processes"):
    """The :class:`~steadybench.counts.python.CountSettings` of a command's options: ``-p K``
    is the number of layouts (default 1), ``--time-limit`` each counted process's limit."""
    from ..counts.python import CountSettings

    return CountSettings(measure=opts["measure"], layouts=opts.get(layouts_key) or 1,
                         time_limit=opts.get("time_limit") or 600.0,
                         confidence=opts.get("confidence", 0.95))
