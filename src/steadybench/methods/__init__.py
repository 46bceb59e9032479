"""Measurement methods: how one sample is taken and how samples become an estimate.

``auto``, ``direct``, ``batch``, ``differential``, ``linefit``, ``initsplit`` and
``usertimed`` (code that times itself) are the in-process methods (see
``docs/methods.md``); :func:`solve_blocks` is the block-time solver of Moreno and
Fischmeister §5.1. Methods are found by name in :data:`METHODS`, the
:data:`steadybench.registry.methods` registry, which another package extends with one
:class:`Method` subclass and a ``steadybench.methods`` entry point (``docs/extending.md``).
:func:`make_method` builds a method by name from options (strings from the command line are
converted), raising :class:`~steadybench.errors.ConfigurationError` naming a bad option or
listing the names on an unknown one.
"""

from __future__ import annotations

from typing import Any

from .. import registry
from ..lazy import lazy_exports
from .base import DirectMethod, Method, estimate_from_stats

#: names loaded on first use (PEP 562): a worker process imports only the method it runs, and
#: ``blocks`` (numpy) or ``linefit`` (the regression module) only when used
_LAZY: dict[str, str] = {
    "BatchMethod": ".batch", "CalibratedMethod": ".calibrated",
    "BlockGroup": ".blocks", "BlockSolution": ".blocks", "solve_blocks": ".blocks",
    "DifferentialMethod": ".differential", "trimmed_mean_ci": ".differential",
    "InitSplitMethod": ".initsplit", "default_schedule": ".initsplit",
    "paper_schedule": ".initsplit",
    "LineFitMethod": ".linefit", "fit_points": ".linefit",
    "MAX_UNROLL": ".unroll", "StatementImplementation": ".unroll",
    "UserTimedMethod": ".usertimed",
}



#: method name → class: the :data:`steadybench.registry.methods` registry
METHODS = registry.methods
#: the registered method names, built-in and plug-in; follows the registry
METHOD_NAMES = METHODS.live_names()


def method_options(name: str) -> list[str]:
    """The option names method ``name`` accepts."""
    return METHODS.options(name)


def make_method(name: str, **options: Any) -> Method:
    """The method called ``name`` with ``options`` (values may be command-line strings)."""
    return METHODS.create(name, **options)


__all__ = [
    "MAX_UNROLL", "METHODS", "METHOD_NAMES", "BatchMethod", "BlockGroup", "BlockSolution",
    "CalibratedMethod",
    "DifferentialMethod", "DirectMethod", "InitSplitMethod", "LineFitMethod", "Method",
    "StatementImplementation", "UserTimedMethod", "default_schedule", "paper_schedule",
    "estimate_from_stats",
    "fit_points",
    "make_method", "method_options", "solve_blocks", "trimmed_mean_ci",
]

__getattr__, __dir__ = lazy_exports(__name__, globals(), _LAZY)
