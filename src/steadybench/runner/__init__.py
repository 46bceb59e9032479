"""The runner, its staged actions and its stop conditions (Rancid §V)."""

from .actions import (
    Action,
    CompositeAction,
    ConditionalAction,
    CoolDownAction,
    FileWriteAction,
    FunctionAction,
    PrintAction,
    RunContext,
    SleepAction,
    WarmUpAction,
)
from .runner import Runner, Stage
from .stop import (
    And,
    CiHalfWidth,
    CovWindow,
    ElapsedTime,
    Not,
    OnError,
    Or,
    Runs,
    RunState,
    StopCondition,
    Xor,
    build_stop_condition,
)

__all__ = [
    "Action", "And", "CiHalfWidth", "CompositeAction", "ConditionalAction", "CoolDownAction",
    "CovWindow", "ElapsedTime", "FileWriteAction", "FunctionAction", "Not", "OnError", "Or",
    "PrintAction", "RunContext", "RunState", "Runner", "Runs", "SleepAction", "Stage",
    "StopCondition", "WarmUpAction", "Xor", "build_stop_condition",
]
