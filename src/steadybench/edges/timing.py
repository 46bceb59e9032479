"""Edge-to-edge times as steadybench samples (source ``002`` §1, §3.1, §4, §5 and §6).

The pin goes ``A → ¬A`` before the code under test and ``¬A → A`` after it (§1, Fig. 1), so one
measured time is from an ``A → ¬A`` edge to the next ``¬A → A`` edge. Always the same pair of
edge kinds, never mixed: the measured time is ``T_e + t_S1 + t_S2 + (t_H2 − t_H1)`` (eq. 1), and
mixing rising-to-falling with falling-to-rising times would flip the sign of ``t_H2 − t_H1``
from one sample to the next (§5, "Pin-toggling measurement errors").

The pulse widths then go through the estimates of the other methods, so the systematic error
``ε = t_S1 + t_S2 + t_H2 − t_H1`` is removed the same way:

* ``direct``: each pulse is one sample (its width, over ``base_batch`` executions): ε stays in.
* ``linefit`` (§4): the capture holds the paper's 1..M pattern (pulse j runs the code
  ``k·b`` times, k = 1, 2, …, M, repeating): the slope of width on executions is T_e and the
  intercept is ε.
* ``differential`` (§3.1): pulses come in pairs of ``b`` and ``2b`` executions; the difference of
  each pair is ``b`` executions with ε cancelled.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import ConfigurationError
from ..model.results import PRIMARY_METRIC, RUN_OK, CaseResult
from ..stats.regression import DEFAULT_OUTLIER_THRESHOLD
from .capture import Capture, CaptureError
from .detect import Edges

#: the kinds of edge a measured time can start with
PAIR_KINDS = ("rising", "falling")
#: the estimates the pulse widths can go through
EDGE_METHODS = ("direct", "linefit", "differential")
#: what the interval of one capture covers (``Estimate.fields["interval_scope"]``)
INTERVAL_ONE_CAPTURE = ("within this capture only: the pulses of one recording; capture again "
                        "(after a reset of the device) for the variation between runs")


@dataclass
class Pulses:
    """Edge-to-edge times: ``widths`` in seconds, the ``starts`` (times of the first edge of
    each), the kind of edge they start with, and how many edges at the ends had no partner."""

    widths: np.ndarray
    starts: np.ndarray
    start_kind: str
    unpaired: int

    def to_dict(self) -> dict[str, Any]:
        other = "falling" if self.start_kind == "rising" else "rising"
        return {"from": self.start_kind, "to": other, "count": int(self.widths.size),
                "unpaired_edges": self.unpaired,
                "widths": [float(w) for w in self.widths],
                "starts": [float(t) for t in self.starts]}


def pulse_widths(edges: Edges, start: str = "rising") -> Pulses:
    """The time from each ``start`` edge to the next edge (of the other kind: the hysteresis
    makes edges alternate). Edges before the first ``start`` edge and a last ``start`` edge
    without a successor are left out and counted in ``unpaired``."""
    if start not in PAIR_KINDS:
        raise ConfigurationError(f"--from must be one of {', '.join(PAIR_KINDS)}, got {start!r}")
    want = start == "rising"
    first = np.flatnonzero(edges.rising == want)
    first = first[first + 1 < len(edges)]
    if first.size == 0:
        raise CaptureError(f"no {start} edge is followed by another edge: nothing to time "
                           f"({len(edges)} edge(s); try --from "
                           f"{'falling' if want else 'rising'})")
    widths = edges.times[first + 1] - edges.times[first]
    return Pulses(widths=widths, starts=edges.times[first].copy(), start_kind=start,
                  unpaired=len(edges) - 2 * int(first.size))


def _runs(pulses: Pulses, method: str, points: int, base_batch: int, first: int
          ) -> list[dict[str, float]]:
    w = pulses.widths
    if method == "direct":
        return [{PRIMARY_METRIC: v / base_batch, "elapsed": v, "executions": float(base_batch)}
                for v in w]
    if method == "linefit":
        ks = (np.arange(w.size) + first - 1) % points + 1
        return [{PRIMARY_METRIC: v / (k * base_batch), "elapsed": v,
                 "executions": float(k * base_batch)} for v, k in zip(w, ks)]
    pairs = w[: w.size - w.size % 2].reshape(-1, 2)
    return [{PRIMARY_METRIC: (b - a) / base_batch, "first": a, "second": b,
             "executions": float(base_batch)} for a, b in pairs]


def edge_case(capture: Capture, edges: Edges, pulses: Pulses, method: str = "direct", *,
              points: int = 20, base_batch: int = 1, first: int = 1, skip: int = 0,
              trim: float = 0.1, threshold: float = DEFAULT_OUTLIER_THRESHOLD,
              confidence: float = 0.95, name: str | None = None) -> CaseResult:
    """A finished case of the pulse widths (one run per pulse, or per pair for
    ``differential``), with its :class:`~steadybench.model.estimate.Estimate` from ``method``
    (see the module docs). ``skip`` pulses at the start are left out (a preamble); ``first``
    is the k of the first pulse kept in the 1..M pattern of ``linefit``.

    One capture is one execution: the interval is within it (``estimate.level == "runs"``).
    """
    from ..methods.base import DirectMethod
    from ..methods.differential import DifferentialMethod
    from ..methods.linefit import LineFitMethod
    from ..processors.base import finalize_case

    if method not in EDGE_METHODS:
        raise ConfigurationError(f"--method must be one of {', '.join(EDGE_METHODS)}, "
                                 f"got {method!r}")
    if base_batch < 1:
        raise ConfigurationError(f"--base-batch must be at least 1, got {base_batch}")
    if not 1 <= first <= points:
        raise ConfigurationError(f"--first must be between 1 and --points ({points}), got "
                                 f"{first}")
    if skip < 0:
        raise ConfigurationError(f"--skip must not be negative, got {skip}")
    if skip >= pulses.widths.size:
        raise CaptureError(f"{capture.source}: --skip {skip} leaves none of the "
                           f"{pulses.widths.size} pulse(s)")
    kept = Pulses(widths=pulses.widths[skip:], starts=pulses.starts[skip:],
                  start_kind=pulses.start_kind, unpaired=pulses.unpaired)
    label = name or Path(capture.source).stem or "capture"
    other = "falling" if kept.start_kind == "rising" else "rising"
    case = CaseResult(benchmark=label, implementation="pin",
                      params={"edges": f"{kept.start_kind}-{other}"}, method=method)
    case.units.update({PRIMARY_METRIC: "s", "elapsed": "s", "executions": "", "first": "s",
                       "second": "s"})
    runner: Any
    if method == "linefit":
        runner = LineFitMethod(points=points, base_batch=base_batch, threshold=threshold)
    elif method == "differential":
        runner = DifferentialMethod(trim=trim, base_batch=base_batch)
    else:
        runner = DirectMethod()
    for values in _runs(kept, method, points, base_batch, first):
        case.add_run(RUN_OK, values)
        case.accumulate(values)
    case.stop_reason = "end of the capture"
    case.warnings.extend(edges.warnings)
    case.extra["capture"] = capture.to_dict()
    case.extra["edges"] = edges.to_dict()
    case.extra["pulses"] = {**kept.to_dict(), "skipped": skip}
    case.extra["method_options"] = runner.options()
    finalize_case(case, (), runner, confidence)
    if case.estimate is not None:
        fields = {**case.estimate.fields, "interval_scope": INTERVAL_ONE_CAPTURE}
        case.estimate = replace(case.estimate, fields=fields)
    return case
