"""Cost of the machine-control readings (run: python benchmarks/system_overhead.py).

Prints the time of one monitor-meter reading, one tune+restore cycle and one machine_state on a
fake sysfs tree, and one read of the real /proc/loadavg. These costs fall outside the measured
time (meters are read after the timed code), but they add to the wall time of a session.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from fake_machine import make_machine  # noqa: E402
from steadybench.system.meters import CpuFrequencyMeter, LoadMeter, TemperatureMeter  # noqa: E402
from steadybench.system.readers import machine_state  # noqa: E402
from steadybench.system.sysfs import SysRoot  # noqa: E402
from steadybench.system.tuning import reset, tune  # noqa: E402


def per_call(fn, n: int) -> float:
    start = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - start) / n


def show(label: str, seconds: float) -> None:
    print(f"{label + ':':50s} {seconds * 1e6:10.1f} µs")


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = SysRoot(make_machine(Path(tmp) / "m", cpus=8, thermal={"a": 45000, "b": 50000}))
        freq = CpuFrequencyMeter(root, lambda: [0, 1, 2, 3])
        temp = TemperatureMeter(root)
        load = LoadMeter(root)
        show("cpu_freq meter (4 CPUs, fake tree)", per_call(lambda: freq.stop(True), 2000))
        show("temperature meter (2 zones)", per_call(lambda: temp.stop(True), 2000))
        show("loadavg meter", per_call(lambda: load.stop(True), 2000))
        journal = Path(tmp) / "j.json"

        def cycle() -> None:
            tune(root, journal)
            reset([journal])

        show("tune + reset, 8 CPUs + boost (fsynced journal)", per_call(cycle, 50))
        show("machine_state (no process sampling)", per_call(lambda: machine_state(root, 0), 200))
    real = LoadMeter(SysRoot("/"))
    show("loadavg meter, real /proc", per_call(lambda: real.stop(True), 2000))


if __name__ == "__main__":
    main()
