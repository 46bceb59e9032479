"""The comparison-option vocabulary: ``--confidence``, ``--threshold``, ``--equivalence``,
``--seed``, ``--json`` and ``-q/--quiet`` declared once, with one help text each.

Every command that states a verdict (``compare``, ``ab``, ``bisect``, ``history compare``,
``history regressions``, ``plan``) takes these options from here, so ``--confidence`` reads
``0.95`` and ``95%`` everywhere, ``--threshold`` ``0.02`` and ``2%`` everywhere, and a seed is
a non-negative integer everywhere. A command adds one clause of its own to the shared help
(what its ``--json`` file holds, what ``-q`` still prints), never a second definition.

:class:`VerdictOptions` is the typed value the options make: a command builds it with
:meth:`VerdictOptions.from_params` and passes attributes on, instead of reading the raw strings
out of its keyword arguments.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import click

from ..fileio import writable_path
from .validate import SEED, Fraction

if TYPE_CHECKING:
    from ..history.thresholds import Threshold

Decorator = Callable[[Callable[..., Any]], Callable[..., Any]]

#: the one help text of each shared option (a command may add a clause of its own)
CONFIDENCE_HELP = "Confidence level of {of} (0.95 or 95%)."
THRESHOLD_HELP = ("Practical threshold X (0.02 or 2%): faster/slower needs the interval of the "
                  "ratio outside 1 ± X. Default: 0.")
EQUIVALENCE_HELP = ("Conclude 'unchanged within ±X' (X = --threshold) when the interval of the "
                    "ratio lies inside the band.")
SEED_HELP = "Seed of the random generator"
JSON_HELP = "Write {what} as JSON to this file ('-': standard output)."
QUIET_HELP = "Quiet: {what}."


class ConfidenceLevel(Fraction):
    """A confidence level strictly between 0 and 1 (``0.95`` or ``95%``), or, where the command
    allows it, ``auto`` (converted to None: the command searches the level)."""

    name = "confidence"

    def __init__(self, allow_auto: bool = False) -> None:
        super().__init__(min=0.0, max=1.0, min_open=True, max_open=True)
        self.allow_auto = allow_auto

    def convert(self, value: Any, param: click.Parameter | None,
                ctx: click.Context | None) -> Any:
        if self.allow_auto and isinstance(value, str) and value.strip().lower() == "auto":
            return None
        level = super().convert(value, param, ctx)
        if isinstance(level, float) and 1.0 - level == 1.0:  # 1e-300: its alpha rounds to 1
            self.fail(f"{value!r} is too close to 0 to be told apart from it in the "
                      "arithmetic (a level such as 0.95 or 95%)", param, ctx)
        return level

    def describe(self) -> str:
        return super().describe() + (", or 'auto'" if self.allow_auto else "")


class RelativeThreshold(Fraction):
    """A practical threshold: a fraction from 0 up to (not including) 1, ``0.02`` or ``2%``.

    With ``counts`` (bisect on instructions or cycles) it also takes a number of counts per
    call, ``"5000 counts"`` as in steadybench.toml, which converts to a
    :class:`~steadybench.history.thresholds.Threshold`."""

    name = "threshold"

    def __init__(self, counts: bool = False) -> None:
        super().__init__(min=0.0, max=1.0, min_open=False, max_open=True)
        self.counts = counts

    def convert(self, value: Any, param: click.Parameter | None,
                ctx: click.Context | None) -> Any:
        if self.counts and isinstance(value, str) and value.strip().endswith("counts"):
            from ..errors import ConfigurationError
            from ..history.thresholds import parse_threshold

            try:
                return parse_threshold(value.strip(), "--threshold")
            except ConfigurationError as e:
                self.fail(str(e), param, ctx)
        if not isinstance(value, (str, float, int)):  # already converted (a Threshold)
            return value
        return super().convert(value, param, ctx)

    def describe(self) -> str:
        return ("from 0 up to 1, like 0.02 or 2%"
                + (", or counts per call like '5000 counts'" if self.counts else ""))


def _join(base: str, extra: str) -> str:
    return f"{base} {extra}".strip() if extra else base


def confidence_option(extra: str = "", *, of: str = "the verdict", allow_auto: bool = False,
                      default: float = 0.95) -> Decorator:
    """``--confidence``: the level of ``of`` (the verdict, the intervals...), ``0.95`` or
    ``95%`` (``auto`` where the command searches the level)."""
    return click.option("--confidence", type=ConfidenceLevel(allow_auto), default=default,
                        show_default=True, help=_join(CONFIDENCE_HELP.format(of=of), extra))


def threshold_option(help_text: str | None = None, *, counts: bool = False) -> Decorator:
    """``--threshold``: the practical threshold X, as a fraction (None when not given)."""
    return click.option("--threshold", type=RelativeThreshold(counts), default=None,
                        help=help_text or THRESHOLD_HELP)


def equivalence_option(extra: str = "") -> Decorator:
    """``--equivalence``: conclude "unchanged within ±X" when the interval is inside the band."""
    return click.option("--equivalence", is_flag=True, help=_join(EQUIVALENCE_HELP, extra))


def seed_option(of: str, *, default: int | None = None) -> Decorator:
    """``--seed``: a non-negative integer seeding the random generator of ``of``."""
    return click.option("--seed", type=SEED, default=default,
                        show_default=default is not None, help=f"{SEED_HELP} of {of}.")


def json_option(what: str) -> Decorator:
    """``--json FILE``: ``what`` written as JSON (``-``: standard output), checked writable
    before the command starts."""
    return click.option("--json", "json_path", type=click.Path(dir_okay=False),
                        callback=writable_path, help=JSON_HELP.format(what=what))


def quiet_option(what: str = "no console output but errors") -> Decorator:
    """``-q/--quiet``: ``what`` the command still prints when quiet."""
    return click.option("--quiet", "-q", is_flag=True, help=QUIET_HELP.format(what=what))


@dataclass(frozen=True)
class VerdictOptions:
    """The options of a verdict, converted: ``confidence`` (None: ``auto``), ``threshold`` as
    a fraction (0 when not given), ``equivalence`` and ``seed`` (None: a fresh one)."""

    confidence: float | None = 0.95
    threshold: float = 0.0
    equivalence: bool = False
    seed: int | None = None
    #: a threshold in counts per call (bisect --threshold '5000 counts'), else None
    count_threshold: Threshold | None = None
    #: True when --threshold was given (else the project's thresholds apply, where they do)
    threshold_given: bool = False

    @classmethod
    def from_params(cls, params: dict[str, Any]) -> VerdictOptions:
        """From a command's keyword arguments (the options above; those it lacks keep their
        defaults)."""
        raw = params.get("threshold")
        fraction = raw if isinstance(raw, float) else None
        return cls(confidence=params.get("confidence", 0.95),
                   threshold=0.0 if fraction is None else fraction,
                   equivalence=bool(params.get("equivalence", False)),
                   seed=params.get("seed"),
                   count_threshold=None if raw is None or fraction is not None else raw,
                   threshold_given=raw is not None)

    @property
    def level(self) -> float:
        """The confidence level, for commands that never take ``auto``."""
        if self.confidence is None:
            raise ValueError("--confidence auto has no fixed level")
        return self.confidence
