"""Validation of numeric options: every number a command takes is finite and in its range.

Click's ``float`` accepts ``nan``, ``inf`` and ``1e400`` (which is ``inf``), and its ``int`` any
size; deep inside a measurement such values become an ``OverflowError`` (a timeout of ``inf``
seconds), a ``ValueError`` (a negative seed) or a loop that never ends. Here they are refused
where they are read, as one line and exit status 2::

    error: Invalid value for '--timeout': 'inf' is not a finite number.

Two tools, used together:

* **types** for option definitions: :class:`FiniteFloat` (a ``click.FloatRange`` that refuses
  NaN and ±infinity unless told to accept infinity) and the named instances below
  (:data:`POSITIVE_SECONDS`, :data:`PROBABILITY`, :data:`SEED`, :func:`count`...);
* :func:`harden`, the safety net for options defined with plain ``float`` or ``int`` (shared
  option groups, plug-ins, options added later): it gives every float option of a command, and
  of its sub-commands, the finite type with the same range (and :data:`MAX_NUMBER` as its upper
  bound when it has none), every integer option an upper bound (:data:`MAX_COUNT`), and every
  option called ``--seed`` the range of :data:`SEED`. Options that already have a
  :class:`FiniteFloat` type are left as they are.

Upper bounds exist so that a valid-looking number cannot overflow a C type further down (a
``poll`` timeout in milliseconds, a ``deque`` length, a ``time_t``): :data:`MAX_SECONDS` (a
year) for durations, :data:`MAX_COUNT` (10⁹) for counts and :data:`MAX_NUMBER` (10⁹) for any
other number.
"""

from __future__ import annotations

import math
import os
import tempfile
from pathlib import Path
from typing import Any

import click

#: the longest duration any option accepts, in seconds (a year)
MAX_SECONDS = 365.0 * 24 * 3600
#: the largest count any option accepts (runs, points, resamples, windows...)
MAX_COUNT = 10**9
#: the largest number a float option without a range of its own accepts (see :func:`harden`)
MAX_NUMBER = 1e9
#: the largest seed: numpy and ``random`` take any non-negative integer, 64 bits are plenty
MAX_SEED = 2**64 - 1


#: how infinity is written where an option accepts it (1e400 overflows: it is refused)
_INFINITY = ("inf", "infinity")


class FiniteFloat(click.FloatRange):
    """A float option that must be finite and lie in ``[min, max]`` (bounds optional, either
    end open). ``allow_inf`` accepts ``inf`` (and ``-inf`` when the range allows it) for
    options where infinity means "no limit"; NaN is never accepted."""

    name = "number"

    def __init__(self, min: float | None = None, max: float | None = None,  # noqa: A002
                 min_open: bool = False, max_open: bool = False,
                 allow_inf: bool = False) -> None:
        super().__init__(min=min, max=max, min_open=min_open, max_open=max_open)
        self.allow_inf = allow_inf

    def convert(self, value: Any, param: click.Parameter | None,
                ctx: click.Context | None) -> Any:
        number = click.FLOAT.convert(value, param, ctx)
        if math.isnan(number) or (math.isinf(number) and not self.allow_inf):
            self.fail(f"{value!r} is not a finite number", param, ctx)
        if math.isinf(number) and str(value).strip().lower().lstrip("+-") not in _INFINITY:
            self.fail(f"{value!r} is too large for a number (write 'inf' for no limit)", param,
                      ctx)
        low, high = self.min, self.max
        if (low is not None and (number < low or (self.min_open and number == low))) or \
                (high is not None and (number > high or (self.max_open and number == high))):
            self.fail(f"must be {self.describe()}, got {value}", param, ctx)
        return number

    def describe(self) -> str:
        """The range in words: "positive and at most 31536000", "more than 0 and less than 1"."""
        pieces = []
        if self.min is not None:
            if self.min == 0:
                pieces.append("positive" if self.min_open else "zero or more")
            else:
                pieces.append(f"{'more than' if self.min_open else 'at least'} {self.min:.10g}")
        if self.max is not None:
            pieces.append(f"{'less than' if self.max_open else 'at most'} {self.max:.10g}")
        return " and ".join(pieces) or "a number"

    def to_info_dict(self) -> dict[str, Any]:
        info = super().to_info_dict()
        info["allow_inf"] = self.allow_inf
        return info


def seconds(min_open: bool = True, allow_zero: bool = False) -> FiniteFloat:
    """A duration in seconds: positive (or non-negative with ``allow_zero``), at most
    :data:`MAX_SECONDS`."""
    return FiniteFloat(min=0.0, max=MAX_SECONDS, min_open=min_open and not allow_zero)


def count(min: int = 0, max: int = MAX_COUNT) -> click.IntRange:  # noqa: A002
    """A count of things (runs, points, resamples...) from ``min`` to ``max``."""
    return click.IntRange(min=min, max=max)


