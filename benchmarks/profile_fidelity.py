"""How faithful and how costly the sampler of a Python case is (run: python
benchmarks/profile_fidelity.py); the figures docs/profiles.md, "Choosing the sampler", quotes.

**Fidelity.** A benchmark calls ``slow()`` three times and ``fast()`` once, each the same work:
``slow()``'s share of the profile is 0.75. It is profiled ``--runs`` times as ``--profile``
does (py-spy as the parent of :mod:`steadybench.profiles.child`), first on the machine as it
is, then beside ``--hogs`` CPU-bound ``yes`` processes this script starts and stops (by PID).
Printed per condition: ``slow()``'s share (min, median, max), the samples each profile rests on
(median), and the *design effect*: the variance of the share over the runs divided by the mean
binomial variance ``p (1 - p) / n`` of one run. Samples are not independent draws (py-spy
catches up after a late wake-up with samples back to back, all at one point of the code), so
the variance exceeds the binomial one by this factor; ``tests/test_profiles.py`` takes its
tolerance from the binomial error inflated by it.

**Overhead.** The same calls timed in a process of their own without and with the sampler, for
a numeric loop and for generator-heavy code: the ratio of time per call (median over
``--pairs`` interleaved pairs). py-spy at ``--rate`` (outside the process: it stops the process
to read its stacks) and pyinstrument (inside: a profiling hook on every call and return), when
installed, with its default wall-clock timer and with a CPU-time timer.

Usage: python benchmarks/profile_fidelity.py [--runs N] [--hogs K] [--rate HZ] [--pairs N]
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from steadybench import testing

SLOW_FAST = testing.SLOW_FAST  # slow() ×3 + fast() ×1: shares 0.75 and 0.25

WORKLOADS = {
    "numeric loop": '''def work(n):
    s = 0
    for i in range(n):
        s += i * i
    return s


def call():
    return work(20_000)
''',
    "generators": '''def squares(n):
    for i in range(n):
        yield i * i


def call():
    return sum(x for x in squares(20_000) if x % 3)
''',
}

#: times ``call`` for ``seconds`` with the profiler named on the command line; prints
#: ``per-call SECONDS``
TIMER = '''import json, sys, time
sys.path.insert(0, sys.argv[1])
from workload import call
mode, seconds = sys.argv[2], float(sys.argv[3])
profiler = None
if mode.startswith("pyinstrument"):
    from pyinstrument import Profiler
    profiler = Profiler(interval=0.001)
    if mode == "pyinstrument-cpu":  # weighed by CPU time: the clock read on every call
        from pyinstrument.stack_sampler import get_stack_sampler
        get_stack_sampler().timer_func = time.thread_time
for _ in range(20):
    call()
if profiler is not None:
    profiler.start()
calls, start = 0, time.perf_counter()
while time.perf_counter() - start < seconds:
    call()
    calls += 1
elapsed = time.perf_counter() - start
if profiler is not None:
    profiler.stop()
print('per-call', json.dumps(elapsed / calls))
'''


def _share(path: Path, seconds: float, rate: int) -> tuple[float, int] | str:
    from steadybench.ab.variants import PythonVariant
    from steadybench.profiles.backend import ProfileSettings, for_variant, take_profile

    got = take_profile(for_variant(PythonVariant("A", str(path)),
                                   ProfileSettings(seconds=seconds, rate=rate)), 300)
    if not hasattr(got, "functions"):
        return got.message
    funcs = {f.frame.function: f for f in got.functions()}
    return funcs["slow"].share, got.samples


def fidelity(path: Path, runs: int, seconds: float, rate: int, label: str) -> None:
    got = [_share(path, seconds, rate) for _ in range(runs)]
    failed = [g for g in got if isinstance(g, str)]
    ok = [g for g in got if not isinstance(g, str)]
    if failed:
        print(f"  {label}: {len(failed)} profiles failed: {failed[0]}")
    if len(ok) < 2:
        return
    shares = [s for s, _ in ok]
    binomial = statistics.mean(s * (1 - s) / n for s, n in ok)
    deff = statistics.variance(shares) / binomial
    print(f"  {label:<28} slow() share min {min(shares):.3f}  median "
          f"{statistics.median(shares):.3f}  max {max(shares):.3f}  (0.75 expected)  samples "
          f"median {statistics.median(n for _, n in ok):.0f}  design effect {deff:.1f}  "
          f"load {os.getloadavg()[0]:.1f}")


def _time_per_call(folder: Path, mode: str, seconds: float, rate: int) -> float:
    argv = [sys.executable, "-c", TIMER, str(folder), mode, str(seconds)]
    if mode == "py-spy":
        from steadybench.profiles.sampler import find_py_spy

        argv = [find_py_spy(), "record", "--rate", str(rate), "--function", "--threads",
                "--subprocesses", "--format", "raw", "--output", str(folder / "out.txt"),
                "--", *argv]
    out = subprocess.run(argv, capture_output=True, text=True, check=True).stdout
    return float(next(line.split()[1] for line in out.splitlines()
                      if line.startswith("per-call ")))


def overhead(tmp: Path, pairs: int, seconds: float, rate: int) -> None:
    try:
        import pyinstrument  # noqa: F401
        modes = ["py-spy", "pyinstrument", "pyinstrument-cpu"]
    except ImportError:
        modes = ["py-spy"]
        print("  (pyinstrument not installed: only py-spy measured)")
    for name, source in WORKLOADS.items():
        folder = tmp / name.replace(" ", "_")
        folder.mkdir()
        (folder / "workload.py").write_text(source)
        ratios: dict[str, list[float]] = {m: [] for m in modes}
        for _ in range(pairs):
            for mode in modes:
                plain = _time_per_call(folder, "plain", seconds, rate)
                ratios[mode].append(_time_per_call(folder, mode, seconds, rate) / plain)
        print(f"  {name:<14} " + "  ".join(
            f"{mode} {statistics.median(r):.2f}x" for mode, r in ratios.items()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--hogs", type=int, default=2)
    parser.add_argument("--rate", type=int, default=None, help="default: the --profile rate")
    parser.add_argument("--seconds", type=float, default=1.0, help="--profile-time")
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("--skip-overhead", action="store_true")
    opts = parser.parse_args()
    from steadybench.profiles.backend import ProfileSettings

    rate = opts.rate or ProfileSettings().rate
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        path = tmp / "bench_shares.py"
        path.write_text(SLOW_FAST)
        print(f"fidelity: {opts.runs} profiles of slow()x3 + fast()x1, py-spy {rate} Hz, "
              f"--profile-time {opts.seconds:g}")
        fidelity(path, opts.runs, opts.seconds, rate, "machine as it is")
        hogs = [subprocess.Popen(["yes"], stdout=subprocess.DEVNULL) for _ in range(opts.hogs)]
        try:
            fidelity(path, opts.runs, opts.seconds, rate, f"beside {opts.hogs} CPU hogs")
        finally:
            for hog in hogs:
                os.kill(hog.pid, signal.SIGTERM)
                hog.wait(timeout=10)
        if not opts.skip_overhead:
            print(f"overhead: time per call with the sampler / without (median of "
                  f"{opts.pairs} pairs)")
            overhead(tmp, opts.pairs, opts.seconds, rate)


if __name__ == "__main__":
    main()
