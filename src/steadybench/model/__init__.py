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

# The results' names load on first use (:mod:`steadybench.lazy`): a counted process imports
# this package to find a benchmark, and every module it imports is counted and costs valgrind
# time (model.results with its enums and dataclasses was 0.4 s of processor time per counted
# Python process under callgrind).
from ..lazy import lazy_exports  # noqa: E402

_LAZY = {name: ".results" for name in (
    "PRIMARY_METRIC", "RUN_FAILED", "RUN_OK", "RUN_REMOVED", "RUN_WARMUP", "SCHEMA_VERSION",
    "CaseResult", "Results")}
__all__ += list(_LAZY)
__getattr__, __dir__ = lazy_exports(__name__, globals(), _LAZY)
