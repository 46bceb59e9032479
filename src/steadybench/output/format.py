"""Formatting numbers for people: times with units, undefined values as a dash.

A case's headline is its :class:`~steadybench.model.estimate.Estimate`; the console, Markdown and
the HTML report print it with the ``estimate_*_text`` functions here, so they show the same
text.
"""

from __future__ import annotations

import math
from typing import Any

from ..model.estimate import Estimate
from .sanitize import markdown_text  # noqa: F401 - every Markdown writer escapes with it

UNDEFINED = "—"

_TIME_UNITS = ((1.0, "s"), (1e-3, "ms"), (1e-6, "µs"), (1e-9, "ns"))


def format_seconds(value: float | None, digits: int = 3) -> str:
    """``2.345e-06`` → ``"2.35 µs"``; None or NaN → ``"—"``."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return UNDEFINED
    # the unit of the value as printed: 999.96 ns rounds to 1000 ns, which is said "1 µs"
    magnitude = abs(float(f"{value:.{digits}g}"))
    for scale, unit in _TIME_UNITS:
        if magnitude >= scale or scale == 1e-9:
            if magnitude >= 1000 and unit == "s":
                break
            return f"{value / scale:.{digits}g} {unit}"
    return f"{value:.{digits}g} s"


def format_bytes(value: float | None) -> str:
    """``8056`` → ``"7.87 KiB"`` (binary units); None or NaN → ``"—"``."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return UNDEFINED
    for scale, unit in ((2.0 ** 30, "GiB"), (2.0 ** 20, "MiB"), (2.0 ** 10, "KiB")):
        if abs(value) >= scale:
            return f"{value / scale:.3g} {unit}"
    return f"{value:.0f} B"


def format_percent(value: float | None, digits: int = 2) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return UNDEFINED
    return f"{value * 100:.{digits}f}%"


def format_params(params: dict) -> str:
    return ",".join(f"{k}={v}" for k, v in params.items())


#: units of the count measures (:mod:`steadybench.counts`), shown with all their digits
COUNT_UNITS = ("instructions", "cycles")


def format_value(value: float | None, unit: str) -> str:
    if unit == "s":
        return format_seconds(value)
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return UNDEFINED
    if unit in COUNT_UNITS and abs(value) >= 1000:
        return f"{value:,.0f} {unit}"  # counts are exact: every digit, grouped
    return f"{value:.4g}{(' ' + unit) if unit else ''}"


def ci_text(ci: dict | None) -> str:
    """'± 1.23%' relative half-width, or the dash when undefined."""
    if not ci or ci.get("low") is None or ci.get("high") is None:
        return UNDEFINED
    centre = (ci["low"] + ci["high"]) / 2
    if centre == 0:
        return UNDEFINED
    return f"± {(ci['high'] - ci['low']) / 2 / abs(centre):.2%}"


def case_estimate(case: Any) -> Estimate | None:
    """The case's :class:`~steadybench.model.estimate.Estimate` (an older flat dict read as
    one), or None when the case has none."""
    return Estimate.from_dict(getattr(case, "estimate", None))


def headline(case: Any) -> tuple[float | None, dict | None]:
    """The figure every output shows for a case, from its Estimate: ``(value, {"low", "high",
    "confidence"})``; ``(None, None)`` when there is no estimate or it failed (never the mean
    in its place: every output shows the same figure, or the dash)."""
    est = case_estimate(case)
    if est is None or not est.ok:
        return None, None
    ci = ({"low": est.ci_low, "high": est.ci_high, "confidence": est.confidence}
          if est.has_ci else None)
    return est.value, ci


def estimate_unit(case: Any) -> str:
    """The unit of the case's headline (the Estimate's, else the case's)."""
    est = case_estimate(case)
    return est.unit if est is not None and est.unit else (getattr(case, "unit", None) or "s")


def estimate_value_text(est: Estimate | None) -> str:
    """The headline value as every human-readable output prints it (``"100 µs"``, ``"—"``)."""
    if est is None or not est.ok:
        return UNDEFINED
    return format_value(est.value, est.unit)


def estimate_ci_text(est: Estimate | None) -> str:
    """The interval as every human-readable output prints it: ``"± 1.23%"``, half its width
    relative to the value; the dash when there is none."""
    rel = est.relative_half_width if est is not None else None
    if rel is None or not math.isfinite(rel):
        return UNDEFINED
    return f"± {rel:.2%}"


def confidence_text(est: Estimate | None) -> str:
    """``"95%"``: the level of the interval; the dash when there is no interval."""
    if est is None or not est.has_ci or not est.confidence:
        return UNDEFINED
    return f"{est.confidence * 100:.4g}%"


def ratio_decimals(value: float, low: float | None = None, high: float | None = None) -> int:
    """Decimals a ratio is printed with: as many as its interval resolves (two digits of the
    interval's half-width: 1.87 [1.76, 2.13], 462 [400, 520], 1.004 [0.990, 1.020]), at most
    4; without an interval, three significant digits (1.87, 46.2, 462)."""
    if low is not None and high is not None and math.isfinite(low) and math.isfinite(high) \
            and high > low:
        return max(0, min(4, 1 - math.floor(math.log10((high - low) / 2))))
    if not math.isfinite(value) or value <= 0:
        return 3
    return max(0, 2 - math.floor(math.log10(value)))


def ratio_text(value: float, low: float | None = None, high: float | None = None) -> str:
    """``value`` with the interval in brackets, both at :func:`ratio_decimals`:
    ``"1.87× [1.76, 2.13]"``."""
    d = ratio_decimals(value, low, high)

    def shown(x: float) -> str:
        # a positive ratio never reads 0: a wide interval's low end keeps two digits
        text = f"{x:.{d}f}"
        return f"{x:.2g}" if x > 0 and float(text) == 0 else text

    text = f"{shown(value)}×"
    if low is not None and high is not None and math.isfinite(low) and math.isfinite(high):
        text += f" [{shown(low)}, {shown(high)}]"
    return text


def factor_text(ratio: float | None, low: float | None = None,
                high: float | None = None) -> str:
    """A speed ratio the way people say it: ``ratio`` = old time / new time, so 1.052 reads
    "1.052× faster" and 0.608 reads "1.64× slower" (factor and interval inverted, the factor
    always ≥ 1), with the interval in brackets when given; digits as the interval resolves
    them (:func:`ratio_decimals`)."""
    if ratio is None or not math.isfinite(ratio) or ratio <= 0:
        return "—"
    if ratio >= 1:
        factor, lo, hi, word = ratio, low, high, "faster"
    else:
        factor, word = 1 / ratio, "slower"
        lo = 1 / high if high else None
        hi = 1 / low if low else None
    number, _, interval = ratio_text(factor, lo, hi).partition(" ")
    return f"{number} {word}" + (f" {interval}" if interval else "")


def change_text(ratio: float | None, low: float | None = None,
                high: float | None = None) -> str:
    """Like :func:`factor_text`, but a ratio whose interval holds 1 has no direction:
    ``"1.004× [0.990, 1.020]"`` (never "1.004× faster" beside a verdict of no difference)."""
    if ratio is not None and low is not None and high is not None and low <= 1 <= high \
            and math.isfinite(ratio) and ratio > 0:
        return ratio_text(ratio, low, high)
    return factor_text(ratio, low, high)
