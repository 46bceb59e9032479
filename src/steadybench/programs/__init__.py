"""External programs: commands (``exec``), the ITERS protocol (``iters``) and size sweeps
(``sweep``). See ``docs/programs.md``.

The names below load on first use (PEP 562): :mod:`.exec` imports numpy and scipy, which
``steadybench exec --help`` must not pay for.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..lazy import lazy_exports

#: public name → module (relative to this package) that defines it
_EXPORTS: dict[str, str] = {
    **dict.fromkeys(("Command", "parameter_sets", "parse_param", "parse_param_range"),
                    ".commands"),
    **dict.fromkeys(("ExecOptions", "ExecSession", "exec_commands"), ".exec"),
    **dict.fromkeys(("CommandRunner", "ProcessRun"), ".process"),
}

__all__ = [
    "Command", "CommandRunner", "ExecOptions", "ExecSession", "ProcessRun", "exec_commands",
    "parameter_sets", "parse_param", "parse_param_range",
]

__getattr__, __dir__ = lazy_exports(__name__, globals(), _EXPORTS)


if TYPE_CHECKING:  # for type checkers and editors: the same names, eagerly
    from .commands import Command, parameter_sets, parse_param, parse_param_range
    from .exec import ExecOptions, ExecSession, exec_commands
    from .process import CommandRunner, ProcessRun
