"""External programs: commands (``exec``), the ITERS protocol (``iters``) and size sweeps
(``sweep``). See ``docs/programs.md``."""

from .commands import Command, parameter_sets, parse_param, parse_param_range
from .exec import ExecOptions, ExecSession, exec_commands
from .process import CommandRunner, ProcessRun

__all__ = [
    "Command", "CommandRunner", "ExecOptions", "ExecSession", "ProcessRun", "exec_commands",
    "parameter_sets", "parse_param", "parse_param_range",
]
