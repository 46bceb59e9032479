"""Cost of ``evaluate``'s analysis against the measuring it summarises.

The analysis of an evaluation (Fig. 16's running medians and IQRs, the level detector on every
execution, the Table 2/3 statistics) runs after the measuring, in the foreground. This prints,
for run series of N values, the seconds the analysis of one series takes and its ratio to the
time the series took to measure if each run lasted ``--run-ms`` (default 1 ms: a fast kernel;
the paper's runs took 10–1000 ms). A ratio well under 1 % means the analysis is negligible.

Run: ``.venv/bin/python benchmarks/evaluate_analysis.py [--run-ms 1]``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from steadybench.evaluate.levels import detect_levels
from steadybench.evaluate.stats import box_stats, error_evolution, table2_row


def seconds(fn, *args) -> float:
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        fn(*args)
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run-ms", type=float, default=1.0)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    print(f"{'N':>9} {'evolution s':>12} {'levels s':>10} {'tables s':>10} "
          f"{'total/measuring':>16}")
    for n in (50, 1_000, 10_000, 100_000):
        x = np.where(rng.random(n) < 0.3, 1.2e-3, 1.0e-3) + rng.normal(0, 1e-5, n)
        y = x * 0.98
        t_evo = seconds(error_evolution, x, float(np.median(y)))
        t_lev = seconds(detect_levels, x)
        t_tab = seconds(lambda a=x, b=y: (table2_row(a, b), box_stats(a)))
        measuring = n * args.run_ms / 1e3
        ratio = (t_evo + t_lev + t_tab) / measuring
        print(f"{n:>9} {t_evo:>12.4f} {t_lev:>10.4f} {t_tab:>10.4f} {ratio:>15.3%}")


if __name__ == "__main__":
    main()
