"""How the HTML report writes a value: numbers to four significant digits, times (named by
their key) with their unit, percentages, ratios in words, nested mappings as rows with dotted
keys; never raw JSON. Used by the report's views (:mod:`steadybench.output.reportviews`) and its
template's filters (:mod:`steadybench.output.report`)."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

from . import plotdata as pd
from .format import change_text

#: longest text shown for one value of the environment, context or extra fields
MAX_VALUE_CHARS = 600
#: keys whose numbers are times (in the case's unit) wherever they appear
TIME_KEY = re.compile(r"(^|_)(time|mean|median|stdev|std|stddev|min|max|startup|overhead|slope|"
                      r"intercept|value|ci_low|ci_high|low|high|mad|iqr|q1|q3|raw_mean|"
                      r"geomean|corrected_mean|values|sd|between_sd|within_sd)$")


def num_text(value: Any, digits: int = 4) -> str:
    if isinstance(value, bool) or value is None:
        return "–" if value is None else str(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return f"{value:.{digits}g}" if math.isfinite(value) else "–"
    return str(value)


def pct_text(value: Any) -> str:
    if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
        return f"{value * 100:.2f} %"
    return "–"


def factor_words(ratio: Any, ci: Any = None) -> str:
    """A BASE/NEW ratio in words ("1.25× faster [1.1, 1.4]"), the way people say it; no
    direction when the interval holds 1 ("0.97× [0.33, 1.03]")."""
    if not isinstance(ratio, int | float) or isinstance(ratio, bool):
        return "–"
    low, high = (ci[0], ci[1]) if ci else (None, None)
    return change_text(float(ratio), low, high)


def cut(text: str, limit: int = MAX_VALUE_CHARS) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def human(key: str, value: Any, unit: str = "s") -> str:
    """A value as a person reads it: times (by the key's name) with their unit, other numbers
    to 4 significant digits, lists joined by commas (long ones counted), mappings as
    ``key: value`` pairs; never JSON."""
    if value is None:
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int | float):
        if TIME_KEY.search(str(key).lower()) and unit:
            return pd.format_value(float(value), unit)
        return num_text(value)
    if isinstance(value, str):
        return cut(value)
    if isinstance(value, Mapping):
        return cut("; ".join(f"{k}: {human(str(k), v, unit)}" for k, v in value.items()))
    if isinstance(value, Sequence):
        items = list(value)
        if len(items) > 12 and all(isinstance(v, int | float) for v in items):
            return f"{len(items)} values"
        return cut(", ".join(human(key, v, unit) for v in items))
    return cut(str(value))


def rows(mapping: Mapping[str, Any] | None, unit: str = "s",
         depth: int = 3) -> list[tuple[str, str]]:
    """(key, text) rows of a mapping, nested mappings flattened with dotted keys."""
    out: list[tuple[str, str]] = []

    def walk(prefix: str, value: Any, level: int) -> None:
        if isinstance(value, Mapping) and value and level < depth:
            for k, v in value.items():
                walk(f"{prefix}.{k}" if prefix else str(k), v, level + 1)
        elif (isinstance(value, Sequence) and not isinstance(value, str) and value
              and all(isinstance(v, Mapping) for v in value) and level < depth):
            for i, v in enumerate(value[:20]):
                walk(f"{prefix}[{i}]", v, level + 1)
        else:
            out.append((prefix, human(prefix.rsplit(".", 1)[-1], value, unit)))

    for key, value in (mapping or {}).items():
        walk(str(key), value, 0)
    return out
