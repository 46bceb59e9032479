"""Verdicts across time: how often results taken at different times are called different.

Part 1, real runs on this machine: ``--pairs`` pairs of separate default ``steadybench run``\\ s
of identical code and as many where the second is ``--slowdown`` slower (interleaved), each
compared with ``steadybench compare A.json B.json`` and with the change-since-the-last-run line
(A saved with ``--save-baseline``, B run with ``--baseline``; the kept A runs teach the
between-run noise). Targets (issue 25): identical code called different in ≤ 1 of 20, the 5 %
slowdown called slower in ≥ 16 of 20, never the wrong direction.

Part 2, simulated histories through ``history regressions``' own function: records of 5
executions (2.5 % spread), each record shifted by a run effect (1 %); drift-only series (linear
+3 % over the series; random walk 0.3 % per record) and series with a 5 % step. Targets: a
reported change in ≤ 5 % of drift-only series; the step found at the right record ±1 in ≥ 90 %.

    python benchmarks/over_time.py                   # 20 + 20 pairs, 200 simulated series
    python benchmarks/over_time.py --pairs 3 --series 20   # a quick look
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

WORKLOAD = '''
import os
import steadybench as sb

SCALE = float(os.environ.get("OVER_TIME_SCALE", "1.0"))


@sb.benchmark
def loop():
    n = int(30000 * SCALE)
    return lambda: sum(range(n))
'''


def steadybench(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "steadybench", *args], capture_output=True,
                          text=True, env=env, timeout=600)


def change_line(stderr_and_out: str) -> str:
    for line in stderr_and_out.splitlines():
        if re.match(r"\s+loop: [+-]", line):
            return line.strip()
    return ""


def verdict_of_change(line: str) -> str:
    if "slower" in line and "no change" not in line:
        return "slower"
    if "faster" in line and "no change" not in line:
        return "faster"
    return "no difference" if line else "missing"


def real_pairs(pairs: int, slowdown: float) -> None:
    work = Path(tempfile.mkdtemp(prefix="over-time-"))
    bench = work / "bench.py"
    bench.write_text(WORKLOAD)
    env = {**os.environ, "STEADYBENCH_BASELINE_DIR": str(work / "baselines"),
           "XDG_STATE_HOME": str(work / "state")}
    tallies: dict[str, dict[str, dict[str, int]]] = {
        kind: {how: {} for how in ("compare", "change line")} for kind in ("identical", "slower")}
    noise_texts = []
    started = time.monotonic()
    for i in range(2 * pairs):
        kind = "identical" if i % 2 == 0 else "slower"
        a, b = work / f"a{i}.json", work / f"b{i}.json"
        ra = steadybench("run", str(bench), "--json", str(a), "--save-baseline", "pairA", "-q",
                         env={**env, "OVER_TIME_SCALE": "1.0"})
        scale = "1.0" if kind == "identical" else str(1.0 + slowdown)
        rb = steadybench("run", str(bench), "--json", str(b), "--baseline", "pairA",
                         env={**env, "OVER_TIME_SCALE": scale})
        if ra.returncode or rb.returncode:
            print(f"run failed: {ra.stderr[-300:]} {rb.stderr[-300:]}")
            continue
        line = change_line(rb.stdout + rb.stderr)
        cmp = steadybench("compare", str(a), str(b), "--json", "-", env=env)
        row = json.loads(cmp.stdout)["benchmarks"][0]
        got = {"compare": row["verdict"].replace("no significant difference", "no difference"),
               "change line": verdict_of_change(line)}
        for how, verdict in got.items():
            tallies[kind][how][verdict] = tallies[kind][how].get(verdict, 0) + 1
        noise_texts.append(row.get("run_noise", {}).get("text", ""))
        print(f"pair {i // 2 + 1:2d} {kind:9s} compare: {got['compare']:14s} "
              f"ratio {row['speedup']:.4f}  change line: {line}", flush=True)
    minutes = (time.monotonic() - started) / 60
    print(f"\nreal runs ({minutes:.1f} min; last noise used by compare: {noise_texts[-1]})")
    for kind in ("identical", "slower"):
        for how in ("compare", "change line"):
            t = tallies[kind][how]
            total = sum(t.values())
            print(f"  {kind:9s} {how:11s}: " + ", ".join(f"{v} {k}" for k, v in sorted(
                t.items())) + f"  (of {total})")


def simulated(series: int, seed: int = 25) -> None:
    from steadybench.history.regressions import find_changes
    from steadybench.history.store import Point

    rng = np.random.default_rng(seed)

    def make(n: int, kind: str, step_at: int | None) -> list[Point]:
        if kind == "drift":
            level = np.linspace(0.0, math.log(1.03), n)
        elif kind == "walk":
            level = np.cumsum(rng.normal(0.0, 0.003, n))
        else:
            level = np.zeros(n)
        if step_at is not None:
            level = level + np.where(np.arange(n) >= step_at, math.log(1.05), 0.0)
        shift = rng.normal(0.0, 0.01, n)
        pts = []
        for i in range(n):
            ex = np.exp(level[i] + shift[i] + rng.normal(0.0, 0.025, 5))
            pts.append(Point(i, "", f"{i:040x}", "main", False, None, "m", "b", "s",
                             float(np.median(ex)), None, None, None, tuple(ex)))
        return pts

    print(f"\nsimulated histories ({series} series per cell; 5 executions of 2.5 %, run "
          "effect 1 %)")
    for n in (30, 100, 200):
        for kind in ("flat", "drift", "walk"):
            false = sum(bool(find_changes(make(n, kind, None)).changes) for _ in range(series))
            found = 0
            for _ in range(series):
                at = int(rng.integers(n // 4, 3 * n // 4))
                changes = find_changes(make(n, kind, at)).changes
                found += any(abs(c.index - at) <= 1 and c.direction == "slower"
                             for c in changes)
            print(f"  {n:3d} records {kind:5s}: change reported in {false / series:6.1%} of "
                  f"series without a step; a 5% step found at its record ±1 in "
                  f"{found / series:6.1%}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=20)
    parser.add_argument("--slowdown", type=float, default=0.05)
    parser.add_argument("--series", type=int, default=200)
    parser.add_argument("--skip-real", action="store_true")
    parser.add_argument("--skip-simulated", action="store_true")
    args = parser.parse_args()
    if not args.skip_real:
        real_pairs(args.pairs, args.slowdown)
    if not args.skip_simulated:
        simulated(args.series)


if __name__ == "__main__":
    main()
