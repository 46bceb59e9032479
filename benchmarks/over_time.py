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

Part 3, the oracle bound (:func:`oracle`): how often a level-5 % test that knows the true noise
model finds the same steps; a method that must estimate the model cannot do better.

    python benchmarks/over_time.py                   # 20 + 20 pairs, 200 simulated series
    python benchmarks/over_time.py --pairs 3 --series 20   # a quick look
    python benchmarks/over_time.py --skip-real             # parts 2 and 3 only
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
from dataclasses import dataclass
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


@dataclass(frozen=True)
class Pair:
    """One pair of runs as compare and the change line judged it."""

    kind: str
    compare: str
    change: str
    ratio: float
    #: the half-width of compare's 95 % interval of the ratio, as a fraction
    half_width: float
    se_base: float
    se_new: float
    noise_sigma: float
    noise_source: str
    noise_runs: int


def _pair(kind: str, row: dict, line: str) -> Pair:
    ci = row.get("speedup_ci") or {}
    between = (((row.get("median_protocol") or {}).get("assumptions") or {})
               .get("between_runs") or {})
    noise = row.get("run_noise") or {}
    low, high = ci.get("low", math.nan), ci.get("high", math.nan)
    return Pair(kind, row["verdict"].replace("no significant difference", "no difference"),
                verdict_of_change(line), row["speedup"], (high - low) / 2.0,
                between.get("se_base", math.nan), between.get("se_new", math.nan),
                noise.get("sigma", math.nan), noise.get("source", "?"), noise.get("runs", 0))


def real_pairs(pairs: int, slowdown: float) -> list[Pair]:
    work = Path(tempfile.mkdtemp(prefix="over-time-"))
    bench = work / "bench.py"
    bench.write_text(WORKLOAD)
    env = {**os.environ, "STEADYBENCH_BASELINE_DIR": str(work / "baselines"),
           "XDG_STATE_HOME": str(work / "state")}
    done: list[Pair] = []
    started = time.monotonic()
    load_before = os.getloadavg()[0]
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
        if cmp.returncode not in (0, 1):
            print(f"compare failed: {cmp.stderr[-300:]}")
            continue
        pair = _pair(kind, json.loads(cmp.stdout)["benchmarks"][0], line)
        done.append(pair)
        print(f"pair {i // 2 + 1:2d} {kind:9s} compare: {pair.compare:14s} "
              f"ratio {pair.ratio:.4f} ±{pair.half_width:.1%} (se A {pair.se_base:.2%}, "
              f"B {pair.se_new:.2%}, between-run σ {pair.noise_sigma:.2%} from "
              f"{pair.noise_source}, {pair.noise_runs} runs)  change line: {line}", flush=True)
    minutes = (time.monotonic() - started) / 60
    kinds = [p.kind for p in done]
    print(f"\nreal runs: {kinds.count('identical')} identical and {kinds.count('slower')} "
          f"slower pairs in {minutes:.1f} min, load average "
          f"{load_before:.1f} at the start and {os.getloadavg()[0]:.1f} at the end")
    summarize(done, pairs)
    return done


def summarize(done: list[Pair], pairs: int) -> None:
    """The figures issue 25's Done-when asks for, per way of comparing."""
    same = [p for p in done if p.kind == "identical"]
    slow = [p for p in done if p.kind == "slower"]
    for how in ("compare", "change"):
        name = "compare" if how == "compare" else "change line"
        differ = sum(getattr(p, how) in ("slower", "faster") for p in same)
        found = sum(getattr(p, how) == "slower" for p in slow)
        wrong = sum(getattr(p, how) == "faster" for p in slow)
        missing = sum(getattr(p, how) == "missing" for p in done)
        print(f"  {name:11s}: identical called different {differ} of {len(same)} (target ≤ 1 "
              f"of 20); 5% slower called slower {found} of {len(slow)} (target ≥ 16 of 20); "
              f"wrong direction {wrong} (target 0)" + (f"; no line {missing}" if missing else ""))
    if done:
        widths = sorted(p.half_width for p in done)
        ses = sorted(math.hypot(p.se_base, p.se_new) for p in done)
        print(f"  half-width of compare's 95 % interval: median ±{widths[len(widths) // 2]:.1%} "
              f"(±{widths[0]:.1%} to ±{widths[-1]:.1%}); within-run part √(se_A² + se_B²): "
              f"median {ses[len(ses) // 2]:.2%}; noise sources: " + ", ".join(
                  f"{src} {sum(p.noise_source == src for p in done)}"
                  for src in sorted({p.noise_source for p in done})))


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
          "effect 1 %; targets: a change reported in ≤ 5 % of series without a step, the step "
          "found at its record ±1 in ≥ 90 %)")
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


