"""The numbers behind the figures: pure numpy, no matplotlib, unit-tested on their own.

Every figure of :mod:`steadybench.output.figures` draws what a function here prepares:

* :func:`robust_limits` — the axis range that the bulk of the data fills. The range is the
  Tukey *far fences* ``[Q1 − 3·IQR, Q3 + 3·IQR]`` (Tukey, *Exploratory Data Analysis*, 1977,
  §2; the fences beyond which a value is "far out") clipped to the data, then padded by 4 %.
  Values beyond it are not dropped: the figures draw them as marked points at the edge of the
  plot with their count (:func:`split_outside`).
* :func:`density` — a Gaussian kernel density (Silverman's robust bandwidth, 1986, eq. 3.31) on a
  binned grid, with the kernel *reflected* at the data's minimum and maximum (Silverman 1986,
  §2.10, the reflection method), so it stays within the data's support: no negative times.
* :func:`box_stats` — quartiles, whiskers at the 1st and 99th percentiles (Rancid, seed 001,
  Fig. 15), fliers beyond.
* :func:`moving_average`, :func:`moving_median`, :func:`binned` — the run-by-run series
  (Rancid Figs. 3–11).
* :func:`running_quantiles`, :func:`error_evolution` — Rancid Fig. 16.
* :func:`fit_band` — the confidence band of a least-squares line (Montgomery & Runger, §11-5).
* :func:`complexity_function` — f(n) of a growth class, the *same* functions the complexity
  fit used (:data:`steadybench.programs.sweep.COMPLEXITY_CLASSES`: logarithms in base 2), so a
  drawn curve is the fitted curve.
* :func:`sweep_series`, :func:`growth_series` — time against a parameter, from a ``sweep``
  table or from the cases of a ``run`` with a numeric parameter.
* :func:`p_value_text` — a p-value as text, never "0".
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

#: at most this many markers of one kind (warm-up, removed, outlier, box-plot fliers)
MAX_MARKERS = 1500
#: at most this many values of n in an error-evolution curve
MAX_EVOLUTION_POINTS = 200
#: points of a kernel density curve
DENSITY_POINTS = 256
#: the far fences: Q1 − K·IQR and Q3 + K·IQR
FENCE_K = 3.0
#: smallest p-value written as a number; below it the text is "< 1e-16"
P_FLOOR = 1e-16


# ============================================================================ units
def time_scale(values: Iterable[float | None], unit: str = "s") -> tuple[float, str]:
    """(factor, unit) that shows seconds in ns, µs, ms or s, chosen from the median magnitude."""
    if unit != "s":
        return 1.0, unit
    if isinstance(values, np.ndarray):
        arr = values.astype(float, copy=False)
    else:
        arr = np.asarray([v for v in values if v is not None], dtype=float)
    arr = np.abs(arr[np.isfinite(arr)])
    if arr.size == 0:
        return 1.0, "s"
    mag = float(np.median(arr))
    for factor, name in ((1e9, "ns"), (1e6, "µs"), (1e3, "ms")):
        if mag * factor < 1000:
            return factor, name
    return 1.0, "s"


def format_value(value: float | None, unit: str = "s") -> str:
    """A value with a readable unit (seconds become ns/µs/ms/s); '–' when undefined."""
    if value is None or isinstance(value, bool) or not math.isfinite(float(value)):
        return "–"
    from .format import COUNT_UNITS

    if unit in COUNT_UNITS and abs(value) >= 1000:
        return f"{value:,.0f} {unit}"  # counts: every digit, grouped
    factor, name = time_scale([value], unit)
    return f"{value * factor:.4g} {name}".strip()


def p_value_text(p: float | None) -> str:
    """A p-value as text: three significant digits, and ``< 1e-16`` below :data:`P_FLOOR`
    (a computed 0 means "smaller than double precision resolves", never "impossible")."""
    if p is None or isinstance(p, bool) or not math.isfinite(float(p)):
        return "–"
    if p < P_FLOOR:
        return "< 1e-16"
    return f"{p:.3g}"


# ============================================================================ robust axes
@dataclass(frozen=True)
class Limits:
    """An axis range and how many values fall below and above it."""

    low: float
    high: float
    below: int = 0
    above: int = 0

    @property
    def outside(self) -> int:
        return self.below + self.above


def robust_limits(values: np.ndarray, *, k: float = FENCE_K, pad: float = 0.04,
                  positive: bool = False) -> Limits:
    """The range the bulk of ``values`` fills (see the module docs): the far fences clipped to
    the data, padded by ``pad`` of the width; with ``positive`` the low end stays above 0 (a
    log axis). When the IQR is 0 (most values equal) the range is the 1st–99th percentiles,
    and when that is a point too, ±1 % around it.
    """
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    if v.size == 0:
        return Limits(0.0, 1.0)
    vmin, vmax = float(v.min()), float(v.max())
    q1, q3 = (float(x) for x in np.percentile(v, [25, 75]))
    iqr = q3 - q1
    if iqr > 0:
        lo, hi = max(vmin, q1 - k * iqr), min(vmax, q3 + k * iqr)
    else:
        lo, hi = (float(x) for x in np.percentile(v, [1, 99]))
    if hi <= lo:
        centre = lo
        half = abs(centre) * 0.01 or 1.0
        lo, hi = centre - half, centre + half
    below = int(np.count_nonzero(v < lo))
    above = int(np.count_nonzero(v > hi))
    width = hi - lo
    lo_p, hi_p = lo - pad * width, hi + pad * width
    if positive and lo_p <= 0:
        lo_p = lo * 0.9 if lo > 0 else (float(v[v > 0].min()) * 0.9 if np.any(v > 0) else 1e-12)
    return Limits(lo_p, hi_p, below, above)


def merge_limits(parts: Sequence[Limits], values: Sequence[np.ndarray]) -> Limits:
    """One range covering every part's range, with the counts of ``values`` outside it."""
    lo = min(p.low for p in parts)
    hi = max(p.high for p in parts)
    below = sum(int(np.count_nonzero(np.asarray(v) < lo)) for v in values)
    above = sum(int(np.count_nonzero(np.asarray(v) > hi)) for v in values)
    return Limits(lo, hi, below, above)


