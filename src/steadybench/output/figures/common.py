"""What every figure shares: the Agg canvas, the style, PNG/SVG output, text escaping, and
outliers marked at the edge of a robust axis.

matplotlib is imported inside the functions, so importing this package costs nothing until a
figure is drawn. Figures are created with an explicit
:class:`~matplotlib.backends.backend_agg.FigureCanvasAgg`, never through ``pyplot``: no display
and no global backend switch is involved.

Every text that comes from the user (names, parameters, labels) has its ``$`` escaped, so
matplotlib prints it as it is instead of reading it as TeX (mathtext).
"""

from __future__ import annotations

import io
import os
import re
import warnings
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import numpy as np

from ...errors import ConfigurationError
from ...fileio import atomic_write_bytes
from ...model.results import PRIMARY_METRIC, RUN_OK, CaseResult, Results
from ..plotdata import Limits, format_value, time_scale

#: resolution of PNG files
DPI = 100
FORMATS = {".png": "png", ".svg": "svg"}

RC = {
    "svg.fonttype": "none",  # text stays text in SVG files (searchable, smaller)
    "svg.hashsalt": "steadybench",  # deterministic SVG ids
    "axes.grid": True,
    "grid.alpha": 0.3,
    "font.size": 10,
    "axes.titlesize": 10.5,
    "axes.labelsize": 10,
    "xtick.labelsize": 9,
    "ytick.labelsize": 9,
    "legend.fontsize": 9,
    "axes.spines.top": False,
    "axes.spines.right": False,
}

C_OK = "#1f77b4"
C_AVG = "#ff7f0e"
C_WARMUP = "#8c8c8c"
C_REMOVED = "#d62728"
C_OUTLIER = "#e377c2"
C_FREQ = "#2ca02c"
C_TEMP = "#9467bd"
C_LOAD = "#8c564b"
C_EDGE = "#b2182b"
SERIES_COLORS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#17becf")

__all__ = ["format_value", "time_scale"]


def format_of(path: str | os.PathLike[str]) -> str:
    suffix = Path(path).suffix.lower()
    if suffix not in FORMATS:
        raise ConfigurationError(f"{path}: plots are written as .png or .svg, not {suffix!r}")
    return FORMATS[suffix]


def new_figure(width: float = 7.0, height: float = 3.8,
               layout: str | None = "constrained") -> Any:
    """A figure bound to the Agg canvas (no pyplot, no display).

    ``layout=None`` skips matplotlib's constrained layout (more than half of the drawing time);
    the caller then places the axes with ``subplots_adjust``.
    """
    import matplotlib
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    with matplotlib.rc_context(RC):
        fig = Figure(figsize=(width, height), dpi=DPI, layout=layout)
    FigureCanvasAgg(fig)
    return fig


def figure_bytes(fig: Any, fmt: str = "png") -> bytes:
    """Render ``fig`` as PNG or SVG bytes. Every text in it (titles, labels, legends: names
    from the results) has its control characters and bidi overrides shown escaped first: a
    raw ESC drew a missing glyph and made Matplotlib print it, raw, in a warning on the
    terminal (issue 27 item 17)."""
    import matplotlib
    from matplotlib.text import Text

    from ..sanitize import terminal_text

    if fmt not in FORMATS.values():
        raise ConfigurationError(f"plot format must be png or svg, not {fmt!r}")
    for text in fig.findobj(Text):
        shown = text.get_text()
        if shown and terminal_text(shown, keep_newlines=True) != shown:
            text.set_text(terminal_text(shown, keep_newlines=True))
    buf = io.BytesIO()
    # no creation date, so the same results give the same file
    meta = {"Date": None, "Creator": "steadybench"} if fmt == "svg" else {
        "Software": "steadybench"}
    with matplotlib.rc_context(RC), warnings.catch_warnings():
        # tick labels made at drawing time (categories) are not among the texts above: a
        # missing glyph's warning would print the raw character on the terminal
        warnings.filterwarnings("ignore", message="Glyph .* missing from")
        fix_layout(fig)
        fig.savefig(buf, format=fmt, dpi=DPI, metadata=meta)
    return buf.getvalue()


def fix_layout(fig: Any) -> None:
    """Run ``fig``'s layout engine (constrained layout) once, then switch it off, so saving
    draws the figure once.

    With a layout engine, Matplotlib's ``savefig`` draws the whole figure twice: once without
    rendering, which runs the layout, and once more to render it (with the engine switched
    off). The layout itself only needs the artists' extents, which it measures on its own
    before the first draw, so running it here and saving without an engine gives the same
    positions for about half the cost (PNG: byte for byte the same file). The layout is
    measured with the PNG (Agg) canvas at :data:`DPI`; an SVG file then places things within
    a point of where Matplotlib's own pass, measured with the SVG canvas, put them, and a
    second format of the same figure (``--plot-format svg`` after the report's PNG) reuses
    the first one's layout.
    """
    import matplotlib
    from matplotlib.layout_engine import PlaceHolderLayoutEngine

    engine = fig.get_layout_engine()
    if engine is None or isinstance(engine, PlaceHolderLayoutEngine) or not fig.axes:
        return
    if fig.dpi != DPI:
        fig.set_dpi(DPI)  # the layout is measured at the resolution that is saved
    engine.execute(fig)
    # no engine at all (a "none" placeholder would still make savefig draw twice)
    with matplotlib.rc_context({"figure.autolayout": False,
                                "figure.constrained_layout.use": False}):
        fig.set_layout_engine(None)


