"""steadybench: benchmarks whose numbers can be trusted.

The object API follows the Rancid framework (Afonso & Almeida, §V): a :class:`Manager` holds
:class:`Benchmark` objects (implementations × parameter sets), meters, processors and loggers,
and returns :class:`Results`. The short form is the :func:`benchmark` decorator; the one-call
API is :func:`measure`.

The names below are loaded on first use (PEP 562), so ``import steadybench.iters_protocol`` in a
measured program does not pay for numpy and scipy.
"""

# No import here but .lazy, which imports nothing the interpreter has not loaded already: the
# console script (steadybench.entry) runs this before it can guard against Ctrl-C (issue 27
# item 16), and a measured program pays nothing for it. Type checkers take a module-level
# TYPE_CHECKING as typing's.
TYPE_CHECKING = False

from .lazy import lazy_exports  # noqa: E402

__version__ = "0.1.0"

#: public name → module (relative to this package) that defines it
_EXPORTS: dict[str, str] = {
    "benchmark": ".definitions",
    "CountRunner": ".counts.python",
    "CountSettings": ".counts.python",
    "SteadybenchError": ".errors",
    "Manager": ".manager",
    "PartialResults": ".manager",
    "run_benchmarks": ".manager",
    "Estimate": ".model.estimate",
    "Measurement": ".measure",
    "measure": ".measure",
    "compare_interleaved": ".interleave",
    "Comparison": ".interleave",
    **dict.fromkeys(
        ("CallableMeter", "CpuTimeMeter", "FileValueMeter", "Meter", "PeakMemoryMeter",
         "SuccessfulRunsMeter", "WallTimeMeter"), ".meters"),
    **dict.fromkeys(
        ("Benchmark", "CallableImplementation", "CaseResult", "Configuration",
         "FunctionImplementation", "Implementation", "Parameters", "Results"), ".model"),
    **dict.fromkeys(
        ("ConsoleLogger", "CsvLogger", "JsonLogger", "MarkdownLogger", "XmlLogger"),
        ".output.loggers"),
    "load_results": ".output.results_io",
    "write_results": ".output.results_io",
    **dict.fromkeys(("CiHalfWidth", "CovWindow", "ElapsedTime", "Runner", "Runs", "Stage"),
                    ".runner"),
}

__all__ = [
    "__version__", "Benchmark", "CallableImplementation", "CallableMeter", "CaseResult",
    "CiHalfWidth", "Comparison", "Configuration", "ConsoleLogger", "CountRunner",
    "CountSettings", "CovWindow", "CpuTimeMeter", "CsvLogger",
    "ElapsedTime", "Estimate", "FileValueMeter", "FunctionImplementation", "Implementation",
    "JsonLogger", "Manager", "MarkdownLogger", "Measurement", "Meter", "Parameters",
    "PartialResults",
    "PeakMemoryMeter", "Results", "Runner", "Runs", "Stage", "SteadybenchError",
    "SuccessfulRunsMeter", "WallTimeMeter", "XmlLogger", "benchmark", "compare_interleaved",
    "load_results", "measure",
    "run_benchmarks", "write_results",
]

__getattr__, __dir__ = lazy_exports(__name__, globals(), _EXPORTS)


if TYPE_CHECKING:  # for type checkers and editors: the same names, eagerly
    from .counts.python import CountRunner, CountSettings
    from .definitions import benchmark
    from .errors import SteadybenchError
    from .interleave import Comparison, compare_interleaved
    from .manager import Manager, PartialResults, run_benchmarks
    from .measure import Measurement, measure
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
    from .model.estimate import Estimate
    from .output.loggers import ConsoleLogger, CsvLogger, JsonLogger, MarkdownLogger, XmlLogger
    from .output.results_io import load_results, write_results
    from .runner import CiHalfWidth, CovWindow, ElapsedTime, Runner, Runs, Stage