def split_outside(values: np.ndarray, limits: Limits) -> tuple[np.ndarray, np.ndarray,
                                                               np.ndarray]:
    """Boolean masks (inside, below, above) of ``values`` against ``limits``."""
    v = np.asarray(values, dtype=float)
    below = v < limits.low
    above = v > limits.high
    return ~(below | above), below, above


def subsample(idx: np.ndarray, limit: int) -> np.ndarray:
    """At most ``limit`` evenly spaced elements of ``idx`` (all when there are fewer)."""
    if idx.size <= limit:
        return idx
    return idx[np.linspace(0, idx.size - 1, limit).astype(int)]


# ============================================================================ density
def silverman_bandwidth(values: np.ndarray) -> float:
    """Silverman's robust rule of thumb, 0.9·min(σ, IQR/1.34)·n^(−1/5) (Silverman 1986,
    eq. 3.31): unlike σ·n^(−1/5) it does not smooth two modes or a long tail into one bump.
    Falls back to σ when the IQR is 0."""
    v = np.asarray(values, dtype=float)
    if v.size < 2:
        return 0.0
    sd = float(np.std(v, ddof=1))
    q1, q3 = np.percentile(v, [25, 75])
    spread = min(sd, float(q3 - q1) / 1.34) if q3 > q1 else sd
    return 0.9 * spread * v.size ** (-1 / 5)


@dataclass(frozen=True)
class Density:
    """A kernel density evaluated on ``grid`` (inside the data's support)."""

    grid: np.ndarray
    values: np.ndarray
    bandwidth: float


