"""Statistics: streaming moments, summaries, confidence intervals, outliers and regression.

The names below load on first use (PEP 562): :mod:`.streaming` is pure Python and needed by
every worker process, while :mod:`.summary` imports scipy, which a worker must not pay for.
"""

from __future__ import annotations

import importlib
from typing import Any

from .streaming import StreamingStats

_LAZY = dict.fromkeys(("Interval", "ci_mean", "ci_median", "describe", "describe_stream"),
                      ".summary")

__all__ = ["Interval", "StreamingStats", "ci_mean", "ci_median", "describe", "describe_stream"]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value
