"""steadybench: benchmarks whose numbers can be trusted.

The object API follows the Rancid framework (Afonso & Almeida, §V): a :class:`Manager` holds
:class:`Benchmark` objects (implementations × parameter sets), meters, processors and loggers,
and returns :class:`Results`. The short form is the :func:`benchmark` decorator.
"""

__version__ = "0.1.0"

from .definitions import benchmark
from .errors import SteadybenchError
from .manager import Manager, PartialResults, run_benchmarks
from .measure import Estimate, measure
from .meters import (
    CallableMeter,
    CpuTimeMeter,
    FileValueMeter,
    Meter,
    PeakMemoryMeter,
    SuccessfulRunsMeter,
    WallTimeMeter,
)
from .model import (
    Benchmark,
    CallableImplementation,
    CaseResult,
    Configuration,
    FunctionImplementation,
    Implementation,
    Parameters,
    Results,
)
from .output.loggers import ConsoleLogger, CsvLogger, JsonLogger, MarkdownLogger, XmlLogger
from .output.results_io import load_results, write_results
from .runner import (
    CiHalfWidth,
    CovWindow,
    ElapsedTime,
    Runner,
    Runs,
    Stage,
)

__all__ = [
    "Benchmark",
    "CallableImplementation",
    "CallableMeter",
    "CaseResult",
    "CiHalfWidth",
    "Configuration",
    "ConsoleLogger",
    "CovWindow",
    "CpuTimeMeter",
    "CsvLogger",
    "ElapsedTime",
    "Estimate",
    "FileValueMeter",
    "FunctionImplementation",
    "Implementation",
    "JsonLogger",
    "Manager",
    "MarkdownLogger",
    "Meter",
    "Parameters",
    "PartialResults",
    "PeakMemoryMeter",
    "Results",
    "Runner",
    "Runs",
    "Stage",
    "SteadybenchError",
    "SuccessfulRunsMeter",
    "WallTimeMeter",
    "XmlLogger",
    "__version__",
    "benchmark",
    "load_results",
    "measure",
    "run_benchmarks",
    "write_results",
]