def save_figure(fig: Any, path: str | os.PathLike[str]) -> Path:
    """Write ``fig`` to ``path`` (PNG or SVG by suffix), atomically; return the path."""
    return atomic_write_bytes(path, figure_bytes(fig, format_of(path)))


def build(builder: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Call ``builder`` under the style of every figure."""
    import matplotlib

    with matplotlib.rc_context(RC):
        return builder(*args, **kwargs)


def message(ax: Any, text: str) -> None:
    """Replace the content of ``ax`` by a centred explanation (too few samples, ...)."""
    ax.set_xticks([])
    ax.set_yticks([])
    ax.grid(False)
    ax.text(0.5, 0.5, text, ha="center", va="center", transform=ax.transAxes, wrap=True,
            color="#444444", fontsize=10)


def esc(text: Any) -> str:
    """User text for matplotlib: a ``$`` would start mathtext (TeX), so it is escaped."""
    return str(text).replace("$", r"\$")


def short(text: Any, limit: int = 70) -> str:
    """User text shortened to ``limit`` characters and escaped for matplotlib."""
    text = str(text)
    return esc(text if len(text) <= limit else text[: limit - 1] + "…")


def safe_name(text: str, limit: int = 60) -> str:
    """A file-name-safe version of ``text``."""
    name = re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("._") or "case"
    return name[:limit]


def column(case: CaseResult, metric: str) -> np.ndarray | None:
    col = case.metrics.get(metric)
    if col is None or len(col) == 0:
        return None
    return np.frombuffer(col, dtype=float) if hasattr(col, "typecode") else np.asarray(col, float)


_STATUS_CACHE: list[tuple[CaseResult, int, np.ndarray]] = []


def status_array(case: CaseResult) -> np.ndarray:
    """``case.status`` as a numpy array of text, kept for the last few cases (converting a
    list of 100,000 strings costs more than drawing a small figure)."""
    n = len(case.status)
    for cached, length, arr in _STATUS_CACHE:
        if cached is case and length == n:
            return arr
    arr = np.asarray(case.status)
    _STATUS_CACHE.insert(0, (case, n, arr))
    del _STATUS_CACHE[4:]
    return arr


def samples(case: CaseResult, metric: str = PRIMARY_METRIC) -> np.ndarray:
    """The ok values of ``metric`` in run order (empty when raw samples were not kept)."""
    if not case.keep_samples:
        return np.empty(0)
    col = column(case, metric)
    if col is None:
        return np.empty(0)
    status = status_array(case)[: col.size]
    vals = col[: status.size][status == RUN_OK]
    return vals[np.isfinite(vals)]


def cases_of(items: Results | CaseResult | Iterable[CaseResult]) -> list[CaseResult]:
    if isinstance(items, CaseResult):
        return [items]
    if isinstance(items, Results):
        return list(items.cases)
    return list(items)


def unit_of(case: CaseResult, metric: str) -> str:
    if metric == PRIMARY_METRIC:
        return case.unit or "s"
    return case.units.get(metric, "")


def axis_label(metric: str, unit: str) -> str:
    name = "time" if metric == PRIMARY_METRIC else esc(metric)
    return f"{name} ({unit})" if unit else name


def mark_outside(ax: Any, limits: Limits, *, axis: str, unit: str, positions: Any = None,
                 values_below: Any = None, values_above: Any = None,
                 note: bool = True) -> None:
    """Mark the values beyond a robust axis: triangles at the edge (at ``positions`` along
    the other axis, when given) and a note "N beyond ▸ (max …)" in the corner.

    ``axis`` is the axis that carries the values ("x" or "y").
    """
    if limits.outside == 0:
        return
    for side, count, edge in (("below", limits.below, limits.low),
                                    ("above", limits.above, limits.high)):
        if not count:
            continue
        if positions is not None and side in positions and len(positions[side]):
            pos = np.asarray(positions[side])
            edges = np.full(pos.size, edge)
            if axis == "x":
                ax.scatter(edges, pos, marker="<" if side == "below" else ">", s=28,
                           color=C_EDGE, clip_on=False, zorder=5, linewidths=0)
            else:
                ax.scatter(pos, edges, marker="v" if side == "below" else "^", s=28,
                           color=C_EDGE, clip_on=False, zorder=5, linewidths=0)
    if not note:
        return
    parts = []
    if limits.below:
        lo = f" (min {_fmt(values_below, min, unit)})" if values_below is not None else ""
        parts.append(f"{limits.below} below{lo}")
    if limits.above:
        hi = f" (max {_fmt(values_above, max, unit)})" if values_above is not None else ""
        parts.append(f"{limits.above} above{hi}")
    text = "outside the axis, marked at its edge: " + ", ".join(parts)
    ax.text(0.995, 0.995, text, transform=ax.transAxes, ha="right", va="top", fontsize=8,
            color=C_EDGE, bbox={"facecolor": "white", "alpha": 0.85, "edgecolor": "none",
                                "pad": 1.5}, zorder=6)


def _fmt(values: Any, pick: Callable[..., Any], unit: str) -> str:
    arr = np.asarray(values, dtype=float)
    arr = arr[np.isfinite(arr)]
    if arr.size == 0:
        return "–"
    return f"{float(pick(arr)):.4g} {unit}".strip()