def _gls_scan(y: np.ndarray, winv: np.ndarray, m: np.ndarray, ms: np.ndarray,
              den: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """δ and t of a step added at every place (rows) for every series (columns of ``y``):
    ``winv`` whitens, ``m`` is the whitened residual maker of the trend, ``ms`` the residuals
    of the whitened step regressors, ``den`` their squared norms."""
    n = y.shape[0]
    yw = winv @ y
    num = ms.T @ yw
    ry = m @ yw
    rss = np.einsum("ib,ib->b", ry, ry)
    s2 = (rss[None, :] - num * num / den[:, None]) / (n - 3)
    return num / den[:, None], num / np.sqrt(den[:, None] * s2)


def oracle(series: int, seed: int = 26) -> None:
    """The best a level-5 % test can do on the same simulated histories, as a bound for part
    2: generalized least squares for one step at every place, with a trend term and the
    *true* noise model (the walk's variance ratio q known: 0, or 0.003²/σ_w² for the walk), σ
    estimated from the series, and the exact 95 % point of the largest |t| over the places
    under that model (simulated). A method that must also estimate q cannot do better."""
    rng = np.random.default_rng(seed)
    # the record-level noise of the simulation: median of 5 executions (2.5 %) plus 1 %
    med = np.median(rng.normal(0.0, 0.025, (200_000, 5)), axis=1)
    white = math.sqrt(float(np.var(med)) + 0.01 ** 2)
    print(f"\noracle bound (record noise {white:.2%}; {series} series per cell): a 5% step "
          "found at its record ±1")
    for n in (30, 100, 200):
        t = np.arange(n)
        steps = (t[:, None] >= np.arange(1, n)[None, :]).astype(float)
        x = np.column_stack([np.ones(n), t.astype(float)])
        row = []
        for kind in ("flat", "drift", "walk"):
            q = (0.003 / white) ** 2 if kind == "walk" else 0.0
            v = np.eye(n) + q * np.minimum.outer(t, t)
            winv = np.linalg.inv(np.linalg.cholesky(v))
            xw, sw = winv @ x, winv @ steps
            m = np.eye(n) - xw @ np.linalg.pinv(xw)
            ms = m @ sw
            den = np.einsum("ik,ik->k", sw, ms)

            null = np.linalg.cholesky(v) @ rng.standard_normal((n, 4000))
            _, tn = _gls_scan(null, winv, m, ms, den)
            crit = float(np.quantile(np.max(np.abs(tn), axis=0), 0.95))
            level = np.zeros((n, series))
            at = rng.integers(n // 4, 3 * n // 4, series)
            if kind == "drift":
                level += np.linspace(0.0, math.log(1.03), n)[:, None]
            elif kind == "walk":
                level += np.cumsum(rng.normal(0.0, 0.003, (n, series)), axis=0)
            level += np.where(t[:, None] >= at[None, :], math.log(1.05), 0.0)
            y = level + rng.normal(0.0, 0.01, (n, series)) + np.median(
                rng.normal(0.0, 0.025, (n, series, 5)), axis=2)
            d, tt = _gls_scan(y, winv, m, ms, den)
            best = np.argmax(np.abs(tt), axis=0)
            cols = np.arange(series)
            ok = ((np.abs(tt[best, cols]) > crit) & (np.abs(best + 1 - at) <= 1)
                  & (np.expm1(d[best, cols]) >= 0.02))
            row.append(f"{kind} {ok.mean():6.1%}")
        print(f"  {n:3d} records: " + ", ".join(row), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=20)
    parser.add_argument("--slowdown", type=float, default=0.05)
    parser.add_argument("--series", type=int, default=200)
    parser.add_argument("--skip-real", action="store_true")
    parser.add_argument("--skip-simulated", action="store_true")
    parser.add_argument("--skip-oracle", action="store_true")
    args = parser.parse_args()
    if not args.skip_real:
        real_pairs(args.pairs, args.slowdown)
    if not args.skip_simulated:
        simulated(args.series)
    if not args.skip_oracle:
        oracle(args.series)


if __name__ == "__main__":
    main()
