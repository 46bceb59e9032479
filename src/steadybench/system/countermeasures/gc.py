"""The ``gc`` countermeasure: the garbage collector off while measuring, collections between runs.

Its preset builder and the action it adds, in one module (pyperf keeps one ``Operation``
per setting the same way); registered as ``gc`` in
:data:`steadybench.registry.countermeasures`.
"""

from __future__ import annotations

import gc
from typing import Any

from ...runner.actions import Action, RunContext
from ...runner.runner import Stage
from .base import Built, Countermeasure, PresetMachine


class GcAction(Action):
    """Keep the garbage collector out of the measured runs (Rancid §IV-C; pyperf does the same).

    Add to ``BEFORE_RUN``. The first call makes a full collection and switches the collector
    off; it stays off while measuring and its original state is restored in ``close``. Before
    each later run, a collection is made only when the collector would have run by itself (a
    generation's allocation count has passed its threshold), and only of that generation.
    Collecting everything before every run would evict the caches, so each measured run would
    start cold: a 100-element sort measured 10× slower that way on the development machine.
    """

    def __init__(self) -> None:
        self._was_enabled: bool | None = None
        self.collections = 0

    def __call__(self, ctx: RunContext) -> None:
        if self._was_enabled is None:
            self._was_enabled = gc.isenabled()
            gc.collect()
            gc.disable()
            return
        due = [g for g, (count, limit) in enumerate(zip(gc.get_count(), gc.get_threshold()))
               if limit and count >= limit]
        if due:
            gc.collect(max(due))
            self.collections += 1

    def close(self, ctx: RunContext) -> None:
        if self._was_enabled:
            gc.enable()
        self._was_enabled = None

    def describe(self) -> str:
        return ("collector off while measuring; garbage collected between runs when due "
                "(a full collection before the first)")


class Gc(Countermeasure):
    """Keep the garbage collector out of the measured runs (before each run)."""

    def build(self, machine: PresetMachine, o: dict[str, Any]) -> Built:
        action = GcAction()
        return [(Stage.BEFORE_RUN, action)], action.describe()
