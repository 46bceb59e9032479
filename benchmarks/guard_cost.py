"""What the heavy-tail guard (:class:`steadybench.compare.between.HeavyTail`) costs where the
machine's run-to-run noise is normal, by simulation through the project's own functions.

Runs of 25 executions (2 % spread each) shifted by a normal run effect (1 %); the kept levels
are the last ``m`` runs' ln(median)s, the comparison :func:`across_time` of one more run of
identical code (or 3 %, 5 % slower) against the last, at 95 %. Printed per cell: how often the
t-test alone calls a difference and how often it is still called with the guard. Then the
other side of the guard's minimum count: a real +20 % step among the earlier levels followed
by a 5 % change, and how often the guard vetoes it.

    python benchmarks/guard_cost.py              # 2,000 histories a cell
    python benchmarks/guard_cost.py --trials 300 # a quick look

The simulation is :func:`steadybench.testing.guard_tally`, which the tests use too.
"""

from __future__ import annotations

import argparse
import math

import numpy as np

from steadybench.compare.between import TAIL_MIN_COUNT
from steadybench.testing import guard_tally


def normal_cost(m: int, effect: float, trials: int, seed: int) -> tuple[float, float]:
    """(called by the t-test, still called with the guard), as shares of the trials."""
    t = guard_tally(np.random.default_rng(seed), m, trials, effect=effect)
    return t.called / trials, (t.called - t.vetoed) / trials


def step_vetoes(m: int, trials: int, seed: int) -> tuple[float, float]:
    """(called by the t-test, vetoed by the guard) after a real +20 % step, then 5 %."""
    t = guard_tally(np.random.default_rng(seed), m, trials, effect=0.05, step=math.log(1.2))
    return t.called / trials, t.vetoed / trials


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=2000)
    args = parser.parse_args()
    print(f"guard: at least {TAIL_MIN_COUNT} earlier consecutive shifts as large, and a share "
          f"above α; {args.trials} histories a cell")
    for m in (10, 20, 40):
        cells = [normal_cost(m, effect, args.trials, 7) for effect in (0.0, 0.03, 0.05)]
        print(f"{m:3d} levels: identical called different {cells[0][0]:.2%} → {cells[0][1]:.2%}"
              f"; 3 % found {cells[1][0]:.2%} → {cells[1][1]:.2%}; 5 % found "
              f"{cells[2][0]:.2%} → {cells[2][1]:.2%}", flush=True)
    for m in (12, 20, 40):
        called, vetoed = step_vetoes(m, max(args.trials // 4, 50), 11)
        print(f"a +20 % step among {m} levels, then 5 %: called by the t-test {called:.1%}, "
              f"vetoed by the guard {vetoed:.1%}", flush=True)


if __name__ == "__main__":
    main()
