"""Is :func:`steadybench.compare.median.median` faster than ``numpy.median`` where compare uses
it? Prints the time per call of each and their ratio (numpy / ours) for the inputs compare
passes: numpy arrays and Python lists of 3 to 32 floats (a benchmark of few samples), and one
size above :data:`~steadybench.compare.median.SMALL` where ours hands over to numpy.

Each figure is the best of --repeat rounds of ``timeit`` (--number calls each); ratios, not
absolute times, are what the docstring of ``compare/median.py`` cites. Results are checked to
be equal to numpy's first.

Usage: .venv/bin/python benchmarks/small_median.py [--number N] [--repeat R]
"""

from __future__ import annotations

import argparse
import timeit

import numpy as np

from steadybench.compare.median import SMALL, median


def best(call, number: int, repeat: int) -> float:
    return min(timeit.repeat(call, number=number, repeat=repeat)) / number


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--number", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    rng = np.random.default_rng(1)
    print(f"{'input':<18} {'numpy.median':>13} {'ours':>10} {'numpy/ours':>11}")
    for n in (3, 5, 10, 32, 1000):
        array = rng.lognormal(0.0, 0.1, n)
        for kind, values in (("array", array), ("list", array.tolist())):
            assert median(values) == float(np.median(values))
            t_np = best(lambda v=values: float(np.median(v)), args.number, args.repeat)
            t_us = best(lambda v=values: median(v), args.number, args.repeat)
            note = " (numpy itself)" if n > SMALL else ""
            print(f"{kind + ' of ' + str(n):<18} {t_np * 1e6:>10.2f} µs {t_us * 1e6:>7.2f} µs "
                  f"{t_np / t_us:>10.1f}×{note}")


if __name__ == "__main__":
    main()
