"""initsplit on real code: does its T_e agree with linefit? (source ``002`` §5, issue 14)

The code under test sorts a list that each execution must first restore (the initialisation):
``init`` copies 300 shuffled numbers into the buffer, ``work`` sorts it. ``initsplit`` times
rounds of ``N_k`` sorts and ``M_k`` restores (by default the varied schedule
``M_k = N_k + (k mod 4)``; ``--schedule paper`` for ``M_1 = N_1 = 1``, ``M_k = N_k + 1``) and
solves ``T_k = N_k·T_e + M_k·T_i + ε`` for T_e, T_i and ε.

The reference: ``linefit`` of "restore then sort" minus ``linefit`` of "restore" alone is T_e
too, by a different route (two straight lines, no initialisation schedule). The check passes
when linefit's T_e lies within initsplit's interval of T_e.

Every figure stands on independent executions (fresh worker processes). On a shared machine the
speed drifts by several percent over a minute, more than the interval of either method, so the
three measurements are interleaved: ``--rounds`` rounds (default 5), each measuring initsplit,
restore+sort and restore in ``--processes`` executions (default 2). Each method's figure is the
median of all its per-execution values with the interval across them (Kalibera & Jones;
:func:`steadybench.stats.summary.across_executions`, the same as ``processes=K`` gives); the
reference is the difference of the two linefit medians. ``--sequential`` measures each in one
block of ``rounds × processes`` executions instead, one after the other.

Run: ``.venv/bin/python benchmarks/initsplit_check.py [--rounds R] [--processes K]
[--seconds S] [--sequential]``.
The worker processes import this file by its module name (``initsplit_check``), so the
functions below are what they measure.
"""

from __future__ import annotations

import argparse
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


def _spread(values: list[float]) -> tuple[float, float, float]:
    from steadybench.stats.summary import across_executions

    spread = across_executions(values, 0.95)
    return spread.centre, spread.low, spread.high


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--seconds", type=float, default=0.3,
                        help="seconds of samples per execution (default 0.3)")
    parser.add_argument("--sequential", action="store_true")
    parser.add_argument("--schedule", choices=("paper", "varied"), default="varied",
                        help="paper: M_1 = N_1 = 1, M_k = N_k + 1 (the default of initsplit); "
                             "varied: M_k = N_k + (k mod 4), T_i told apart in every round")
    args = parser.parse_args()
    schedule = args.schedule
    # Measure this file as a module (not __main__), so that worker processes can import it.
    sys.path.insert(0, __file__.rsplit("/", 1)[0])
    import initsplit_check as me

    import steadybench as sb

    started = time.monotonic()
    values: dict[str, list[float]] = {"T_e": [], "T_i": [], "epsilon": [], "total": [],
                                      "restore": []}
    warnings: list[str] = []
    blocks = [(1, args.rounds * args.processes)] if args.sequential else \
        [(args.rounds, args.processes)]
    for rounds, processes in blocks:
        common = {"max_time": args.seconds, "warmup": 20, "processes": processes}
        for _ in range(rounds):
            split = sb.measure(me.work, method="initsplit", init=me.init, name="sort",
                               schedule=schedule, **common)
            for p in split.case.processes:
                if p.ok:
                    values["T_e"].append(p.value)
                    values["T_i"].append(p.figures["T_i"])
                    values["epsilon"].append(p.figures["epsilon"])
            warnings += [w for w in split.case.warnings if w not in warnings]
            for key, fn, label in (("total", me.both, "restore+sort"),
                                   ("restore", me.init, "restore")):
                est = sb.measure(fn, method="linefit", name=label, **common)
                values[key] += [p.value for p in est.case.processes if p.ok]
    te, te_lo, te_hi = _spread(values["T_e"])
    ti, ti_lo, ti_hi = _spread(values["T_i"])
    eps, eps_lo, eps_hi = _spread(values["epsilon"])
    total, total_lo, total_hi = _spread(values["total"])
    restore, restore_lo, restore_hi = _spread(values["restore"])
    te_ref = total - restore
    design = ("sequential" if args.sequential else f"{args.rounds} interleaved rounds") \
        + f", {args.schedule} schedule"
    print(f"initsplit ({len(values['T_e'])} executions, {design}, 95% intervals across "
          "executions)")
    print(f"  T_e     {_ns(te):>7} ns  [{_ns(te_lo)}, {_ns(te_hi)}]")
    print(f"  T_i     {_ns(ti):>7} ns  [{_ns(ti_lo)}, {_ns(ti_hi)}]")
    print(f"  epsilon {_ns(eps):>7} ns  [{_ns(eps_lo)}, {_ns(eps_hi)}]")
    print(f"linefit   restore+sort {_ns(total)} ns [{_ns(total_lo)}, {_ns(total_hi)}], restore "
          f"{_ns(restore)} ns [{_ns(restore_lo)}, {_ns(restore_hi)}] "
          f"({len(values['total'])} and {len(values['restore'])} executions)")
    print(f"  T_e = difference {_ns(te_ref)} ns")
    for text in warnings:
        print(f"  warning (initsplit): {text}")
    agree = te_lo <= te_ref <= te_hi
    print(f"{time.monotonic() - started:.0f} s")
    print(f"initsplit T_e={_ns(te)} ns [{_ns(te_lo)}, {_ns(te_hi)}] linefit T_e={_ns(te_ref)} ns "
          f"agree={'yes' if agree else 'no'} (T_i={_ns(ti)} ns, linefit restore="
          f"{_ns(restore)} ns)")


if __name__ == "__main__":
    main()
