"""Statistics: streaming moments, summaries, confidence intervals, outliers and regression."""

from .streaming import StreamingStats
from .summary import Interval, ci_mean, ci_median, describe, describe_stream

__all__ = ["Interval", "StreamingStats", "ci_mean", "ci_median", "describe", "describe_stream"]
