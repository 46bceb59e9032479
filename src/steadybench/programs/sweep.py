"""Size sweeps: the ITERS protocol at every size of a logarithmic grid, and the growth class.

Source ``004``'s ``sweep_seq`` runs the Criterion sweep at array sizes spaced logarithmically
and tabulates, per size, the mean (the slope), the geometric mean and their spreads. Here the
grid is ``--sizes 2^3..2^20`` with ``--per-octave D`` points per doubling (or an explicit list),
the size goes where ``{size}`` stands in the command, and the table gets, per size: ``mean``
(slope of the ITERS fit, seconds per iteration), ``stddev`` (spread of the per-iteration time,
see :func:`~steadybench.programs.iters.per_iteration_stddev`), ``geomean`` and ``geostdev`` (the
log-log fit's factor and geometric standard deviation) and ``r2`` of the linear fit.

The growth of time with size is then fitted against O(1), O(log n), O(n), O(n log n), O(n²) and
O(n³): for each class f, the coefficient c of t ≈ c·f(n) minimises the sum of squared
*relative* errors Σ((t − c·f)/t)² (so a sweep over decades is not decided by its largest size
alone), c = Σ(f/t) / Σ(f²/t²); the class with the smallest root-mean-square relative error
wins. This follows Google Benchmark's complexity fit (least squares of t on c·f(n) per class,
smallest normalised RMS), with relative weighting instead of absolute.
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..errors import ConfigurationError
from ..fileio import atomic_write_text
from ..model.results import CaseResult
from ..runner.loop import ProgressCallback
from .commands import Command
from .iters import ItersOptions, finish_iters_case, sweep_iters
from .process import CommandRunner

#: class name → f(n)
COMPLEXITY_CLASSES: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "O(1)": lambda n: np.ones_like(n),
    "O(log n)": lambda n: np.log2(n),
    "O(n)": lambda n: n,
    "O(n log n)": lambda n: n * np.log2(n),
    "O(n^2)": lambda n: n**2,
    "O(n^3)": lambda n: n**3,
}

_MAX_SIZES = 10_000
#: the largest size: integers up to 2^53 are exact as floats, and no workload is larger
_MAX_SIZE = 2**53
_POWER = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*\^\s*(-?\d+(?:\.\d+)?)\s*$")


def _size_value(text: str) -> float:
    m = _POWER.match(text)
    try:
        value = float(m.group(1)) ** float(m.group(2)) if m else float(text)
    except OverflowError:
        raise ConfigurationError(f"--sizes: {text.strip()!r} is too large") from None
    except ValueError:
        raise ConfigurationError(f"--sizes: {text.strip()!r} is not a number or B^E") from None
    if not math.isfinite(value):
        raise ConfigurationError(f"--sizes: {text.strip()!r} is not a finite number")
    return value


def parse_sizes(spec: str, per_octave: int = 1) -> list[int]:
    """Sizes from ``LO..HI`` (a logarithmic grid, ``per_octave`` sizes per doubling, both ends
    included) or a comma-separated list; ``B^E`` means B to the power E.

    Every size must be a positive integer. Sizes that round to the same integer appear once.
    """
    if per_octave < 1:
        raise ConfigurationError(f"--per-octave must be at least 1, got {per_octave}")
    spec = spec.strip()
    if not spec:
        raise ConfigurationError("--sizes is empty")
    if ".." in spec:
        lo_text, _, hi_text = spec.partition("..")
        lo, hi = _size_value(lo_text), _size_value(hi_text)
        if lo <= 0 or hi <= 0:
            raise ConfigurationError(f"--sizes {spec}: sizes must be positive")
        if hi < lo:
            raise ConfigurationError(f"--sizes {spec}: the upper end is below the lower end")
        steps = int(math.floor(math.log2(hi / lo) * per_octave + 1e-9))
        if steps >= 100 * _MAX_SIZES:  # before building the grid (duplicates merge below)
            raise ConfigurationError(f"--sizes {spec}: {steps + 1} sizes is too many")
        values = [lo * 2 ** (k / per_octave) for k in range(steps + 1)]
        if values[-1] < hi * (1 - 1e-9):
            values.append(hi)
    else:
        items = spec.split(",")
        if any(not item.strip() for item in items):
            raise ConfigurationError(f"--sizes {spec}: empty size in the list")
        values = [_size_value(v) for v in items]
    sizes: list[int] = []
    for v in values:
        if not math.isfinite(v) or v <= 0:
            raise ConfigurationError(f"--sizes {spec}: sizes must be positive, got {v:g}")
        if v > _MAX_SIZE:
            raise ConfigurationError(f"--sizes {spec}: {v:g} is too large (at most 2^53)")
        n = int(round(v))
        if n < 1:
            raise ConfigurationError(f"--sizes {spec}: sizes must be positive integers, got {v:g}")
        if n not in sizes:
            sizes.append(n)
    if len(sizes) > _MAX_SIZES:
        raise ConfigurationError(f"--sizes {spec}: {len(sizes)} sizes is too many")
    return sizes


def fit_complexity(sizes: Sequence[float], times: Sequence[float]) -> dict[str, Any]:
    """Best growth class of ``times`` over ``sizes`` (see the module docs).

    Returns ``{"best", "coefficient", "candidates": {class: rms relative error},
    "coefficients": {class: c}, "method"}``. Needs at least 2 sizes with positive times;
    classes whose f(n) is 0 at every size (log n with only n = 1) are left out.
    """
    n = np.asarray(sizes, dtype=float)
    t = np.asarray(times, dtype=float)
    good = np.isfinite(t) & (t > 0) & (n > 0)
    n, t = n[good], t[good]
    if n.size < 2:
        raise ConfigurationError("complexity fit: needs at least two sizes with a positive time")
    candidates: dict[str, float] = {}
    coefficients: dict[str, float] = {}
    for name, f in COMPLEXITY_CLASSES.items():
        fn = f(n)
        if not np.any(fn > 0):
            continue
        w = fn / t
        scale = float(np.max(np.abs(w)))  # w / scale: no overflow in w² for tiny times
        if not np.isfinite(scale) or scale == 0:
            continue
        u = w / scale
        c = float(np.sum(u) / np.sum(u * u)) / scale
        rel = (t - c * fn) / t
        candidates[name] = float(np.sqrt(np.mean(rel * rel)))
        coefficients[name] = c
    best = min(candidates, key=candidates.__getitem__)
    return {"best": best, "coefficient": coefficients[best], "candidates": candidates,
            "coefficients": coefficients,
            "method": "least squares of relative error per class, smallest RMS wins"}


def run_size_sweep(command: Command, sizes: Sequence[int], runner: CommandRunner,
                   options: ItersOptions, extra_values: dict[str, Any] | None = None,
                   on_case: Callable[[CaseResult], None] | None = None,
                   cases: list[CaseResult] | None = None,
                   progress: ProgressCallback | None = None,
                   before_run: Callable[[], None] | None = None,
                   after_run: Callable[[], None] | None = None) -> list[CaseResult]:
    """The ITERS sweep at every size (``{size}`` in the command); finished cases in order.

    Each size is one run loop (:func:`~steadybench.programs.iters.sweep_iters`): the stop
    condition, warm-up and hard limits of ``options`` apply to every size, ``before_run`` and
    ``after_run`` (machine countermeasures) run around every run and ``progress`` gets
    (case, state). Cases are appended to ``cases`` (when given) as they finish, so a caller
    keeps them after Ctrl-C. A size whose sweep fails stops the size sweep (its case carries
    the error).
    """
    if "size" not in command.placeholders():
        raise ConfigurationError(f"command {command.text!r} has no {{size}} placeholder "
                                 "(write {size} where the size goes)")
    out = cases if cases is not None else []
    for size in sizes:
        values = {**(extra_values or {}), "size": size}
        case = CaseResult(benchmark=command.name, implementation=command.name,
                          params=dict(values), method="iters")
        try:
            sweep_iters(command, runner, options, values, case, progress=progress,
                        before_run=before_run, after_run=after_run)
        except KeyboardInterrupt:
            finish_iters_case(case, options)
            out.append(case)
            raise
        finish_iters_case(case, options)
        out.append(case)
        if on_case is not None:
            on_case(case)
        if case.errors:
            break
    return out


def sweep_table(cases: Sequence[CaseResult]) -> dict[str, Any]:
    """The table of ``results.context["sweep"]`` with the complexity fit of the means."""
    rows = [c for c in cases if c.extra.get("fit")]
    table: dict[str, Any] = {
        "sizes": [c.params.get("size") for c in rows],
        "mean": [c.extra["fit"]["slope"] for c in rows],
        "stddev": [c.extra["fit"].get("stddev") for c in rows],
        "geomean": [(c.extra["fit"]["loglog"] or {}).get("factor") for c in rows],
        "geostdev": [(c.extra["fit"]["loglog"] or {}).get("geo_stdev") for c in rows],
        "r2": [c.extra["fit"]["r2"] for c in rows],
        "unit": "s",
        "complexity": None,
    }
    try:
        table["complexity"] = fit_complexity(table["sizes"], table["mean"])
    except ConfigurationError as exc:
        table["complexity_error"] = str(exc)
    return table


TABLE_COLUMNS = ("size", "mean", "stddev", "geomean", "geostdev", "r2")


def table_text(table: dict[str, Any], fmt: str) -> str:
    """The sweep table as ``tsv``, ``csv`` or ``json`` text (seconds; empty cell = undefined)."""
    if fmt == "json":
        return json.dumps(table, indent=1, allow_nan=False, default=float) + "\n"
    if fmt not in ("tsv", "csv"):
        raise ConfigurationError(f"unknown table format {fmt!r} (tsv, csv, json)")
    buf = io.StringIO()
    writer = csv.writer(buf, delimiter="\t" if fmt == "tsv" else ",", lineterminator="\n")
    writer.writerow(TABLE_COLUMNS)
    keys = ("sizes", "mean", "stddev", "geomean", "geostdev", "r2")
    for i in range(len(table["sizes"])):
        writer.writerow(["" if table[k][i] is None else (f"{table[k][i]:.9g}"
                         if isinstance(table[k][i], float) else table[k][i]) for k in keys])
    return buf.getvalue()


def write_table(table: dict[str, Any], path: str) -> str:
    """Write the table; the format comes from the extension (.tsv, .csv, .json)."""
    ext = path.rsplit(".", 1)[-1].lower() if "." in path else ""
    fmt = ext if ext in ("tsv", "csv", "json") else "tsv"
    atomic_write_text(path, table_text(table, fmt))
    return fmt
