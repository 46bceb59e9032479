"""Computations on values near the limits of floating point (issue 27 item 15).

Inputs such as 1e308 are finite, so they pass every check of the readers, but the first sum or
square overflows: numpy printed warnings and the commands printed ``inf`` and ``nan`` as
results, or failed inside a library. :func:`overflow_checked` runs a computation with numpy's
floating-point errors raised and turns them into one line."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import numpy as np

from ..errors import ConfigurationError

T = TypeVar("T")


def overflow_checked(compute: Callable[[], T], what: str) -> T:
    """``compute()``, or a :class:`ConfigurationError` ("``what`` are too large or too small
    for floating point …") when it overflows, or meets an invalid operation or a non-finite
    value on the way."""
    try:
        with np.errstate(over="raise", invalid="raise", divide="ignore", under="ignore"):
            return compute()
    except (FloatingPointError, OverflowError) as exc:
        raise ConfigurationError(f"{what} are too large or too small for floating point "
                                 f"({exc}): rescale them (another unit)") from None
    except ValueError as exc:
        if "inf" not in str(exc) and "NaN" not in str(exc):
            raise
        raise ConfigurationError(f"{what} are too large or too small for floating point "
                                 f"({exc}): rescale them (another unit)") from None
