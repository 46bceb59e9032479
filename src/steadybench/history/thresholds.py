"""Thresholds kept with the project: how large a change must be to count as a regression.

They live in ``steadybench.toml`` at the top of the git repository (the working directory
outside git), so they are versioned with the code they judge::

    [thresholds]
    default = "5%"                      # every benchmark not named below
    "tests/bench_io.py::*" = "10%"      # a group: a shell-style pattern over the labels
    "test_parse" = "2%"                 # one benchmark, by its label
    "insn_count" = 1000                 # counts: an absolute difference in the benchmark's unit

A value is a percentage (``"5%"``: the magnitude median(after)/median(before) − 1 of a change
point must reach it either way) or a number of counts (a bare number, or ``"1000 counts"``: the
difference of the two medians must reach it, in the benchmark's own unit, e.g. instructions).
The most specific rule wins: an exact label, then the longest matching pattern, then
``default``. Without a file, or without ``default``, the default is :data:`DEFAULT_THRESHOLD`:
2 %, about half the band between runs of identical code on a shared machine
(docs/comparison.md), so that a machine's drift is not reported as a regression.

``history regressions`` (unless ``--min-change`` is given), ``history publish`` and
``bisect`` use them.
"""

from __future__ import annotations

import fnmatch
import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import ConfigurationError

#: the project file's name
FILE_NAME = "steadybench.toml"
PERCENT = "percent"
COUNTS = "counts"


@dataclass(frozen=True)
class Threshold:
    """One rule: ``kind`` is :data:`PERCENT` (``value`` a fraction, 0.05 for 5 %) or
    :data:`COUNTS` (``value`` an absolute difference in the benchmark's unit)."""

    kind: str
    value: float
    #: where it comes from: the label or pattern of the file, or "default"
    source: str = "default"

    def passes(self, before: float, after: float) -> bool:
        """True when a change from ``before`` to ``after`` (medians) reaches the threshold."""
        if self.kind == COUNTS:
            return abs(after - before) >= self.value
        if before <= 0:
            return True
        return abs(after / before - 1.0) >= self.value

    def text(self) -> str:
        if self.kind == COUNTS:
            return f"{self.value:g} counts"
        return f"{self.value * 100:.4g}%"


#: the threshold when the project sets none
DEFAULT_THRESHOLD = Threshold(PERCENT, 0.02, "default")


def parse_threshold(value: Any, source: str) -> Threshold:
    """``"5%"`` → 5 % relative; ``1000``, ``1000.0`` or ``"1000 counts"`` → counts. One clear
    line for anything else."""
    where = f"{FILE_NAME} [thresholds] {source!r}"
    if isinstance(value, bool):
        raise ConfigurationError(f"{where}: expected a percentage (\"5%\") or counts, got "
                                 f"{value!r}")
    if isinstance(value, int | float):
        number, kind = float(value), COUNTS
    elif isinstance(value, str):
        text = value.strip().lower()
        if text.endswith("%"):
            kind, text = PERCENT, text[:-1].strip()
        elif text.endswith("counts"):
            kind, text = COUNTS, text[:-len("counts")].strip()
        else:
            raise ConfigurationError(f"{where}: expected a percentage (\"5%\") or counts "
                                     f"(\"1000 counts\"), got {value!r}")
        try:
            number = float(text)
        except ValueError:
            raise ConfigurationError(f"{where}: not a number: {value!r}") from None
        if kind == PERCENT:
            number /= 100.0
    else:
        raise ConfigurationError(f"{where}: expected a percentage (\"5%\") or counts, got "
                                 f"{type(value).__name__}")
    if not (number >= 0 and number < float("inf")):
        raise ConfigurationError(f"{where}: must be a finite number ≥ 0, got {value!r}")
    return Threshold(kind, number, source)


@dataclass(frozen=True)
class Thresholds:
    """The project's rules; :meth:`for_label` picks the one that applies."""

    default: Threshold = DEFAULT_THRESHOLD
    rules: dict[str, Threshold] = field(default_factory=dict)
    #: the file they were read from (None: no file)
    path: str | None = None

    def for_label(self, label: str) -> Threshold:
        if label in self.rules:
            return self.rules[label]
        matching = [p for p in self.rules if fnmatch.fnmatchcase(label, p)]
        if matching:
            return self.rules[max(matching, key=len)]
        return self.default

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "default": self.default.text(),
                "rules": {k: v.text() for k, v in self.rules.items()}}


def project_file(cwd: str | os.PathLike[str] | None = None) -> Path:
    """``steadybench.toml`` at the top of the git repository containing ``cwd``."""
    from .git import git_info

    base = Path(cwd or os.getcwd())
    return Path(git_info(base).toplevel or base) / FILE_NAME


def load_thresholds(path: str | os.PathLike[str] | None = None,
                    cwd: str | os.PathLike[str] | None = None) -> Thresholds:
    """The rules of ``path`` (default: the project's ``steadybench.toml``); no file, or no
    ``[thresholds]`` table, gives the default for every benchmark."""
    file = Path(path) if path is not None else project_file(cwd)
    if not file.is_file():
        if path is not None:
            raise ConfigurationError(f"{file}: no such thresholds file")
        return Thresholds()
    try:
        data = tomllib.loads(file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigurationError(f"{file}: cannot be read as TOML: {exc}") from None
    table = data.get("thresholds", {})
    if not isinstance(table, dict):
        raise ConfigurationError(f"{file}: [thresholds] must be a table")
    default = DEFAULT_THRESHOLD
    rules = {}
    for key, value in table.items():
        rule = parse_threshold(value, key)
        if key == "default":
            default = rule
        else:
            rules[key] = rule
    return Thresholds(default, rules, str(file))


def repository_url(cwd: str | os.PathLike[str] | None = None) -> str | None:
    """``[dashboard] repository`` of the project file: where the dashboard links commits."""
    file = project_file(cwd)
    if not file.is_file():
        return None
    try:
        data = tomllib.loads(file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigurationError(f"{file}: cannot be read as TOML: {exc}") from None
    value = (data.get("dashboard") or {}).get("repository")
    return str(value) if value else None
