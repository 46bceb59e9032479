"""Statistics: streaming moments, summaries, confidence intervals, outliers and regression.

The names below load on first use (PEP 562): :mod:`.streaming` is pure Python and needed by
every worker process, while :mod:`.summary` imports scipy, which a worker must not pay for.
"""

from __future__ import annotations

from ..lazy import lazy_exports
from .streaming import StreamingStats

_LAZY = dict.fromkeys(("Interval", "ci_mean", "ci_median", "describe", "describe_stream"),
                      ".summary")

__all__ = ["Interval", "StreamingStats", "ci_mean", "ci_median", "describe", "describe_stream"]

__getattr__, __dir__ = lazy_exports(__name__, globals(), _LAZY)
