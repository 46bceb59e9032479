"""Which cases of a result are compared with each other, and the plain-words lines that say so.

The rule, one for every command (``run``, ``exec``, ``iters``, ``timeit``):

* cases with the same benchmark and the same parameters but different implementations (a
  ``run`` group, several ``exec`` commands at one ``--param`` value) are variants of one
  question: "which implementation is fastest here?";
* when a benchmark has a single implementation but several parameter sets (a parameter scan),
  its parameter sets are the variants: "n=100 is 9.8× faster than n=1000".

Each comparison is said by :func:`steadybench.output.relative.summary_lines` (fastest first,
the ratio's interval from the independent executions when there are at least two on each side,
else from the estimates' intervals).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..model.execution import execution_values
from ..model.results import CaseResult
from .format import case_estimate, format_params
from .relative import Relation, Variant, relative_summary


@dataclass(frozen=True)
class Comparison:
    """One set of variants compared: a heading ("build string [n=100]"), its lines, the
    relations they say, and whether the variants are a parameter scan of one implementation
    (the report draws a growth plot for those instead of ratios)."""

    heading: str
    lines: list[str]
    relations: tuple[Relation, ...] = ()
    scan: bool = False


def _compared(heading: str, variants: list[Variant], confidence: float,
              reference: str | None = None, by_time: bool = True,
              scan: bool = False) -> Comparison | None:
    relations = tuple(relative_summary(variants, confidence, reference, by_time))
    if not relations:
        return None
    return Comparison(heading, [r.text() for r in relations], relations, scan)


def _executions(case: CaseResult) -> list[float] | None:
    values = execution_values(case.processes)
    return values if len(values) >= 2 else None


def _variant(case: CaseResult, name: str) -> Variant | None:
    est = case_estimate(case)
    if est is None:
        return None
    return Variant(name, est, _executions(case))


def comparisons(cases: Sequence[CaseResult], confidence: float = 0.95,
                commands: bool = False, reference: str | None = None,
                by_time: bool = True) -> list[Comparison]:
    """The comparisons :mod:`this module's <steadybench.output.groups>` rule finds in
    ``cases``, in the order the cases ran; failed and interrupted cases are left out.

    With ``commands`` (``exec``, ``iters``: every case is a command, its own benchmark) all
    commands at one parameter set are the variants of one question. ``reference`` and
    ``by_time`` are those of :func:`~steadybench.output.relative.relative_summary` (exec's
    ``--reference`` and ``--sort``)."""
    # failed and interrupted cases are left out: no verdict from a partial case (issue 28)
    ok = [c for c in cases if not c.errors and not c.interrupted]
    # a question's key: its benchmark (or "commands") alone when it has no parameters, and
    # its one case alone until a second comes: a tuple and a list per case were 150 of the
    # 300 bytes a case this held beside 10^6 cases (issue 27 item 13)
    by_question: dict[str | tuple[str, str], CaseResult | list[CaseResult]] = {}
    # each benchmark's cases with parameters, found once (a search per benchmark took 10^5
    # benchmarks 50 s per 20,000; issue 27 item 13)
    with_params: dict[str, list[CaseResult]] = {}
    for case in ok:
        name, param_name = "commands" if commands else case.benchmark, case.param_name
        key = (name, param_name) if param_name else name
        got = by_question.get(key)
        if got is None:
            by_question[key] = case
        elif isinstance(got, list):
            got.append(case)
        else:
            by_question[key] = [got, case]
        if case.params:
            with_params.setdefault(case.benchmark, []).append(case)
    out: list[Comparison] = []
    scanned: set[str] = set()
    for key, got in by_question.items():
        benchmark, param_name = (key, "") if isinstance(key, str) else key
        group = got if isinstance(got, list) else [got]
        names = {c.implementation for c in group}
        if len(names) >= 2:
            variants = [v for c in group if (v := _variant(c, c.implementation)) is not None]
            heading = "" if commands else benchmark
            heading += f" [{param_name}]" if param_name else ""
            if comp := _compared(heading, variants, confidence, reference, by_time):
                out.append(comp)
        elif group[0].benchmark not in scanned:
            benchmark = group[0].benchmark
            scanned.add(benchmark)
            scan = with_params.get(benchmark, [])
            if len({c.implementation for c in scan}) == 1 and len(scan) >= 2:
                variants = [v for c in scan
                            if (v := _variant(c, format_params(c.params))) is not None]
                if comp := _compared(f"{benchmark} (parameter scan)", variants, confidence,
                                     scan=True):
                    out.append(comp)
    return out


def comparison_text(cases: Sequence[CaseResult], confidence: float = 0.95,
                    commands: bool = False, reference: str | None = None,
                    by_time: bool = True) -> list[str]:
    """The comparisons as console lines: a heading per comparison (none for a comparison of
    commands without parameters), then its lines indented."""
    lines = []
    for comp in comparisons(cases, confidence, commands, reference, by_time):
        if comp.heading.strip():
            lines.append(f"{comp.heading.strip()}:")
            lines.extend(f"  {line}" for line in comp.lines)
        else:
            lines.extend(comp.lines)
    return lines
