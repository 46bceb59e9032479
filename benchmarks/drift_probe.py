"""Does a reference workload timed during a run predict the run's shift? (issue 25, the drift
probe)

Separate runs of identical code differ by more than their executions' spread: the machine
shifts every execution of one run together (``docs/comparison.md``, "between runs"). Issue 25
lists, among the sources of that run-to-run variance, "a drift probe measured during the run, if
you find by measurement that one predicts the shift (say how well)". This script measures it.

A *run* here is what a default ``steadybench run`` does: 25 executions in turn, each a fresh
Python process that warms the workload up and times it for ``--sample-seconds``. Beside the
workload, a fixed *reference workload* (a pure-Python loop with integer arithmetic and a small
dict, :data:`REFERENCE`) is timed, placed one of three ways:

* ``parent``: in the parent process, in a block before each execution and after the last
  (steadybench's driver could do this for every backend, ``exec`` included);
* ``around``: in each execution's own process, a block before its samples and one after;
* ``interleaved``: in each execution's own process, one reference call after every sample.

Each run's level is the median of its executions' medians; the run *adjusted* by the probe is
the median of each execution's workload/reference ratio (for ``parent``, the reference is the
geometric mean of the blocks on either side of the execution). Over ``--runs`` runs per
placement (the placements take turns, so they share the machine's conditions), it prints:

* the spread (standard deviation) of the run-level ln values, raw and adjusted: a probe that
  predicts the shift makes the adjusted spread smaller;
* the correlation of the run-level workload and reference, and the slope β of one on the other
  (β = 1 means the workload shifts exactly as much as the reference; dividing by the reference
  assumes β = 1);
* the robust spread of the executions inside a run (the MAD of ln values), raw and adjusted:
  a noisy probe widens it, and an interleaved probe can disturb the workload's own samples;
* the CPU pressure (Linux PSI, ``steadybench.cpu_pressure``) during the placement's runs: a
  run above 10 % is one steadybench already refuses to compare across time.

Usage: python benchmarks/drift_probe.py [--runs 12] [--executions 25] [--workloads loop,sorted]
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
import time
from dataclasses import dataclass

import numpy as np

from steadybench.cpu_pressure import PressureMark

#: the reference workload (a statement list defining ``REF()``)
REFERENCE = '''
def REF():
    s = 0
    for i in range(4000):
        s += i * i % 7
    d = {}
    for i in range(1500):
        d[i & 127] = d.get(i & 127, 0) + i
    return s
'''

WORKLOADS = {
    # over_time.py's benchmark: a C-level loop over a range
    "loop": "def W():\n    return sum(range(30000))\n",
    # allocation and comparisons
    "sorted": ("import random\n_r = random.Random(1)\n_x = [_r.random() for _ in range(2000)]\n"
               "def W():\n    return sorted(_x)\n"),
    # a memory-bound copy of 16 MiB
    "copy": "_b = bytearray(16 << 20)\ndef W():\n    return bytes(_b)[:1]\n",
}

CHILD = '''
import time, statistics, sys
{workload}
{reference}
placement, seconds, block = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
for _ in range(20):
    W(); REF()
ws, rs = [], []
def ref_block():
    end = time.perf_counter() + block
    while time.perf_counter() < end:
        t = time.perf_counter(); REF(); rs.append(time.perf_counter() - t)
if placement == "around":
    ref_block()
end = time.perf_counter() + seconds
while time.perf_counter() < end:
    t = time.perf_counter(); W(); ws.append(time.perf_counter() - t)
    if placement == "interleaved":
        t = time.perf_counter(); REF(); rs.append(time.perf_counter() - t)
if placement == "around":
    ref_block()
print(statistics.median(ws), statistics.median(rs) if rs else "nan")
'''

PLACEMENTS = ("parent", "around", "interleaved")


def reference_block(seconds: float) -> float:
    """The median time of one reference call over a block of ``seconds``, in this process."""
    namespace: dict = {}
    exec(REFERENCE, namespace)  # noqa: S102 - the fixed reference workload above
    ref = namespace["REF"]
    times = []
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        t = time.perf_counter()
        ref()
        times.append(time.perf_counter() - t)
    return float(np.median(times))


@dataclass
class Run:
    level: float  # ln of the median of the executions' workload medians
    reference: float  # ln of the median of the reference
    adjusted: float  # ln of the median of workload/reference per execution
    within_raw: float
    within_adjusted: float
    pressure: float | None


def _mad(x: np.ndarray) -> float:
    return float(1.4826 * np.median(np.abs(x - np.median(x))))


def one_run(workload: str, placement: str, executions: int, seconds: float,
            block: float) -> Run:
    code = CHILD.format(workload=WORKLOADS[workload], reference=REFERENCE)
    mark = PressureMark.now()
    ws, rs = [], []
    refs = [reference_block(block)] if placement == "parent" else []
    for _ in range(executions):
        out = subprocess.run([sys.executable, "-c", code, placement, str(seconds), str(block)],
                             capture_output=True, text=True, check=True, timeout=120).stdout
        w, r = out.split()
        ws.append(float(w))
        if placement == "parent":
            refs.append(reference_block(block))
            rs.append(math.sqrt(refs[-2] * refs[-1]))
        else:
            rs.append(float(r))
    lw, lr = np.log(ws), np.log(rs)
    return Run(float(np.median(lw)), float(np.median(lr)), float(np.median(lw - lr)),
               _mad(lw), _mad(lw - lr), mark.share_until(PressureMark.now()))


def summarize(workload: str, placement: str, runs: list[Run]) -> dict:
    level = np.array([r.level for r in runs])
    ref = np.array([r.reference for r in runs])
    adj = np.array([r.adjusted for r in runs])
    pressures = [r.pressure for r in runs if r.pressure is not None]
    corr = float(np.corrcoef(level, ref)[0, 1]) if np.std(ref) > 0 else math.nan
    beta = float(np.polyfit(ref, level, 1)[0]) if np.std(ref) > 0 else math.nan
    return {"workload": workload, "placement": placement, "runs": len(runs),
            "sd_raw": float(np.std(level, ddof=1)), "sd_adjusted": float(np.std(adj, ddof=1)),
            "sd_reference": float(np.std(ref, ddof=1)), "corr": corr, "beta": beta,
            "within_raw": float(np.median([r.within_raw for r in runs])),
            "within_adjusted": float(np.median([r.within_adjusted for r in runs])),
            "pressure_median": float(np.median(pressures)) if pressures else None,
            "pressure_max": max(pressures) if pressures else None}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=12, help="runs per placement and workload")
    parser.add_argument("--executions", type=int, default=25)
    parser.add_argument("--sample-seconds", type=float, default=0.15,
                        help="how long each execution times the workload")
    parser.add_argument("--block", type=float, default=0.02,
                        help="seconds of each reference block (parent, around)")
    parser.add_argument("--workloads", default="loop,sorted,copy")
    parser.add_argument("--json", help="also write the figures to this file")
    args = parser.parse_args()
    workloads = [w for w in args.workloads.split(",") if w]
    unknown = [w for w in workloads if w not in WORKLOADS]
    if unknown:
        sys.exit(f"unknown workload(s) {', '.join(unknown)}: choose from {', '.join(WORKLOADS)}")
    started, load = time.monotonic(), os_load()
    figures = []
    for workload in workloads:
        done: dict[str, list[Run]] = {p: [] for p in PLACEMENTS}
        for _ in range(args.runs):
            for placement in PLACEMENTS:  # in turn: the placements share the conditions
                done[placement].append(one_run(workload, placement, args.executions,
                                               args.sample_seconds, args.block))
        figures.extend(summarize(workload, p, runs) for p, runs in done.items())
    print(f"{args.runs} runs per placement and workload, {args.executions} executions each; "
          f"{(time.monotonic() - started) / 60:.1f} min, load average {load:.1f} at the start "
          f"and {os_load():.1f} at the end\n")
    print(f"{'workload':8s} {'placement':11s} {'run-level sd raw → adjusted':>28s} "
          f"{'corr':>5s} {'β':>5s} {'within-run raw → adj':>21s} {'CPU pressure':>14s}")
    for f in figures:
        pressure = ("—" if f["pressure_median"] is None else
                    f"{f['pressure_median']:.0%} (≤{f['pressure_max']:.0%})")
        print(f"{f['workload']:8s} {f['placement']:11s} {f['sd_raw']:>12.2%} → "
              f"{f['sd_adjusted']:<12.2%} {f['corr']:5.2f} {f['beta']:5.2f} "
              f"{f['within_raw']:>9.2%} → {f['within_adjusted']:<9.2%} {pressure:>14s}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as out:
            json.dump(figures, out, indent=1)


def os_load() -> float:
    import os

    return os.getloadavg()[0]


if __name__ == "__main__":
    main()
