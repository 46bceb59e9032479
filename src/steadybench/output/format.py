"""Formatting numbers for people: times with units, undefined values as a dash."""

from __future__ import annotations

import math

UNDEFINED = "—"

_TIME_UNITS = ((1.0, "s"), (1e-3, "ms"), (1e-6, "µs"), (1e-9, "ns"))


def format_seconds(value: float | None, digits: int = 3) -> str:
    """``2.345e-06`` → ``"2.35 µs"``; None or NaN → ``"—"``."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return UNDEFINED
    magnitude = abs(value)
    for scale, unit in _TIME_UNITS:
        if magnitude >= scale or scale == 1e-9:
            if magnitude >= 1000 and unit == "s":
                break
            return f"{value / scale:.{digits}g} {unit}"
    return f"{value:.{digits}g} s"


def format_percent(value: float | None, digits: int = 2) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return UNDEFINED
    return f"{value * 100:.{digits}f}%"


def format_params(params: dict) -> str:
    return ",".join(f"{k}={v}" for k, v in params.items())


def format_value(value: float | None, unit: str) -> str:
    if unit == "s":
        return format_seconds(value)
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return UNDEFINED
    return f"{value:.4g}{(' ' + unit) if unit else ''}"


def ci_text(ci: dict | None) -> str:
    """'± 1.23%' relative half-width, or the dash when undefined."""
    if not ci or ci.get("low") is None or ci.get("high") is None:
        return UNDEFINED
    centre = (ci["low"] + ci["high"]) / 2
    if centre == 0:
        return UNDEFINED
    return f"± {(ci['high'] - ci['low']) / 2 / abs(centre):.2%}"


def headline(case) -> tuple[float | None, dict | None]:
    """The figure to show for a case: the method's estimate and its interval (the mean and the
    CI of the mean for ``direct``), as ``(value, {"low", "high"})``. When the case ran as
    several independent processes, the interval is the one across processes: runs within one
    process are not independent (Touati et al. §2), so their pooled interval is too narrow."""
    est = case.estimate or {}
    if est.get("value") is not None:
        ci = None
        between = est.get("between_process_ci")
        if between and between[0] is not None:
            ci = {"low": between[0], "high": between[1]}
        elif est.get("ci_low") is not None and est.get("ci_high") is not None:
            ci = {"low": est["ci_low"], "high": est["ci_high"]}
        return est["value"], ci
    return case.stats.get("mean"), case.ci


def markdown_text(text: object) -> str:
    """Text safe in a Markdown table cell: HTML is shown, not rendered (a pull-request comment
    would render ``<b>``), and ``|`` or a line break cannot break the table."""
    return (str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            .replace("|", "\\|").replace("\n", " "))
