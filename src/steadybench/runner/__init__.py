"""The runner, the run loop and its executors, staged actions and stop conditions (Rancid §V).

Every name below loads on first use (PEP 562, :mod:`steadybench.lazy`): a counted process
imports :mod:`.deadline` alone to find a benchmark, and each module imported there is counted
(this package's eager imports, with statistics, json and tempfile, were half of a counted
Python process's start-up under callgrind).
"""

from ..lazy import lazy_exports

_LAZY: dict[str, str] = {
    **dict.fromkeys(("Action", "CompositeAction", "ConditionalAction", "CoolDownAction",
        "FileWriteAction", "FunctionAction", "PrintAction", "RunContext", "SleepAction",
        "WarmUpAction"), ".actions"),
    **dict.fromkeys(("And", "CiHalfWidth", "CiWidthWindow", "CovAfterWarmup", "CovWindow",
        "ElapsedTime", "MaxFailures", "MedianIqrStable", "Not", "OnError", "Or", "RunState",
        "Runs", "StopCondition", "Xor", "build_stop_condition"), ".stop"),
    **dict.fromkeys(("Executor", "InProcessExecutor", "LoopSettings", "OnFailure",
        "RunFailure", "RunLoop", "Sample"), ".loop"),
    **dict.fromkeys(("Runner", "Stage"), ".runner"),
}

__all__ = sorted(_LAZY)

__getattr__, __dir__ = lazy_exports(__name__, globals(), _LAZY)
