"""The objects a benchmark is defined with (Rancid §V-A)."""

from .benchmark import Benchmark, Configuration
from .implementation import CallableImplementation, FunctionImplementation, Implementation
from .parameters import Parameters, parameter_grid

__all__ = [
    "Benchmark",
    "CallableImplementation",
    "Configuration",
    "FunctionImplementation",
    "Implementation",
    "Parameters",
    "parameter_grid",
]

from .results import (  # noqa: E402
    PRIMARY_METRIC,
    RUN_FAILED,
    RUN_OK,
    RUN_REMOVED,
    RUN_WARMUP,
    SCHEMA_VERSION,
    CaseResult,
    Results,
)

__all__ += [
    "PRIMARY_METRIC",
    "RUN_FAILED",
    "RUN_OK",
    "RUN_REMOVED",
    "RUN_WARMUP",
    "SCHEMA_VERSION",
    "CaseResult",
    "Results",
]
