"""initsplit on real code: does its T_e agree with linefit? (source ``002`` §5, issue 14)

The code under test sorts a list that each execution must first restore (the initialisation):
``init`` copies 300 shuffled numbers into the buffer, ``work`` sorts it. ``initsplit`` times
rounds of ``N_k`` sorts and ``M_k`` restores (the paper's schedule ``M_1 = N_1 = 1``,
``M_k = N_k + 1``) and solves ``T_k = N_k·T_e + M_k·T_i + ε`` for T_e, T_i and ε.

The reference: ``linefit`` of "restore then sort" minus ``linefit`` of "restore" alone is T_e
too, by a different route (two straight lines, no initialisation schedule). The check passes
when linefit's T_e lies within initsplit's interval of T_e. Both run in K independent
executions (``--processes``, default 10), so every interval is across executions; the
reference's own interval is that of the difference of two independent estimates (half-widths
added in quadrature, a normal approximation).

Run: ``.venv/bin/python benchmarks/initsplit_check.py [--processes K] [--seconds S]``.
The worker processes import this file by its module name (``initsplit_check``), so the
functions below are what they measure.
"""

from __future__ import annotations

import argparse
import math
import random
import sys
import time

SIZE = 300
BASE = random.Random(1).sample(range(SIZE), SIZE)
BUF = list(BASE)


def init() -> None:
    """The initialisation: restore the unsorted list."""
    BUF[:] = BASE


def work() -> None:
    """The measured code: sort it (needs the restore before every execution)."""
    BUF.sort()


def both() -> None:
    """Restore, then sort: T_i + T_e per execution, for the linefit reference."""
    BUF[:] = BASE
    BUF.sort()


def _ns(v: float) -> str:
    return f"{v * 1e9:.0f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--processes", type=int, default=10)
    parser.add_argument("--seconds", type=float, default=0.3,
                        help="seconds of samples per execution (default 0.3)")
    args = parser.parse_args()
    # Measure this file as a module (not __main__), so that worker processes can import it.
    sys.path.insert(0, __file__.rsplit("/", 1)[0])
    import initsplit_check as me

    import steadybench as sb

    started = time.monotonic()
    common = {"max_time": args.seconds, "warmup": 20, "processes": args.processes}
    split = sb.measure(me.work, method="initsplit", init=me.init, name="sort", **common)
    total = sb.measure(me.both, method="linefit", name="restore+sort", **common)
    restore = sb.measure(me.init, method="linefit", name="restore", **common)
    te_ref = total.value - restore.value
    half = math.hypot((total.ci_high - total.ci_low) / 2, (restore.ci_high - restore.ci_low) / 2)
    ti_lo, ti_hi = split["T_i_ci"]
    eps_lo, eps_hi = split["epsilon_ci"]
    print(f"initsplit ({split.level}, {split.n_executions} executions, "
          f"{split.confidence:.0%} intervals)")
    print(f"  T_e     {_ns(split.value):>7} ns  [{_ns(split.ci_low)}, {_ns(split.ci_high)}]")
    print(f"  T_i     {_ns(split['T_i']):>7} ns  [{_ns(ti_lo)}, {_ns(ti_hi)}]")
    print(f"  epsilon {_ns(split['epsilon']):>7} ns  [{_ns(eps_lo)}, {_ns(eps_hi)}]")
    print(f"linefit   restore+sort {_ns(total.value)} ns [{_ns(total.ci_low)}, "
          f"{_ns(total.ci_high)}], restore {_ns(restore.value)} ns [{_ns(restore.ci_low)}, "
          f"{_ns(restore.ci_high)}]")
    print(f"  T_e = difference {_ns(te_ref)} ns ± {_ns(half)}")
    for text in split.case.warnings:
        print(f"  warning (initsplit): {text}")
    agree = split.ci_low <= te_ref <= split.ci_high
    print(f"{time.monotonic() - started:.0f} s")
    print(f"initsplit T_e={_ns(split.value)} ns linefit T_e={_ns(te_ref)} ns "
          f"agree={'yes' if agree else 'no'} (T_i={_ns(split['T_i'])} ns, "
          f"linefit restore={_ns(restore.value)} ns)")


if __name__ == "__main__":
    main()
