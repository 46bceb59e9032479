"""The comparison protocol for one-execution sides whose run-to-run noise is known (from the
results history, :mod:`steadybench.history.noise`): Student's t on the difference of mean
log-times with that noise's σ and degrees of freedom. It lives in ``compare`` so that compare
never imports the history (the history hands it a noise object)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any


def known_noise_protocol(base: Sequence[float], new: Sequence[float], noise: Any,
                         confidence: float) -> dict[str, Any]:
    """A protocol entry (as :func:`steadybench.compare.protocol.mean_protocol` returns) for
    executions whose run-to-run spread is known from history: Student's t on the difference of
    mean log-times with σ and ν from ``noise``. Also returns ``ratio_ci``, the interval of
    BASE/NEW at ``confidence``."""
    from scipy import stats

    la = [math.log(v) for v in base if v > 0]
    lb = [math.log(v) for v in new if v > 0]
    d = sum(la) / len(la) - sum(lb) / len(lb)
    se = noise.sigma * math.sqrt(1.0 / len(la) + 1.0 / len(lb))
    t = (math.inf if d > 0 else -math.inf if d < 0 else 0.0) if se == 0 else d / se
    p_faster = float(stats.t.sf(t, noise.df))  # BASE slower than NEW: NEW faster
    p_slower = float(stats.t.cdf(t, noise.df))
    q = float(stats.t.ppf(0.5 + confidence / 2, noise.df))
    return {
        "status": "ok", "test": "t with run-to-run noise from history", "statistic": t,
        "df": noise.df, "p_faster": p_faster, "p_slower": p_slower,
        "p_two_sided_test": min(1.0, 2.0 * min(p_faster, p_slower)),
        "assumptions": {"noise": {"sigma_log": noise.sigma, "cov": noise.cov, "df": noise.df,
                                  "records": noise.records, "machine": noise.machine,
                                  "note": "assumes the compared code has the recorded "
                                          "versions' run-to-run spread on this machine"}},
        "reason": noise.describe(),
        "ratio_ci": {"low": math.exp(d - q * se), "high": math.exp(d + q * se),
                     "confidence": confidence, "achieved_confidence": confidence,
                     "method": "t with noise from history", "estimate": math.exp(d)},
    }