def density(values: np.ndarray, *, low: float | None = None, high: float | None = None,
            points: int = DENSITY_POINTS, bandwidth: float | None = None) -> Density | None:
    """Gaussian kernel density of ``values`` with reflection at their minimum and maximum.

    The density is the ordinary Gaussian KDE plus the kernels mirrored at both ends of the
    data, evaluated only between them, so it integrates to 1 over [min, max] and never puts
    mass on impossible (e.g. negative) values. The sum runs over a fine histogram of the
    values (2048 bins), so it costs the same for 100 or 10⁷ samples. The grid covers
    [max(min, low), min(max, high)]. None when the values do not spread (fewer than two
    distinct values).
    """
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    if v.size < 2:
        return None
    vmin, vmax = float(v.min()), float(v.max())
    bw = silverman_bandwidth(v) if bandwidth is None else float(bandwidth)
    if not vmax - vmin > NARROW * max(abs(vmin), abs(vmax)) or not bw > 0:
        return None  # one value, up to rounding: no shape to draw
    g_lo = vmin if low is None else max(vmin, low)
    g_hi = vmax if high is None else min(vmax, high)
    if not g_hi > g_lo:
        return None
    grid = np.linspace(g_lo, g_hi, points)
    counts, edges = np.histogram(v, bins=2048, range=(vmin, vmax))
    centres = (edges[:-1] + edges[1:]) / 2
    keep = counts > 0
    c, w = centres[keep], counts[keep] / v.size
    dens = np.zeros(points)
    chunk = max(1, 2_000_000 // points)
    for start in range(0, c.size, chunk):
        cc, ww = c[start:start + chunk], w[start:start + chunk]
        for mirror in (cc, 2 * vmin - cc, 2 * vmax - cc):
            z = (grid[:, None] - mirror[None, :]) / bw
            dens += (np.exp(-0.5 * z * z) * ww[None, :]).sum(axis=1)
    dens /= bw * math.sqrt(2 * math.pi)
    return Density(grid, dens, bw)


#: a range of values narrower than this share of their size is one value up to rounding
NARROW = 1e-9


def histogram(values: np.ndarray, limits: Limits, bins: int | str = "auto",
              max_bins: int = 100) -> tuple[np.ndarray, np.ndarray]:
    """(density per bin, edges) of the values inside ``limits``, normalised over *all* values,
    so the bars and :func:`density` share one scale even when some values lie outside."""
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    inside = v[(v >= limits.low) & (v <= limits.high)]
    lo, hi = limits.low, limits.high
    if not hi - lo > NARROW * max(abs(lo), abs(hi)):
        bins = 1  # one value up to rounding (BATCHTIME/iters at 10^12 iters): one bar
        hi = max(hi, float(np.nextafter(lo, math.inf)))
    if isinstance(bins, str):
        edges = np.histogram_bin_edges(inside if inside.size else v, bins=bins, range=(lo, hi))
        if edges.size > max_bins + 1:
            edges = np.linspace(lo, hi, max_bins + 1)
    else:
        edges = np.linspace(lo, hi, int(bins) + 1)
    counts, edges = np.histogram(inside, bins=edges)
    widths = np.diff(edges)
    with np.errstate(divide="ignore", invalid="ignore"):
        dens = np.where(widths > 0, counts / (max(v.size, 1) * widths), 0.0)
    return dens, edges


# ============================================================================ box plot
def box_stats(values: np.ndarray, label: str, max_fliers: int = MAX_MARKERS) -> dict[str, Any]:
    """Box-plot statistics as Rancid Fig. 15 draws them: quartiles, median, whiskers at the
    1st and 99th percentiles (linear interpolation, numpy's default), values beyond as fliers
    (evenly subsampled to ``max_fliers``)."""
    values = np.asarray(values, dtype=float)
    p1, q1, med, q3, p99 = (float(v) for v in np.percentile(values, [1, 25, 50, 75, 99]))
    fliers = np.sort(values[(values < p1) | (values > p99)])
    fliers = fliers[subsample(np.arange(fliers.size), max_fliers)]
    return {"label": label, "q1": q1, "med": med, "q3": q3, "whislo": p1, "whishi": p99,
            "mean": float(np.mean(values)), "fliers": fliers}


def clip_box(stats: dict[str, Any], limits: Limits) -> dict[str, Any]:
    """Box statistics with whiskers and fliers cut to ``limits`` (the figure marks the rest
    at the edge)."""
    out = dict(stats)
    out["whislo"] = max(stats["whislo"], limits.low)
    out["whishi"] = min(stats["whishi"], limits.high)
    f = np.asarray(stats["fliers"])
    out["fliers"] = f[(f >= limits.low) & (f <= limits.high)]
    return out


# ============================================================================ series
def moving_average(values: np.ndarray, window: int) -> np.ndarray:
    """Trailing moving average; element i averages values[max(0, i−w+1) … i]."""
    values = np.asarray(values, dtype=float)
    if values.size == 0:
        return values
    window = max(1, int(window))
    csum = np.concatenate([[0.0], np.cumsum(values)])
    idx = np.arange(1, values.size + 1)
    start = np.maximum(idx - window, 0)
    return (csum[idx] - csum[start]) / (idx - start)


def moving_median(values: np.ndarray, window: int,
                  segments: Sequence[tuple[int, int]] | None = None) -> np.ndarray:
    """Centred moving median: element i is the median of the ``window`` values around it
    (``window // 2`` each side), cut at the ends of the segment holding i (``segments``:
    (start, end) index pairs, e.g. one per execution, so the line never mixes two executions'
    levels). A segment shorter than the window gets its own median throughout.

    A median, not a mean: the run-by-run plot's y axis is robust (a few slow runs are drawn at
    its edge), and a mean over a window holding one of them would leave that axis; centred,
    so that the first runs of an execution are not a window of one."""
    from numpy.lib.stride_tricks import sliding_window_view

    values = np.asarray(values, dtype=float)
    out = np.empty_like(values)
    window = max(1, int(window))
    half = window // 2
    for start, end in segments or [(0, values.size)]:
        part = values[start:end]
        size = part.size
        if size == 0:
            continue
        if size <= window:
            out[start:end] = np.median(part)
            continue
        width = 2 * half + 1
        if size >= width:
            out[start + half:end - half] = np.median(sliding_window_view(part, width), axis=1)
        for i in [*range(min(half, size)), *range(max(size - half, half), size)]:
            out[start + i] = np.median(part[max(0, i - half):i + half + 1])
    return out


def binned(x: np.ndarray, y: np.ndarray, nbins: int) -> tuple[np.ndarray, ...]:
    """Per bin of consecutive points: centre x, 1st percentile, median, 99th percentile.

    Bins hold ⌊n / nbins⌋ points each (the last few points join the last bin), so the
    percentiles are computed for all bins at once on a reshaped array.
    """
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    nbins = max(1, min(int(nbins), x.size))
    size = x.size // nbins
    if size == 0:
        return x.copy(), y.copy(), y.copy(), y.copy()
    head = nbins * size
    xs = x[:head].reshape(nbins, size)
    ys = y[:head].reshape(nbins, size)
    cx = xs.mean(axis=1)
    p = np.percentile(ys, [1, 50, 99], axis=1)
    lo, med, hi = p[0], p[1], p[2]
    if head < x.size:  # the remainder: one more bin
        tail = y[head:]
        pt = np.percentile(tail, [1, 50, 99])
        cx = np.append(cx, x[head:].mean())
        lo, med, hi = np.append(lo, pt[0]), np.append(med, pt[1]), np.append(hi, pt[2])
    return cx, lo, med, hi


# ============================================================================ error evolution
def running_quantiles(values: np.ndarray, ns: np.ndarray,
                      qs: Sequence[float] = (25, 50, 75)) -> np.ndarray:
    """Percentiles ``qs`` of ``values[:n]`` for each n in ``ns``; shape (len(ns), len(qs))."""
    values = np.asarray(values, dtype=float)
    out = np.empty((len(ns), len(qs)))
    for i, n in enumerate(ns):
        out[i] = np.percentile(values[: int(n)], qs)
    return out


def evolution_grid(n: int, limit: int = MAX_EVOLUTION_POINTS) -> np.ndarray:
    """The values of n at which an error-evolution curve is evaluated (all when few)."""
    if n <= limit:
        return np.arange(1, n + 1)
    head = np.arange(1, min(n, limit // 4) + 1)
    tail = np.linspace(1, n, limit - head.size).round().astype(int)
    return np.unique(np.concatenate([head, tail]))


def error_evolution(values: np.ndarray, reference: float,
                    limit: int = MAX_EVOLUTION_POINTS) -> dict[str, np.ndarray]:
    """n, relative error (%) of the running median against ``reference``, and relative IQR (%).

    Rancid (001) §VI-B, Fig. 16: error = (median of runs 1…n − reference) / reference; the
    IQR of runs 1…n relative to their median measures the precision reached after n runs.
    """
    ns = evolution_grid(values.size, limit)
    q = running_quantiles(values, ns)
    with np.errstate(divide="ignore", invalid="ignore"):
        err = (q[:, 1] - reference) / abs(reference) * 100.0 if reference else q[:, 1] * np.nan
        iqr = (q[:, 2] - q[:, 0]) / np.abs(q[:, 1]) * 100.0
    return {"n": ns, "error": err, "iqr": iqr}


# ============================================================================ line fit
def fit_band(x: np.ndarray, y: np.ndarray, grid: np.ndarray,
             confidence: float) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """Least-squares line through (x, y) and its confidence band at ``grid``.

    The band of the fitted mean line: ŷ ± t(1−α/2, n−2)·s·√(1/n + (x−x̄)²/Sxx), the standard
    result for simple linear regression (e.g. Montgomery & Runger, §11-5). None for n < 3 or
    when all x are equal.
    """
    n = x.size
    if n < 3:
        return None
    xm = float(x.mean())
    sxx = float(((x - xm) ** 2).sum())
    if sxx == 0:
        return None
    from scipy.stats import t as student_t

    slope = float(((x - xm) * (y - y.mean())).sum() / sxx)
    intercept = float(y.mean() - slope * xm)
    resid = y - (intercept + slope * x)
    s = math.sqrt(float((resid**2).sum()) / (n - 2))
    half = float(student_t.ppf(0.5 + confidence / 2, n - 2)) * s * np.sqrt(
        1.0 / n + (grid - xm) ** 2 / sxx)
    line = intercept + slope * grid
    return line, line - half, line + half


def as_floats(seq: Any) -> np.ndarray:
    """A list of numbers (None → NaN) as a float array; empty when it is not one."""
    if seq is None or isinstance(seq, str | bytes) or not isinstance(seq, Iterable):
        return np.empty(0)
    try:
        return np.asarray([math.nan if v is None else float(v) for v in seq], dtype=float)
    except (TypeError, ValueError):
        return np.empty(0)


# ============================================================================ growth
_EXTRA_CLASSES: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "sqrt(n)": np.sqrt,
    "n^1.5": lambda n: n**1.5,
    "n^2logn": lambda n: n**2 * np.log2(n),
    "2^n": lambda n: np.exp2(n),
}


def _class_key(name: str) -> str:
    key = str(name).strip()
    key = re.sub(r"^O\((.*)\)$", r"\1", key, flags=re.IGNORECASE)
    key = (key.replace("²", "^2").replace("³", "^3").replace("**", "^").replace("·", "")
           .replace("*", "").replace("√n", "sqrt(n)").replace(" ", "").lower())
    key = key.replace("log(n)", "logn").replace("lgn", "logn").replace("log2n", "logn")
    return "n" if key == "n^1" else key


def complexity_function(name: str) -> Callable[[np.ndarray], np.ndarray] | None:
    """The f(n) of a growth class written as ``O(n log n)``, ``n^2``, ``O(n²)``...: for the
    classes the fit knows, its own function (logarithms in base 2), so the drawn curve
    c·f(n) is the fitted one."""
    from ..programs.sweep import COMPLEXITY_CLASSES

    key = _class_key(name)
    for fitted, fn in COMPLEXITY_CLASSES.items():
        if _class_key(fitted) == key:
            return fn
    return _EXTRA_CLASSES.get(key)


@dataclass
class GrowthSeries:
    """Time against a parameter: one line of a growth plot."""

    label: str
    x: np.ndarray
    y: np.ndarray
    low: np.ndarray | None = None
    high: np.ndarray | None = None
    complexity: dict[str, Any] | None = None
    r2: np.ndarray | None = None
    geomean: np.ndarray | None = None
    notes: list[str] = field(default_factory=list)

    def curve(self, points: int = 200) -> tuple[np.ndarray, np.ndarray] | None:
        """(n, c·f(n)) of the fitted class over the range of x; None without a fit."""
        cx = self.complexity or {}
        fn = complexity_function(cx.get("best") or "") if cx.get("best") else None
        coef = cx.get("coefficient")
        good = self.x[np.isfinite(self.x) & (self.x > 0)]
        if fn is None or not isinstance(coef, int | float) or good.size < 1:
            return None
        grid = np.geomspace(good.min(), good.max(), points)
        with np.errstate(all="ignore"):
            curve = float(coef) * fn(grid)
        ok = np.isfinite(curve) & (curve > 0)
        return grid[ok], curve[ok]


def sweep_series(sweep: Mapping[str, Any] | None, label: str = "mean") -> GrowthSeries | None:
    """The growth series of a ``sweep`` table (``results.context["sweep"]``): sizes, mean ±
    stddev, geometric mean, R² per size (a list, or one number in older files) and the
    complexity fit. None when the table has no sizes and means of equal length."""
    if not isinstance(sweep, Mapping):
        return None
    sizes = as_floats(sweep.get("sizes"))
    mean = as_floats(sweep.get("mean"))
    if sizes.size == 0 or sizes.size != mean.size:
        return None
    std = as_floats(sweep.get("stddev"))
    low = high = None
    if std.size == sizes.size:
        low, high = mean - std, mean + std
    r2 = sweep.get("r2")
    r2_arr = as_floats(r2) if isinstance(r2, Sequence) else (
        np.full(sizes.size, float(r2)) if isinstance(r2, int | float) else None)
    if r2_arr is not None and r2_arr.size != sizes.size:
        r2_arr = None
    geo = as_floats(sweep.get("geomean"))
    cx = sweep.get("complexity")
    return GrowthSeries(label, sizes, mean, low, high,
                        dict(cx) if isinstance(cx, Mapping) else None, r2_arr,
                        geo if geo.size == sizes.size else None)


def _numeric(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float) and math.isfinite(float(value)):
        return float(value)
    if isinstance(value, str):
        try:
            out = float(value)
        except ValueError:
            return None
        return out if math.isfinite(out) else None
    return None


@dataclass(frozen=True)
class GrowthPoint:
    """One case as a point of a growth plot: the group it belongs to and its value."""

    group: str
    parameter: str
    x: float
    value: float | None
    low: float | None
    high: float | None


def growth_groups(points: Sequence[GrowthPoint], *, min_points: int = 2,
                  fit: bool = True) -> list[tuple[str, GrowthSeries]]:
    """Growth series from points: one per (group, parameter) with ≥ ``min_points`` distinct
    positive x and positive values, sorted by x, with the complexity fit of
    :func:`steadybench.programs.sweep.fit_complexity` (same classes as ``sweep``) when
    ``fit`` and there are ≥ 3 points. Returns (parameter name, series) pairs."""
    buckets: dict[tuple[str, str], list[GrowthPoint]] = {}
    for p in points:
        if p.value is not None and p.value > 0 and p.x > 0:
            buckets.setdefault((p.parameter, p.group), []).append(p)
    out = []
    for (param, group), pts in buckets.items():
        if len({p.x for p in pts}) < min_points or len({p.x for p in pts}) != len(pts):
            continue
        pts = sorted(pts, key=lambda p: p.x)
        x = np.array([p.x for p in pts])
        y = np.array([p.value for p in pts], dtype=float)
        lo = np.array([np.nan if p.low is None else p.low for p in pts], dtype=float)
        hi = np.array([np.nan if p.high is None else p.high for p in pts], dtype=float)
        complexity = None
        if fit and x.size >= 3:
            from ..errors import ConfigurationError
            from ..programs.sweep import fit_complexity

            try:
                complexity = fit_complexity(x, y)
            except ConfigurationError:
                complexity = None
        out.append((param, GrowthSeries(group, x, y,
                                        lo if np.isfinite(lo).any() else None,
                                        hi if np.isfinite(hi).any() else None, complexity)))
    return out


def numeric_parameter(params: Mapping[str, Any]) -> list[tuple[str, float]]:
    """The parameters of a case whose values are positive numbers: candidates for an x axis."""
    out = []
    for k, v in params.items():
        x = _numeric(v)
        if x is not None and x > 0:
            out.append((str(k), x))
    return out
