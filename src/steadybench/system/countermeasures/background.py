"""The ``background`` countermeasure: stop chosen background processes for the run (the action is
:class:`~steadybench.system.background.StopProcessesAction`).

Its preset builder and the action it adds, in one module (pyperf keeps one ``Operation``
per setting the same way); registered as ``background`` in
:data:`steadybench.registry.countermeasures`.
"""

from __future__ import annotations

from typing import Any, ClassVar

from ...errors import ConfigurationError
from ...runner.runner import Stage
from ..background import StopProcessesAction, find_processes
from .base import Built, Countermeasure, PresetMachine, Skip


class Background(Countermeasure):
    """Stop named background processes while benchmarking (SIGSTOP, then SIGCONT)."""

    options: ClassVar[dict[str, Any]] = {"names": []}

    def build(self, machine: PresetMachine, o: dict[str, Any]) -> Built:
        names = o["names"]
        if isinstance(names, str):
            names = [names]
        if not isinstance(names, list) or not all(isinstance(n, str) and n for n in names):
            raise ConfigurationError("[background] names: a list of process names")
        if not names:
            raise Skip("no process named to stop (set [background] names in a preset file)")
        if not find_processes(machine.root, names):
            raise Skip(f"none of {', '.join(names)} is running")
        action = StopProcessesAction(machine.root, names)
        return [(Stage.BEFORE_BENCHMARK, action)], action.describe()
