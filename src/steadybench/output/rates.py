"""Rates: items or bytes processed per second (Google Benchmark's ``SetItemsProcessed`` and
``SetBytesProcessed``, shown as ``items_per_second`` and ``bytes_per_second``).

A benchmark declares how much one call of its measured code processes,
``@steadybench.benchmark(items_per_call=..., bytes_per_call=...)``: a number, the name of one
of its parameters, or a function of its parameters. The amount of each case is kept in
``case.extra["throughput"]`` (``{"items": 1000.0, "bytes": ...}``), so every output computes the
same rate from it: the amount divided by the case's estimate (seconds per call), and the
interval of the rate is the amount divided by the estimate's interval, bounds swapped (a
monotone map keeps the coverage).

Byte rates are printed in binary units (KiB/s, MiB/s, GiB/s, as Google Benchmark does), item
rates in decimal ones (k, M, G items/s).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import ConfigurationError

#: the kinds of amount, in the order they are shown
KINDS = ("items", "bytes")


@dataclass(frozen=True)
class Rate:
    """Amount per second of one case, with its interval when the estimate has one."""

    kind: str
    per_second: float
    low: float | None = None
    high: float | None = None

    def text(self) -> str:
        return rate_text(self.kind, self.per_second)


def amounts_for(declared: Mapping[str, Any], params: Mapping[str, Any]) -> dict[str, float]:
    """The amounts one call processes, from the declaration (a number, a parameter's name or
    a function of the parameters) and the case's parameters."""
    out: dict[str, float] = {}
    for kind, how in declared.items():
        if how is None:
            continue
        if isinstance(how, str):
            if how not in params:
                raise ConfigurationError(f"{kind}_per_call={how!r}: no parameter of that name "
                                         f"(parameters: {', '.join(params) or 'none'})")
            value = params[how]
        elif callable(how):
            value = how(**params)
        else:
            value = how
        try:
            amount = float(value)
        except (TypeError, ValueError):
            raise ConfigurationError(f"{kind}_per_call: {value!r} is not a number") from None
        if not (math.isfinite(amount) and amount > 0):
            raise ConfigurationError(f"{kind}_per_call must be positive, got {value!r}")
        out[kind] = amount
    return out


def check_declaration(kind: str, how: Any) -> None:
    """Refuse a declaration that can never give an amount (at decoration time)."""
    if how is None or isinstance(how, str) or callable(how):
        return
    if isinstance(how, bool) or not isinstance(how, int | float) or not how > 0 \
            or not math.isfinite(how):
        raise ConfigurationError(f"{kind}_per_call must be a positive number, a parameter's "
                                 f"name or a function of the parameters, got {how!r}")


def case_rates(case: Any) -> list[Rate]:
    """The rates of a case whose benchmark declared amounts, from its estimate."""
    from .format import case_estimate

    amounts = (case.extra or {}).get("throughput") if isinstance(case.extra, dict) else None
    est = case_estimate(case)
    if not amounts or est is None or not est.value or est.value <= 0 or est.unit != "s":
        return []
    rates = []
    for kind in KINDS:
        amount = amounts.get(kind)
        if not amount:
            continue
        low = amount / est.ci_high if est.ci_high and est.ci_high > 0 else None
        high = amount / est.ci_low if est.ci_low and est.ci_low > 0 else None
        rates.append(Rate(kind, amount / est.value, low, high))
    return rates


def rate_text(kind: str, per_second: float) -> str:
    """``("items", 1.234e6)`` → ``"1.23 M items/s"``; ``("bytes", 3.2e9)`` → ``"2.98 GiB/s"``."""
    if kind == "bytes":
        steps: tuple[tuple[float, str], ...] = ((2.0 ** 40, "TiB/s"), (2.0 ** 30, "GiB/s"),
                                                (2.0 ** 20, "MiB/s"), (2.0 ** 10, "KiB/s"))
        for scale, unit in steps:
            if per_second >= scale:
                return f"{per_second / scale:.3g} {unit}"
        return f"{per_second:.3g} B/s"
    for scale, prefix in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if per_second >= scale:
            return f"{per_second / scale:.3g} {prefix} {kind}/s"
    return f"{per_second:.3g} {kind}/s"


def rates_text(case: Any, undefined: str = "—") -> str:
    """Every rate of a case on one line (``"1.23 M items/s, 456 MiB/s"``), or ``undefined``."""
    rates = case_rates(case)
    return ", ".join(r.text() for r in rates) if rates else undefined


def rate_fields(case: Any) -> dict[str, float | None]:
    """The rates as numbers, Google Benchmark's names: ``items_per_second``,
    ``bytes_per_second`` (and ``_low``/``_high``: the interval)."""
    out: dict[str, float | None] = {}
    for rate in case_rates(case):
        out[f"{rate.kind}_per_second"] = rate.per_second
        out[f"{rate.kind}_per_second_low"] = rate.low
        out[f"{rate.kind}_per_second_high"] = rate.high
    return out

