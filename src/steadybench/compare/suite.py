"""Suite-level analysis (``003`` §3–4): overall gain, proportion of accelerated benchmarks,
number of benchmarks needed, and the reference tool's suite CSV format.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..errors import ConfigurationError
from ..fileio import content_lines, read_user_text
from ..stats.proportion import proportion_interval, trials_needed
from .choices import WEIGHTS
from .protocol import FASTER
from .readers import SampleFormatError


def overall_gain(base: Sequence[float], new: Sequence[float],
                 weights: Sequence[float] | None = None) -> float:
    """G = 1 − Σ w·t(NEW) / Σ w·t(BASE) (``003`` §3; weights are normalised, which cancels).

    ``003`` Example 3.1: base (3, 3600), new (1, 3428): G = 4.83% (4.829%, which the paper
    truncates to 4.82%) with equal weights and 4.78% (printed 4.77%) with weights proportional to
    the base times.
    """
    if len(base) != len(new) or not base:
        raise ValueError("overall gain needs the same, non-zero number of BASE and NEW times")
    w = [1.0] * len(base) if weights is None else [float(x) for x in weights]
    den = sum(wi * b for wi, b in zip(w, base))
    if den <= 0:
        raise ValueError("overall gain undefined: weighted BASE time is zero")
    return 1.0 - sum(wi * n for wi, n in zip(w, new)) / den


def suite_weights(base_times: Sequence[float], mode: str,
                  coefs: Sequence[float | None] | None = None) -> list[float]:
    """Normalised weights: ``equal``, ``fraction`` (BASE time / total BASE time, ``003`` §3) or
    ``custom`` (the Coef column; missing coefficients count as 1)."""
    n = len(base_times)
    if mode == "equal":
        raw = [1.0] * n
    elif mode == "fraction":
        raw = [float(t) for t in base_times]
    elif mode == "custom":
        raw = [1.0 if c is None else float(c) for c in (coefs or [None] * n)]
        if any(c < 0 for c in raw):
            raise ConfigurationError("custom weights (Coef) must not be negative")
    else:
        raise ConfigurationError(f"unknown weights {mode!r} (choose from {', '.join(WEIGHTS)})")
    total = sum(raw)
    if total <= 0:
        raise ConfigurationError("the weights sum to zero")
    return [r / total for r in raw]


def suite_summary(rows: list[dict[str, Any]], weights: str = "equal", precision: float = 0.05,
                  show_min: bool = False) -> dict[str, Any]:
    """Overall gain (all benchmarks and accelerated ones only), proportion CI and n needed."""
    columns = SuiteColumns(show_min)
    for r in rows:
        columns.add(r)
    return columns.summary(weights, precision)


class SuiteColumns:
    """What :func:`suite_summary` reads of each comparison row, kept as columns: the rows
    themselves need not all be alive at once (10^6 benchmarks, issue 27 item 13)."""

    def __init__(self, show_min: bool = False) -> None:
        self.stats = ["median", "mean"] + (["min"] if show_min else [])
        self.confidence: list[Any] = []
        self.coef: list[Any] = []
        self.verdict: list[str] = []
        self.base: dict[str, list[Any]] = {s: [] for s in self.stats}
        self.new: dict[str, list[Any]] = {s: [] for s in self.stats}

    def add(self, r: dict[str, Any]) -> None:
        """Keep one (finished) row's figures."""
        self.confidence.append(r["confidence"])
        self.coef.append(r.get("coef"))
        self.verdict.append(FASTER if r["verdict"] == FASTER else
                            "slower" if r["verdict"] == "slower" else "")
        for stat in self.stats:
            self.base[stat].append(r["base"][stat])
            self.new[stat].append(r["new"][stat])

    def summary(self, weights: str = "equal", precision: float = 0.05) -> dict[str, Any]:
        levels = [c for c in self.confidence if c is not None]
        confidence = min(levels) if levels else None
        coefs = self.coef
        gains: dict[str, Any] = {}
        n = len(self.verdict)
        for stat in self.stats:
            entry: dict[str, Any] = {}
            for subset_name, subset in (("all", list(range(n))),
                                        ("accelerated", [i for i, v in enumerate(self.verdict)
                                                         if v == FASTER])):
                if not subset:
                    entry[subset_name] = None
                    continue
                base = [self.base[stat][i] for i in subset]
                new = [self.new[stat][i] for i in subset]
                w = suite_weights(base, weights, [coefs[i] for i in subset])
                g = overall_gain(base, new, w)
                entry[subset_name] = {"gain": g, "speedup": 1.0 / (1.0 - g) if g < 1 else None,
                                      "benchmarks": len(subset)}
            gains[stat] = entry
        x = sum(1 for v in self.verdict if v == FASTER)
        out: dict[str, Any] = {
            "benchmarks": n, "accelerated": x,
            "slower": sum(1 for v in self.verdict if v == "slower"),
            "weights": weights, "gain": gains, "confidence": confidence,
            "confidence_note": "the smallest of the individual confidence levels (003 §3)",
            "precision": precision,
        }
        if confidence is not None:
            ci = proportion_interval(x, n, confidence)
            out["proportion"] = ci.to_dict()
            c = x / n
            out["benchmarks_needed"] = trials_needed(c, precision, confidence)
            out["benchmarks_needed_note"] = (
                f"⌈z²·C(1−C)/r²⌉ with C = {c:.3f}, r = {precision:g}"
                if 0 < c < 1 else f"C = {c:g} gives 0; the worst case C = 0.5 was used")
        else:
            out["proportion"] = None
            out["benchmarks_needed"] = None
        return out


