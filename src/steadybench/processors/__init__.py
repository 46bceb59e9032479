"""Filters and analyzers over Results (Rancid §V-A, ResultsProcessor)."""

from .base import (
    Analyzer,
    CiMeanAnalyzer,
    CiMedianAnalyzer,
    CovAnalyzer,
    HistogramAnalyzer,
    InvalidRunsRemover,
    MaxAnalyzer,
    MeanAnalyzer,
    MedianAnalyzer,
    MinAnalyzer,
    PercentilesAnalyzer,
    Processor,
    QuartilesAnalyzer,
    ResultsRemover,
    StdevAnalyzer,
    SumAnalyzer,
    SummaryAnalyzer,
    TukeyOutlierFilter,
    WarmupFilter,
    WindowFilter,
    finalize_case,
)

__all__ = [
    "Analyzer",
    "CiMeanAnalyzer",
    "CiMedianAnalyzer",
    "CovAnalyzer",
    "HistogramAnalyzer",
    "InvalidRunsRemover",
    "MaxAnalyzer",
    "MeanAnalyzer",
    "MedianAnalyzer",
    "MinAnalyzer",
    "PercentilesAnalyzer",
    "Processor",
    "QuartilesAnalyzer",
    "ResultsRemover",
    "StdevAnalyzer",
    "SumAnalyzer",
    "SummaryAnalyzer",
    "TukeyOutlierFilter",
    "WarmupFilter",
    "WindowFilter",
    "finalize_case",
]

from .machine import MachineStateFlagger  # noqa: E402

__all__ += ["MachineStateFlagger"]
