"""External programs: commands (``exec``), the ITERS protocol (``iters``) and size sweeps
(``sweep``). See ``docs/programs.md``.

The names below load on first use (PEP 562): :mod:`.exec` imports numpy and scipy, which
``steadybench exec --help`` must not pay for.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

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


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))


if TYPE_CHECKING:  # for type checkers and editors: the same names, eagerly
    from .commands import Command, parameter_sets, parse_param, parse_param_range
    from .exec import ExecOptions, ExecSession, exec_commands
    from .process import CommandRunner, ProcessRun
