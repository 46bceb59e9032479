"""Counting one process under a layout, and what a count is comparable with.

:func:`count_process` is the one execution of every count measure: a process under cachegrind
(:mod:`.valgrind`), in layout ``i`` (:mod:`.layout`: the design's hash seed and environment
size, ASLR off), giving its :class:`~.valgrind.Counts` and the measure's value
(:func:`measure_value`: ``Ir`` for ``instructions``, the weighted sum of :mod:`.cycles` for
``cycles``). Python cases (:mod:`.python`), ``exec`` commands and ITERS programs
(:mod:`.programs`) are made of such executions.

A count is comparable only with counts made by the same valgrind, the same interpreter (or
program) and the same layouts and cache geometry: :class:`CountIdentity` records them with
every result, and :func:`identity_differences` says how two differ (``compare`` warns).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from ..errors import ConfigurationError
from .cycles import estimate_cycles
from .layout import ENV_TARGET, CountLayout, layout_env
from .valgrind import CACHE_GEOMETRY, Counts, Valgrind, run_counted

#: the measures ``--measure`` accepts: ``time`` (the clock, the default) and the counts
MEASURES = ("time", "instructions", "cycles")
#: the count measures and their units (the unit is the measure's name)
COUNT_MEASURES = ("instructions", "cycles")
#: said once wherever a verdict on counts is printed
NOT_TIME = ("counts are not time: they leave out I/O, sleeping, other processes, the real "
            "caches, branch prediction and the clock frequency (docs/methods.md, \"Counts\")")


def check_measure(name: str | None) -> str:
    """``name`` if it is a known measure (``time`` when None), else a ConfigurationError."""
    name = name or "time"
    if name not in MEASURES:
        raise ConfigurationError(f"--measure {name!r}: expected one of {', '.join(MEASURES)}")
    return name


def is_count(measure: str | None) -> bool:
    return measure in COUNT_MEASURES


@dataclass(frozen=True)
class CountIdentity:
    """What produced a count; counts are comparable only when these are equal."""

    measure: str
    valgrind: str
    program: str
    cache_sim: bool
    cache_geometry: str | None
    layout: str

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


#: how a Python case's count per call is made (one process per layout, cut into segments, its
#: paths through a view): counts made otherwise differ (e.g. 11,786 vs 11,992 per call for a
#: loop of 40 additions), so it is part of the identity ``compare`` checks
PYTHON_SEGMENTS = ("callgrind segments in one process per layout, a warm-up of n calls "
                   "before the points, paths through a view")


def make_identity(measure: str, valgrind: Valgrind, program: str,
                  how: str | None = None) -> CountIdentity:
    cache = None
    if measure == "cycles":
        cache = "; ".join(f"{n} {s} B {a}-way {line} B lines"
                          for n, (s, a, line) in CACHE_GEOMETRY.items())
    return CountIdentity(measure, valgrind.version, program, measure == "cycles", cache,
                         f"design seeds, ASLR off, environment padded to {ENV_TARGET} B"
                         + (f"; {how}" if how else ""))


def python_identity(python: str | None = None) -> str:
    """The interpreter a Python case is counted under, in words."""
    if python is None or python == sys.executable:
        return f"{sys.executable} (Python {sys.version.split()[0]})"
    return python


def identity_differences(a: Mapping[str, object] | None, b: Mapping[str, object] | None,
                         ) -> list[str]:
    """How two recorded identities differ, one phrase per field ('' fields ignored)."""
    if not a or not b:
        return [] if a == b else ["one side has no record of what produced its counts"]
    out = []
    for key in ("measure", "valgrind", "program", "cache_geometry", "layout"):
        if a.get(key) != b.get(key):
            out.append(f"{key} {a.get(key)!r} vs {b.get(key)!r}")
    return out


def measure_value(counts: Counts, measure: str) -> int:
    """The measure's number from one process's counts."""
    if measure == "cycles":
        return estimate_cycles(counts).cycles
    return counts.Ir


@dataclass(frozen=True)
class CountedExecution:
    """One counted process: its counts, the measure's value, its layout."""

    counts: Counts
    value: int
    layout: CountLayout
    stdout: str
    #: the counts of each segment of the process (see :func:`.valgrind.run_counted`)
    segments: tuple[Counts, ...] = ()


def count_process(valgrind: Valgrind, argv: Sequence[str], measure: str, layout_index: int, *,
                  cwd: str | None = None, timeout: float = 600.0, label: str | None = None,
                  extra_env: Mapping[str, str] | None = None,
                  workdir: str | None = None, stdin_data: bytes | None = None,
                  started: Callable[[Any], None] | None = None,
                  dump_before: str | None = None) -> CountedExecution:
    """Run ``argv`` under cachegrind (callgrind cut into segments with ``dump_before``) in
    layout ``layout_index``; a :class:`~.valgrind.CountFailure` when it gives no counts."""
    env, seed, size = layout_env(layout_index, extra=extra_env)
    run = run_counted(valgrind, argv, env=env, cwd=cwd, timeout=timeout,
                      cache_sim=measure == "cycles", label=label, workdir=workdir,
                      stdin_data=stdin_data, aslr_off=True, started=started,
                      dump_before=dump_before)
    layout = CountLayout(layout_index, seed, size, run.aslr_off)
    return CountedExecution(run.counts, measure_value(run.counts, measure), layout, run.stdout,
                            run.segments)
