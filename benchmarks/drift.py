"""How much the machine's own speed moves over time: the floor under any tool's run-to-run CoV.

A benchmark's headline can repeat no better than the machine it runs on. On a shared or virtual
machine the speed of the CPU moves over seconds (other tenants, the host's frequency, steal),
and a measurement that lasts W seconds takes the machine's average speed over those W seconds.
This script measures that floor directly, with no tool in the way:

* one Python process runs the workload (the same ``loop40`` and ``sorted1000`` set-ups as
  ``reproducibility.py``) back to back for ``--seconds``, in samples of about 1 ms (the loop count
  is calibrated once), recording each sample's start time and its time per call. One process
  means one memory layout and one hash seed: layout effects, which differ from one process to
  the next, are held fixed, so what varies is the machine;
* the samples are cut into consecutive windows of W seconds, for W from 1 s to 30 s, and the
  coefficient of variation of the windows' medians is printed for each W.

Reading it: a tool that measures for W seconds per invocation takes the machine's speed over
its W seconds, so across invocations it can hardly repeat better than the figure for W at that
time, whatever its statistics (a robust estimate can set aside a burst shorter than half its
measurement, not a whole slow or fast stretch). ``reproducibility.py``'s tools take 2–8 s per
invocation: compare its CoVs with the 3 s and 8 s rows of a drift run made just before or after
it, and expect both to change with the time of day on a shared machine. The windows' medians
are each taken over thousands of samples, so their own sampling error (printed as "sampling")
is far below the figures on any machine this was tried on.

Also printed: the share of the time the machine ran more than 2 % away from its overall median
speed (in 1-s windows), and the fastest and slowest 1-s windows.

Usage: python benchmarks/drift.py [--seconds 300] [--workloads sorted1000] [--json PATH]
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import textwrap
from pathlib import Path

from _common import parse_list, save_json
from reproducibility import SAMPLE_SECONDS, WORKLOADS, probe

from steadybench.stats.robust import robust_sd

WINDOWS = (1.0, 3.0, 5.0, 8.0, 15.0, 30.0)
def window_medians(samples: list[tuple[float, float]], width: float) -> list[float]:
    """Medians of consecutive windows of ``width`` seconds; the last, partial window is left out."""
    windows: dict[int, list[float]] = {}
    for t, v in samples:
        windows.setdefault(int(t // width), []).append(v)
    complete = int(samples[-1][0] // width)  # the index of the partial window at the end
    return [statistics.median(windows[k]) for k in sorted(windows) if k < complete]


def analyse(samples: list[tuple[float, float]]) -> dict:
    per_call = [v for _, v in samples]
    overall = statistics.median(per_call)
    rows = []
    for width in WINDOWS:
        medians = window_medians(samples, width)
        if len(medians) < 3:
            continue
        per_window = len(per_call) / (samples[-1][0] / width)
        # The median of n samples has SD about 1.2533 σ/√n (normal σ, robust estimate).
        sampling = 1.2533 * robust_sd(per_call) / math.sqrt(per_window) / overall
        rows.append({"window": width, "windows": len(medians),
                     "cov": statistics.stdev(medians) / statistics.fmean(medians),
                     "sampling": sampling})
    seconds = window_medians(samples, 1.0)
    away = [m for m in seconds if abs(m / overall - 1) > 0.02]
    return {"samples": len(per_call), "median": overall, "windows": rows,
            "share_away_2pct": len(away) / len(seconds) if seconds else float("nan"),
            "fastest_1s": min(seconds) / overall - 1 if seconds else float("nan"),
            "slowest_1s": max(seconds) / overall - 1 if seconds else float("nan")}


def report(name: str, seconds: float, result: dict) -> None:
    print("\n" + textwrap.fill(
        f"{name}: {seconds:.0f} s in one process, {result['samples']:,} samples of "
        f"~{SAMPLE_SECONDS * 1e3:.0f} ms, median {result['median'] * 1e9:.1f} ns per call",
        width=80))
    print(f"{'window':>8} {'windows':>8} {'CoV of window medians':>22} {'sampling':>9}")
    for row in result["windows"]:
        print(f"{row['window']:>7.0f}s {row['windows']:>8} {row['cov'] * 100:>21.2f}% "
              f"{row['sampling'] * 100:>8.2f}%")
    print(textwrap.fill(
        f"The machine ran more than 2 % away from its median speed in "
        f"{result['share_away_2pct'] * 100:.0f} % of the 1-s windows; they ranged from "
        f"{-result['fastest_1s'] * 100:.1f} % faster to {result['slowest_1s'] * 100:.1f} % "
        "slower than the median.",
        width=80))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=300.0,
                        help="how long to probe each workload (default 300)")
    parser.add_argument("--workloads", type=lambda v: parse_list(v, WORKLOADS),
                        default=["sorted1000"], help="comma-separated subset of "
                        f"{', '.join(WORKLOADS)} (default sorted1000)")
    parser.add_argument("--json", type=Path, default=None, help="save the figures here")
    args = parser.parse_args()
    sys.stdout.reconfigure(line_buffering=True)  # the figures and the progress (stderr) in order
    if args.seconds < 3 * max(WINDOWS):
        parser.error(f"--seconds must be at least {3 * max(WINDOWS):.0f} (three of the "
                     "longest windows)")
    results = {}
    for name in args.workloads:
        _, setup = WORKLOADS[name]
        print(f"probing {name} for {args.seconds:.0f} s ...", file=sys.stderr)
        try:
            samples = probe(setup, args.seconds)
        except RuntimeError as exc:
            print(f"{name}: the probe failed: {exc}", file=sys.stderr)
            return 1
        results[name] = analyse(samples)
        report(name, args.seconds, results[name])
    save_json(args.json, results, "figures")
    return 0


if __name__ == "__main__":
    sys.exit(main())
