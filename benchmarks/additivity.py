"""Additivity on the real machine: g = "f twice" must take twice as long as f.

A method without systematic error gives value(g) / value(f) = 2 (source ``002`` §3: the overhead
ε is common to every sample; linefit puts it in the intercept). ``direct`` times one execution
between two clock reads, so it reports T + ε and (2T + ε) / (T + ε) < 2 for fast code; ``batch``
divides ε by N and lands close to 2 on the median (its mean, the reported value, is pulled up
by interrupts on a busy machine); ``linefit`` and ``differential`` cancel ε.

f and g are statement strings ("f()" and "f(); f()"), so the unrolled code runs exactly one or
two calls of f per execution, with no extra call layer in g.

Run: ``.venv/bin/python benchmarks/additivity.py [SECONDS_PER_MEASUREMENT]``
"""

from __future__ import annotations

import sys

import numpy as np

import steadybench as sb
from steadybench.clocks import clock_properties


def f() -> int:
    return len(str(123456789))


def _median(est: sb.Estimate) -> float:
    """Median per-execution time of the samples (robust to interrupts, unlike the mean)."""
    return float(np.median(np.asarray(est.y) / np.asarray(est.x)))


def main() -> None:
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 1.0
    ns = {"f": f}
    print(f"{'method':<13}{'f (ns)':>10}{'g (ns)':>10}{'g/f':>8}{'median g/f':>12}"
          "   95% CI of f (ns)")
    for method in ("direct", "batch", "differential", "linefit"):
        opts = {"base_batch": 20} if method == "differential" else {}
        ef = sb.measure("f()", method=method, globals=ns, max_time=seconds, warmup=20, **opts)
        eg = sb.measure("f(); f()", method=method, globals=ns, max_time=seconds, warmup=20,
                        **opts)
        med = "-" if method == "linefit" else f"{_median(eg) / _median(ef):.3f}"
        print(f"{method:<13}{ef.value * 1e9:>10.1f}{eg.value * 1e9:>10.1f}"
              f"{eg.value / ef.value:>8.3f}{med:>12}"
              f"   [{ef.ci_low * 1e9:.1f}, {ef.ci_high * 1e9:.1f}]")
    clock = clock_properties()
    print(f"clock read cost {clock['read_cost_ns']} ns, resolution {clock['resolution_ns']} ns")


if __name__ == "__main__":
    main()
