"""Measurement methods: how one sample is taken and how samples become an estimate.

``direct``, ``batch``, ``differential``, ``linefit`` and ``initsplit`` are the in-process
methods (see ``docs/methods.md``); :func:`solve_blocks` is the block-time solver of Moreno and
Fischmeister §5.1. :func:`make_method` builds a method by name from options (strings from the
command line are converted), raising :class:`~steadybench.errors.ConfigurationError` naming a
bad option.
"""

from __future__ import annotations

import ast
import inspect
from typing import Any

from ..errors import ConfigurationError
from .base import DirectMethod, Method, estimate_from_stats
from .batch import BatchMethod
from .calibrated import CalibratedMethod
from .blocks import BlockGroup, BlockSolution, solve_blocks
from .differential import DifferentialMethod, trimmed_mean_ci
from .initsplit import InitSplitMethod, default_schedule
from .linefit import LineFitMethod, fit_points
from .unroll import MAX_UNROLL, StatementImplementation

#: method name → class
METHODS: dict[str, type[Method]] = {
    "auto": CalibratedMethod,
    "direct": DirectMethod,
    "batch": BatchMethod,
    "differential": DifferentialMethod,
    "linefit": LineFitMethod,
    "initsplit": InitSplitMethod,
}
METHOD_NAMES = tuple(METHODS)


def _convert(value: Any) -> Any:
    """Command-line strings to Python values: numbers, ``inf``, lists; else left as is."""
    if not isinstance(value, str):
        return value
    text = value.strip()
    if text.lower() in ("inf", "infinity"):
        return float("inf")
    if text.lower() in ("none", "auto", ""):
        return None
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def method_options(name: str) -> list[str]:
    """The option names method ``name`` accepts."""
    cls = METHODS[name]
    return [p for p in inspect.signature(cls.__init__).parameters if p != "self"]


def make_method(name: str, **options: Any) -> Method:
    """The method called ``name`` with ``options`` (values may be command-line strings)."""
    key = str(name).strip().lower()
    if key not in METHODS:
        raise ConfigurationError(
            f"unknown method {name!r}; choose one of {', '.join(METHOD_NAMES)}")
    allowed = method_options(key)
    for option in options:
        if option not in allowed:
            hint = f"options: {', '.join(allowed)}" if allowed else "it takes no options"
            raise ConfigurationError(f"method {key} has no option {option!r} ({hint})")
    converted = {k: _convert(v) for k, v in options.items()}
    converted = {k: v for k, v in converted.items() if v is not None}
    return METHODS[key](**converted)


__all__ = [
    "MAX_UNROLL", "METHODS", "METHOD_NAMES", "BatchMethod", "CalibratedMethod", "BlockGroup", "BlockSolution",
    "DifferentialMethod", "DirectMethod", "InitSplitMethod", "LineFitMethod", "Method",
    "StatementImplementation", "default_schedule", "estimate_from_stats", "fit_points",
    "make_method", "method_options", "solve_blocks", "trimmed_mean_ci",
]