#: seconds, more than zero (timeouts, time limits, budgets)
POSITIVE_SECONDS = seconds()
#: seconds, zero allowed (intervals where 0 means "skip", thresholds)
NON_NEGATIVE_SECONDS = seconds(allow_zero=True)
#: a finite number above zero (a coefficient of variation, a relative half-width)
POSITIVE = FiniteFloat(min=0.0, min_open=True)
#: a finite number, zero or more
NON_NEGATIVE = FiniteFloat(min=0.0)
#: a confidence level: strictly between 0 and 1
class Fraction(FiniteFloat):
    """A fraction written either way: ``0.95`` or ``95%`` (one syntax for every confidence
    option of every command)."""

    name = "fraction"

    def convert(self, value: Any, param: click.Parameter | None,
                ctx: click.Context | None) -> Any:
        if isinstance(value, str) and value.strip().endswith("%"):
            number = click.FLOAT.convert(value.strip()[:-1], param, ctx) / 100.0
            return super().convert(number, param, ctx)
        return super().convert(value, param, ctx)

    def describe(self) -> str:
        if (self.min, self.max) == (0.0, 1.0):
            return "between 0 and 1, like 0.95 or 95%"
        return super().describe()


#: a probability strictly between 0 and 1 (a confidence level): ``0.95`` or ``95%``
PROBABILITY = Fraction(min=0.0, max=1.0, min_open=True, max_open=True)
#: a random seed: a non-negative 64-bit integer
SEED = click.IntRange(min=0, max=MAX_SEED)


# ---------------------------------------------------------------------------- the safety net
def _hardened_type(param: click.Parameter) -> click.ParamType | None:
    """The validated type ``param`` should have, or None when its type is fine as it is."""
    kind = param.type
    if isinstance(kind, FiniteFloat):
        return None
    if isinstance(kind, click.types.FloatParamType):
        ranged = isinstance(kind, click.FloatRange)
        high = kind.max if ranged else None
        return FiniteFloat(kind.min if ranged else None, MAX_NUMBER if high is None else high,
                           kind.min_open if ranged else False,
                           kind.max_open if ranged and high is not None else False)
    if isinstance(kind, click.types.IntParamType):
        ranged = isinstance(kind, click.IntRange)
        low = kind.min if ranged else None
        high = kind.max if ranged else None
        min_open = kind.min_open if ranged else False
        if param.name == "seed":
            if low is not None and low >= 0 and high is not None:
                return None
            return click.IntRange(min=0, max=MAX_SEED if high is None else min(high, MAX_SEED))
        if high is not None:
            return None  # a range the option chose itself
        return click.IntRange(min=low, max=MAX_COUNT, min_open=min_open)
    return None


def harden(command: click.Command) -> click.Command:
    """Give every numeric option of ``command`` (and of its sub-commands) a validated type:
    floats finite within their range, integers bounded, seeds non-negative. Idempotent;
    returns ``command``."""
    for param in command.params:
        if getattr(param, "is_flag", False) or getattr(param, "count", False):
            continue
        new_type = _hardened_type(param)
        if new_type is not None:
            param.type = new_type
    if isinstance(command, click.Group):
        for sub in command.commands.values():
            harden(sub)
    return command


def unvalidated_options(command: click.Command, path: str = "") -> list[str]:
    """``command sub --option`` for every numeric option :func:`harden` would still change
    (the test of "every numeric option is validated")."""
    where = f"{path} {command.name}".strip()
    found = [f"{where} {param.opts[0] if param.opts else param.name}"
             for param in command.params
             if not (getattr(param, "is_flag", False) or getattr(param, "count", False))
             and _hardened_type(param) is not None]
    if isinstance(command, click.Group):
        for sub in command.commands.values():
            found += unvalidated_options(sub, where)
    return found


def not_empty(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
    """Click callback: a text option, when given, must not be empty or blank (``--preset ''``
    meant something; it must not silently mean "no preset")."""
    if value is not None and not str(value).strip():
        raise click.BadParameter("must not be empty")
    return value


# ---------------------------------------------------------------------------- folders
def writable_folder(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
    """Click callback: an output folder is created if missing and must accept new files,
    checked before anything is measured (a file is made there and removed)."""
    if value is None:
        return value
    folder = Path(value)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise click.BadParameter(f"{value}: exists and is not a folder") from None
    except OSError as exc:
        raise click.BadParameter(f"{value}: cannot create the folder "
                                 f"({exc.strerror or exc})") from None
    try:
        fd, probe = tempfile.mkstemp(prefix=".steadybench-probe.", dir=folder)
    except OSError as exc:
        raise click.BadParameter(f"{value}: cannot create files in this folder "
                                 f"({_why_not_writable(folder, exc)})") from None
    os.close(fd)
    os.unlink(probe)
    return value


def _why_not_writable(folder: Path, exc: OSError) -> str:
    """The reason a new file cannot be made in an existing ``folder``, in words: ENOENT there
    means a virtual file system (/proc, /sys) that makes no new files, not a missing path."""
    import errno

    if exc.errno == errno.ENOENT and folder.is_dir():
        return "it is on a virtual file system that holds no new files, such as /proc or /sys"
    return exc.strerror or str(exc)
