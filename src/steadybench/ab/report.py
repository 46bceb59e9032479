"""How an A/B result is said and saved: a sentence the way people speak ("B is 1.052× faster
than A [1.041, 1.063] at 95%", never "0.608×"), the verdict with rounds, executions and time,
and a JSON document with every round."""

from __future__ import annotations

import json
from typing import Any

from .. import __version__
from .session import FAILED, ABResult


def ratio_phrase(ratio: float, low: float | None, high: float | None, subject: str = "B",
                 other: str = "A", fastest_first: bool = False) -> str:
    """``ratio`` = time(other)/time(subject): "B is 1.052× faster than A [1.041, 1.063]", or
    slower with the factor and interval inverted, so the factor is always ≥ 1. With
    ``fastest_first`` a slower subject is turned around: "A is 1.600× faster than B [...]"
    (the way every relative summary is said, fastest first)."""
    from ..output.format import factor_text

    if fastest_first and ratio is not None and 0 < ratio < 1:
        return ratio_phrase(1 / ratio, 1 / high if high else None, 1 / low if low else None,
                            subject=other, other=subject)
    factor, _, interval = factor_text(ratio, low, high).partition(" [")
    return f"{subject} is {factor} than {other}" + (f" [{interval}" if interval else "")


def answer_phrase(ratio: float, low: float | None, high: float | None, subject: str = "B",
                  other: str = "A") -> str:
    """The answer of a look, never naming a winner the interval does not support: the faster
    first when the interval lies beyond 1 ("A is 1.87× faster than B [1.76, 2.13]"); "no
    clear difference between A and B: 1.004× [0.990, 1.020]" when it holds 1 (the factor
    ≥ 1, said from the faster side); "A and B are 6.00× apart so far; too few rounds for an
    interval" before there is a finite one."""
    import math

    from ..output.format import ratio_text

    if not ratio or not math.isfinite(ratio) or ratio <= 0:
        return f"no answer yet for {subject} and {other}"
    if ratio < 1:  # said from the faster side: the factor is always ≥ 1
        subject, other, ratio = other, subject, 1 / ratio
        low, high = (1 / high if high else None), (1 / low if low else None)
    if low is None or high is None or not (math.isfinite(low) and math.isfinite(high)):
        return (f"{subject} and {other} are {ratio_text(ratio)} apart so far; too few rounds "
                "for an interval")
    if low <= 1 <= high:
        return f"no clear difference between {subject} and {other}: " \
               f"{ratio_text(ratio, low, high)}"
    return ratio_phrase(ratio, low, high, subject=subject, other=other)


def budget_left(res: ABResult) -> float | None:
    """Seconds the comparison can still take at most: the time budget left, or the rounds
    left at the mean time of a round so far, whichever is smaller (a decided look ends it
    sooner)."""
    s = res.settings
    rounds = len(res.rounds)
    by_rounds = ((s.max_rounds - rounds) * res.elapsed / rounds) if rounds else None
    by_time = max(s.max_time - res.elapsed, 0.0) if s.max_time is not None else None
    known = [v for v in (by_rounds, by_time) if v is not None]
    return min(known) if known else None


def progress_line(res: ABResult, subject: str = "B", other: str = "A") -> str:
    """The line shown at each look: the answer so far and how long the rest can take."""
    from ..output.loggers import eta_text

    lk = res.look
    # the answer so far names no winner its interval does not support ("no clear
    # difference ... so far" while the interval holds 1)
    phrase = answer_phrase(lk.estimate, lk.low, lk.high, subject=subject, other=other)
    # short enough for 80 columns with a typical phrase (it once wrapped "a|t most 1 s left")
    return (f"  round {lk.rounds}/{res.settings.max_rounds}: {phrase} so far; "
            f"{res.elapsed:.1f} s, ≤ {eta_text(budget_left(res))} left")


def medians(res: ABResult) -> dict[str, float | None]:
    """The median time of A and of B over the paired rounds: the absolute times beside the
    ratio ("A 2.68 µs, B 1.42 µs")."""
    import statistics

    out: dict[str, float | None] = {}
    for label in ("A", "B"):
        values = [r.outcomes[label].value for r in res.paired
                  if r.outcomes[label].value is not None]
        out[label] = statistics.median(values) if values else None
    return out


def times_text(res: ABResult) -> str:
    """"A 2.68 µs, B 1.42 µs" (empty before any paired round)."""
    from ..output.format import format_seconds

    m = medians(res)
    if m["A"] is None or m["B"] is None:
        return ""
    return f"A {format_seconds(m['A'])}, B {format_seconds(m['B'])}"


