"""Cost of the issue-15 machine readings and stop conditions (run:
python benchmarks/device_overhead.py).

Prints, on the fake board of ``tests/fake_machine.make_board`` (8 big.LITTLE CPUs, Mali and DDR
devfreq, RAPL, a battery): one devfreq meter reading, one energy reading (RAPL, and the power
supply), the min-freq re-check before a run, a journaled tune + reset of the whole board; and
the cost per run of the new stop conditions, as a ratio to the existing ``CovWindow`` check.
Meter readings and countermeasures fall outside the measured time, but add to a session's wall
time.
"""

from __future__ import annotations

import sys
import tempfile
import time
from collections import deque
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from fake_machine import MALI, make_board  # noqa: E402
from steadybench.meters.energy import RaplEnergyMeter, SupplyEnergyMeter  # noqa: E402
from steadybench.model.implementation import CallableImplementation  # noqa: E402
from steadybench.model.parameters import Parameters  # noqa: E402
from steadybench.model.results import CaseResult  # noqa: E402
from steadybench.runner.actions import RunContext  # noqa: E402
from steadybench.runner.stop import (  # noqa: E402
    CiWidthWindow,
    CovAfterWarmup,
    CovWindow,
    MedianIqrStable,
    RunState,
)
from steadybench.system.actions import KeepMinFreqAction, TuneAction  # noqa: E402
from steadybench.system.meters import DevfreqMeter  # noqa: E402
from steadybench.system.sysfs import SysRoot  # noqa: E402
from steadybench.system.tuning import reset, tune  # noqa: E402


def per_call(fn, n: int) -> float:
    start = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - start) / n


def show(label: str, seconds: float) -> None:
    print(f"{label + ':':58s} {seconds * 1e6:10.1f} µs")


def per_run(cond, n: int) -> float:
    """Seconds per run of checking ``cond`` after every one of ``n`` runs (as the loop does),
    after one check that pays the one-time imports."""
    import random

    rng = random.Random(1)
    warm = RunState(window=deque([1.0, 1.1] * 30, maxlen=60), runs=60)
    cond.check(warm)  # one-time imports (scipy's t quantile, numpy) are not counted
    state = RunState(window=deque(maxlen=max(1, cond.window_size())))
    start = time.perf_counter()
    for _ in range(n):
        v = 1.0 + rng.random() * 0.01
        state.stream.push(v)
        state.window.append(v)
        state.runs += 1
        cond.check(state)
    return (time.perf_counter() - start) / n


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        board = make_board(Path(tmp) / "b")
        root = SysRoot(board)
        dev = DevfreqMeter(root, MALI)
        show("devfreq meter (one device)", per_call(lambda: dev.stop(True), 2000))
        rapl = RaplEnergyMeter(root)
        show("energy meter, RAPL (start + stop)",
             per_call(lambda: (rapl.start(), rapl.stop(True)), 2000))
        supply = SupplyEnergyMeter(root)
        show("energy meter, power_supply (start + stop)",
             per_call(lambda: (supply.start(), supply.stop(True)), 2000))
        journal = Path(tmp) / "j.json"

        def cycle() -> None:
            tune(root, journal)
            reset([journal])

        show("tune + reset, board (8 CPUs, boost, 2 devfreq)", per_call(cycle, 30))
        action = TuneAction(root, journal=Path(tmp) / "run.json")
        ctx = RunContext(CallableImplementation(lambda: None, "w"), Parameters(),
                         CaseResult("b", "w"), RunState(), time.perf_counter_ns, time.sleep)
        action(ctx)
        keep = KeepMinFreqAction(action)
        show("min-freq re-check before a run (nothing reset)", per_call(lambda: keep(ctx), 2000))
        action.close(ctx)
    n = 20_000
    base = per_run(CovWindow(1e-9, 20), n)
    print(f"stop-condition checks over {n} runs, per run (ratio to CovWindow(20)):")
    for label, cond in (("CovWindow(20)", CovWindow(1e-9, 20)),
                        ("CovAfterWarmup(discard=0)", CovAfterWarmup(1e-9)),
                        ("CovAfterWarmup(discard=10)", CovAfterWarmup(1e-9, discard=10)),
                        ("CiWidthWindow(20)", CiWidthWindow(1e-9, 20)),
                        ("MedianIqrStable()", MedianIqrStable(1e-9))):
        cost = per_run(cond, n)
        print(f"  {label:30s} {cost * 1e6:8.2f} µs  {cost / base:6.2f}×")


if __name__ == "__main__":
    main()