def _level(text: str, where: str) -> float | None:
    text = text.strip().rstrip("%")
    if not text:
        return None
    try:
        value = float(text)
    except ValueError:
        raise SampleFormatError(f"{where}: ConfLevel {text!r} is not a number") from None
    if value >= 1:
        value /= 100.0
    if not 0 < value < 1:
        raise SampleFormatError(f"{where}: ConfLevel {text!r} must be between 0 and 1 "
                                "(or 0% and 100%)")
    return value


def read_suite(path: str | Path) -> list[dict[str, Any]]:
    """The reference tool's suite file: columns ``Name, Sample1, Sample2, ConfLevel, Coef``.

    Sample paths are relative to the suite file; ConfLevel (0.95 or 95) and Coef may be blank.
    Returns one dict per row: name, base, new (paths), confidence, coef, line.
    """
    p = Path(path)
    lines = content_lines(read_user_text(p, SampleFormatError))
    if not lines:
        raise SampleFormatError(f"{p}: empty suite file")
    try:
        dialect = csv.Sniffer().sniff(lines[0][1], delimiters=",;\t")
    except csv.Error:
        dialect = csv.excel
    rows = list(csv.reader([line for _, line in lines], dialect))
    header = [h.strip() for h in rows[0]]
    missing = [c for c in ("Name", "Sample1", "Sample2") if c not in header]
    if missing:
        raise SampleFormatError(f"{p}:{lines[0][0]}: missing column(s) {', '.join(missing)} "
                                "(expected Name, Sample1, Sample2, ConfLevel, Coef)")
    col = {name: header.index(name) for name in header}
    out = []
    for (number, _), row in zip(lines[1:], rows[1:]):
        where = f"{p}:{number}"

        def cell(name: str, row: list[str] = row) -> str:
            i = col.get(name)
            return row[i].strip() if i is not None and i < len(row) else ""

        entry: dict[str, Any] = {"name": cell("Name"), "line": number}
        for key, name in (("base", "Sample1"), ("new", "Sample2")):
            value = cell(name)
            if not value:
                raise SampleFormatError(f"{where}: empty {name}")
            target = Path(value) if Path(value).is_absolute() else p.parent / value
            if not target.is_file():
                why = "is a directory" if target.is_dir() else "not found"
                raise SampleFormatError(f"{where}: {name} file {value!r} {why}")
            entry[key] = str(target)
        if not entry["name"]:
            raise SampleFormatError(f"{where}: empty Name")
        entry["confidence"] = _level(cell("ConfLevel"), where)
        coef = cell("Coef")
        try:
            entry["coef"] = float(coef) if coef else None
        except ValueError:
            raise SampleFormatError(f"{where}: Coef {coef!r} is not a number") from None
        if entry["coef"] is not None and not (math.isfinite(entry["coef"]) and entry["coef"] >= 0):
            raise SampleFormatError(f"{where}: Coef must be a finite non-negative number")
        out.append(entry)
    if not out:
        raise SampleFormatError(f"{p}: suite file has a header but no benchmarks")
    return out