def summary_lines(res: ABResult, verbose: bool = False) -> list[str]:
    """What the console shows: the answer with both times, then how it was reached; the
    statistics' own terms (the sequential method, its spending of α, the order of rounds)
    only ``verbose`` (``-v``)."""
    s = res.settings
    lines = [f"A: {res.variants['A']['description']}", f"B: {res.variants['B']['description']}"]
    look = res.look
    if res.verdict == FAILED:
        lines.append(f"verdict: failed — {res.reason}")
    elif look is not None:
        lines.append(_answer(res))
        lines.append(f"verdict: {_verdict(res)}")
    else:
        lines.append(f"verdict: {res.verdict} — {res.reason}")
    n = len(res.paired)
    lines.append(f"{n} round(s), {2 * n} executions, {res.elapsed:.1f} s; {res.reason}")
    if look is not None and verbose:
        lines.append(f"method: {look.method}; interval at {look.level:.4g} for this look "
                     f"(α spent over looks at rounds {', '.join(map(str, _looks(res)))}); "
                     "two-sided; RMIT order" + (", duet (simultaneous, pinned)" if s.duet
                                               else ""))
    for label in ("A", "B"):
        for failure in res.failures[label][:3]:
            lines.append(f"{label} failed in {failure}")
    return lines


def _answer(res: ABResult) -> str:
    """The ratio the verdict rests on, the way people say it, at the stated confidence."""
    look = res.look
    phrase = answer_phrase(look.estimate, look.low, look.high)
    times = times_text(res)
    return (f"{times}: " if times else "") + f"{phrase} at {res.settings.confidence:.0%}"


def _verdict(res: ABResult) -> str:
    """The verdict in words, with the threshold it used and whether it is interim."""
    s = res.settings
    label = {"faster": "B is faster", "slower": "B is slower",
             "equivalent": f"unchanged within ±{s.threshold:.1%}",
             "no difference": "no real difference found"}.get(res.verdict, res.verdict)
    band = f", threshold ±{s.threshold:.1%}" if s.threshold > 0 else ""
    return f"{label}{band}" + (" (interim: interrupted)" if res.interim else "")


def quiet_line(res: ABResult) -> str:
    """The one line of ``-q``: the verdict first, then the answer it rests on ("no real
    difference found: A is 1.006× faster than B [0.993, 1.020] at 95%" must not read as a
    claim that A is faster)."""
    if res.verdict == FAILED or res.look is None:
        return summary_lines(res)[2]
    return f"{_verdict(res)}: {_answer(res)}"


def _looks(res: ABResult) -> list[int]:
    from ..stats.sequential import SequentialPlan
    from .session import plan_arguments

    return list(SequentialPlan(**plan_arguments(res.settings)).looks())


def _look_dict(look: Any) -> dict[str, Any] | None:
    if look is None:
        return None
    return {"rounds": look.rounds, "ratio": look.estimate, "low": look.low, "high": look.high,
            "level": look.level, "decision": look.decision, "method": look.method}


def to_document(res: ABResult) -> dict[str, Any]:
    """The JSON-able record of an A/B comparison (``kind: steadybench-ab``)."""
    s = res.settings
    return {
        "kind": "steadybench-ab",
        "tool": {"name": "steadybench", "version": __version__},
        "settings": {"confidence": s.confidence, "threshold": s.threshold,
                     "equivalence": s.equivalence, "max_rounds": s.max_rounds,
                     "max_time": s.max_time, "duet": s.duet, "seed": s.seed,
                     "sides": "two-sided", "ratio": "time(A) / time(B); > 1: B is faster"},
        "variants": res.variants,
        "verdict": res.verdict,
        "interim": res.interim,
        "reason": res.reason,
        "summary": summary_lines(res)[2] if res.look is not None else None,
        "medians": medians(res),
        "elapsed": res.elapsed,
        "result": _look_dict(res.look),
        "looks": [_look_dict(x) for x in res.looks],
        "rounds": [{"index": r.index, "order": list(r.order),
                    "A": r.outcomes["A"].value, "B": r.outcomes["B"].value,
                    "errors": {k: o.error for k, o in r.outcomes.items() if o.error}}
                   for r in res.rounds],
        "failures": res.failures,
        "warnings": res.warnings,
        **({"machine": res.machine} if res.machine is not None else {}),
        **({"profiles": res.profiles} if res.profiles is not None else {}),
    }


def to_json(res: ABResult) -> str:
    from ..output.results_io import _finite

    return json.dumps(_finite(to_document(res)), indent=1, ensure_ascii=False) + "\n"
