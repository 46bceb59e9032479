"""Verdicts across time: how often results taken at different times are called different.

Part 1, real runs on this machine: ``--pairs`` pairs of separate default ``steadybench run``\\ s
of identical code and as many where the second is ``--slowdown`` slower (interleaved), each
compared with ``steadybench compare A.json B.json`` and with the change-since-the-last-run line
(A saved with ``--save-baseline``, B run with ``--baseline``; the kept A runs teach the
between-run noise). Targets (issue 25): identical code called different in ≤ 1 of 20, the 5 %
slowdown called slower in ≥ 16 of 20, never the wrong direction.

Part 1b (``--ab``): the same workload's pairs measured together by ``steadybench ab``, for
the same three figures on the machine as it is at that moment.

Part 2, simulated histories through ``history regressions``' own function
(:func:`steadybench.testing.simulated_history`): records of 5 executions (2.5 % spread), each
record shifted by a run effect (1 %), 1.67 % per record in all (``--record-noise`` scales
both; a default ``run`` on the development VM scattered by 0.88 %, ``docs/comparison.md``);
drift-only series (linear +3 % over the series; random walk 0.3 % per record) and series with a
5 % step. Targets: a reported change in ≤ 5 % of drift-only series; the step found at the
right record ±1 in ≥ 90 %. Each rate with its exact 95 % interval.

Part 3, the oracle bound (:func:`oracle`): how often a level-5 % test that knows the true noise
model finds the same steps; a method that must estimate the model cannot do much better.

Part 4 (``--noise-table``): parts 2 and 3 at several record noises, and a table of the steps
found by each.

    python benchmarks/over_time.py                   # 20 + 20 pairs, 200 simulated series
    python benchmarks/over_time.py --pairs 3 --series 20   # a quick look
    python benchmarks/over_time.py --skip-real             # parts 2 and 3 only
    python benchmarks/over_time.py --skip-real --skip-simulated --skip-oracle --ab  # ab only
    python benchmarks/over_time.py --skip-real --series 400 --false-series 1000 \
        --record-noise 0.0088                              # at this VM's record noise
    python benchmarks/over_time.py --noise-table 0.006,0.0088,0.0125,0.0167,0.025
"""

from __future__ import annotations

import argparse
import dataclasses
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
from _expected import expected_lines

from steadybench.testing import HISTORY_KINDS, HistoryNoise, simulated_history

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
    if "not comparable" in line:
        return "busy"
    if "inconclusive" in line:  # the heavy-tail guard: not called different
        return "inconclusive"
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
    #: the CPU pressure while each run was measured (steadybench.cpu_pressure), if measured
    pressure_base: float | None = None
    pressure_new: float | None = None
    #: the comparison's standard error of ln(BASE/NEW) and its degrees of freedom
    se: float = math.nan
    df: float = math.nan


def _pair(kind: str, row: dict, line: str) -> Pair:
    ci = row.get("speedup_ci") or {}
    between = (((row.get("median_protocol") or {}).get("assumptions") or {})
               .get("between_runs") or {})
    noise = row.get("run_noise") or {}
    low, high = ci.get("low", math.nan), ci.get("high", math.nan)
    return Pair(kind, row["verdict"].replace("no significant difference", "no difference")
                .replace("inconclusive: busy machine", "busy")
                .replace("inconclusive: heavy-tailed noise", "inconclusive"),
                verdict_of_change(line), row["speedup"], (high - low) / 2.0,
                between.get("se_base", math.nan), between.get("se_new", math.nan),
                noise.get("sigma", math.nan), noise.get("source", "?"), noise.get("runs", 0),
                se=between.get("se", math.nan), df=between.get("df", math.nan))


def _pressure(path: Path) -> float | None:
    """The CPU pressure a results file recorded for its (one) benchmark."""
    return json.loads(path.read_text())["benchmarks"][0].get("cpu_pressure")


def _share(value: float | None) -> str:
    return "—" if value is None else f"{value:.0%}"


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
        pair = dataclasses.replace(pair, pressure_base=_pressure(a), pressure_new=_pressure(b))
        done.append(pair)
        print(f"pair {i // 2 + 1:2d} {kind:9s} CPU contended {_share(pair.pressure_base)} / "
              f"{_share(pair.pressure_new)}  compare: {pair.compare:14s} "
              f"ratio {pair.ratio:.4f} ±{pair.half_width:.1%} (se A {pair.se_base:.2%}, "
              f"B {pair.se_new:.2%}, between-run σ {pair.noise_sigma:.2%} from "
              f"{pair.noise_source}, {pair.noise_runs} runs)  change line: {line}", flush=True)
    minutes = (time.monotonic() - started) / 60
    kinds = [p.kind for p in done]
    print(f"\nreal runs: {kinds.count('identical')} identical and {kinds.count('slower')} "
          f"slower pairs in {minutes:.1f} min, load average "
          f"{load_before:.1f} at the start and {os.getloadavg()[0]:.1f} at the end")
    summarize(done, pairs, slowdown)
    return done


def ab_pairs(pairs: int, slowdown: float) -> None:
    """Part 1b (``--ab``): the same workload's pairs measured together, by ``steadybench ab``
    with its defaults (A against a copy of itself, and against B ``slowdown`` slower,
    interleaved), for the same three figures on the machine as it is now."""
    work = Path(tempfile.mkdtemp(prefix="over-time-ab-"))
    files = {}
    for name, scale in (("a", 1.0), ("a_copy", 1.0), ("b", 1.0 + slowdown)):
        files[name] = work / f"{name}.py"
        files[name].write_text(WORKLOAD.replace('float(os.environ.get("OVER_TIME_SCALE", '
                                                '"1.0"))', repr(scale)))
    env = {**os.environ, "XDG_STATE_HOME": str(work / "state")}
    verdicts: dict[str, list[str]] = {"identical": [], "slower": []}
    started = time.monotonic()
    for i in range(2 * pairs):
        kind = "identical" if i % 2 == 0 else "slower"
        out = work / f"ab{i}.json"
        other = files["a_copy"] if kind == "identical" else files["b"]
        proc = steadybench("ab", str(files["a"]), str(other), "--json", str(out), "-q", env=env)
        try:
            doc = json.loads(out.read_text())
        except (OSError, ValueError):
            print(f"ab failed (exit {proc.returncode}): {proc.stderr[-300:]}")
            continue
        result = doc.get("result") or {}
        verdicts[kind].append(str(doc.get("verdict")))
        print(f"ab {i // 2 + 1:2d} {kind:9s} {doc.get('verdict')!s:14s} ratio "
              f"{result.get('ratio', math.nan):.4f} [{result.get('low', math.nan):.4f}, "
              f"{result.get('high', math.nan):.4f}] rounds {result.get('rounds')}", flush=True)
    same, slow = verdicts["identical"], verdicts["slower"]
    print(f"\nab, the same pairs measured together ({(time.monotonic() - started) / 60:.1f} min, "
          f"load average {os.getloadavg()[0]:.1f} at the end): identical called different "
          f"{sum(v in ('slower', 'faster') for v in same)} of {len(same)}; {slowdown:.0%} slower "
          f"called slower {slow.count('slower')} of {len(slow)}; wrong direction "
          f"{slow.count('faster')}")


def summarize(done: list[Pair], pairs: int, slowdown: float = 0.05) -> None:
    """The figures issue 25's Done-when asks for, per way of comparing; then what a test that
    holds its level could be expected to score with the noise these runs showed
    (:mod:`_expected`)."""
    same = [p for p in done if p.kind == "identical"]
    slow = [p for p in done if p.kind == "slower"]
    for how in ("compare", "change"):
        name = "compare" if how == "compare" else "change line"
        differ = sum(getattr(p, how) in ("slower", "faster") for p in same)
        found = sum(getattr(p, how) == "slower" for p in slow)
        wrong = sum(getattr(p, how) == "faster" for p in slow)
        missing = sum(getattr(p, how) == "missing" for p in done)
        busy = sum(getattr(p, how) == "busy" for p in done)
        undecided = sum(getattr(p, how) == "inconclusive" for p in done)
        print(f"  {name:11s}: identical called different {differ} of {len(same)} (target ≤ 1 "
              f"of 20); 5% slower called slower {found} of {len(slow)} (target ≥ 16 of 20); "
              f"wrong direction {wrong} (target 0)" + (f"; no line {missing}" if missing else "")
              + (f"; no verdict, machine busy {busy}" if busy else "")
              + (f"; inconclusive, heavy-tailed noise {undecided}" if undecided else ""))
    if done:
        widths = sorted(p.half_width for p in done)
        ses = sorted(math.hypot(p.se_base, p.se_new) for p in done)
        print(f"  half-width of compare's 95 % interval: median ±{widths[len(widths) // 2]:.1%} "
              f"(±{widths[0]:.1%} to ±{widths[-1]:.1%}); within-run part √(se_A² + se_B²): "
              f"median {ses[len(ses) // 2]:.2%}; noise sources: " + ", ".join(
                  f"{src} {sum(p.noise_source == src for p in done)}"
                  for src in sorted({p.noise_source for p in done})))
        for line in expected_lines([(p.se, p.df) for p in slow], len(same), slowdown):
            print(line)


def _rate(hits: int, trials: int) -> str:
    """``4.5% [3.4, 5.9]``: the rate and its exact (Clopper–Pearson) 95 % interval."""
    from scipy import stats

    low = stats.beta.ppf(0.025, hits, trials - hits + 1) if hits else 0.0
    high = stats.beta.ppf(0.975, hits + 1, trials - hits) if hits < trials else 1.0
    return f"{hits / trials:6.1%} [{low:.1%}, {high:.1%}]"


def simulated(series: int, noise: HistoryNoise, seed: int = 25,
              sizes: tuple[int, ...] = (30, 100, 200), false_series: int | None = None
              ) -> dict[tuple[int, str], float]:
    """Part 2: the rates of ``history regressions``' own function on simulated histories
    (:func:`steadybench.testing.simulated_history`); returns the step-found rate per cell."""
    from steadybench.history.regressions import find_changes

    rng = np.random.default_rng(seed)
    false_series = false_series or series
    print(f"\nsimulated histories ({false_series} series without a step and {series} with one "
          f"per cell; {noise.executions} executions of {noise.spread:.2%}, run effect "
          f"{noise.run_effect:.2%}: record noise {noise.record_sd:.2%}; targets: a change "
          "reported in ≤ 5 % of series without a step, the step found at its record ±1 in "
          "≥ 90 %; exact 95 % intervals)")
    found_rates = {}
    for n in sizes:
        for kind in HISTORY_KINDS:
            false = sum(bool(find_changes(simulated_history(rng, n, kind, noise=noise)).changes)
                        for _ in range(false_series))
            found = 0
            for _ in range(series):
                at = int(rng.integers(n // 4, 3 * n // 4))
                changes = find_changes(simulated_history(rng, n, kind, at, noise=noise)).changes
                found += any(abs(c.index - at) <= 1 and c.direction == "slower"
                             for c in changes)
            found_rates[n, kind] = found / series
            print(f"  {n:3d} records {kind:5s}: change reported in {_rate(false, false_series)} "
                  f"of series without a step; a 5% step found at its record ±1 in "
                  f"{_rate(found, series)}", flush=True)
    return found_rates


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


def oracle(series: int, noise: HistoryNoise, seed: int = 26,
           sizes: tuple[int, ...] = (30, 100, 200)) -> dict[tuple[int, str], float]:
    """The best a level-5 % test can do on the same simulated histories, as a bound for part
    2: generalized least squares for one step at every place, with a trend term and the
    *true* noise model (the walk's variance ratio q known: 0, or 0.003²/σ_w² for the walk), σ
    estimated from the series, and the exact 95 % point of the largest |t| over the places
    under that model (simulated). A method that must also estimate q cannot do better."""
    rng = np.random.default_rng(seed)
    white = noise.record_sd
    print(f"\noracle bound (record noise {white:.2%}; {series} series per cell): a 5% step "
          "found at its record ±1")
    found_rates = {}
    for n in sizes:
        t = np.arange(n)
        steps = (t[:, None] >= np.arange(1, n)[None, :]).astype(float)
        x = np.column_stack([np.ones(n), t.astype(float)])
        row = []
        for kind in HISTORY_KINDS:
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
            at = rng.integers(n // 4, 3 * n // 4, series)
            y = np.column_stack([
                np.log([p.value for p in simulated_history(rng, n, kind, int(a), noise=noise)])
                for a in at])
            d, tt = _gls_scan(y, winv, m, ms, den)
            best = np.argmax(np.abs(tt), axis=0)
            cols = np.arange(series)
            ok = ((np.abs(tt[best, cols]) > crit) & (np.abs(best + 1 - at) <= 1)
                  & (np.expm1(d[best, cols]) >= 0.02))
            found_rates[n, kind] = float(ok.mean())
            row.append(f"{kind} {ok.mean():6.1%}")
        print(f"  {n:3d} records: " + ", ".join(row), flush=True)
    return found_rates


def noise_table(series: int, record_sds: list[float]) -> None:
    """Part 4: the step-found rates of the finder and of the oracle as the record noise
    varies (the shape of :class:`HistoryNoise` kept, scaled to each record noise)."""
    rows = []
    for sd in record_sds:
        noise = HistoryNoise().scaled_to(sd)
        rows.append((sd, simulated(series, noise), oracle(series, noise)))
    print("\n5% steps found at their record ±1, by record noise (finder / oracle):")
    sizes = sorted({n for _, found, _ in rows for n, _ in found})
    print("  record noise | " + " | ".join(f"{n} records flat, drift, walk" for n in sizes))
    for sd, found, bound in rows:
        cells = [", ".join(f"{found[n, k]:.0%}/{bound[n, k]:.0%}" for k in HISTORY_KINDS)
                 for n in sizes]
        print(f"  {sd:11.2%}  | " + " | ".join(cells))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=20)
    parser.add_argument("--slowdown", type=float, default=0.05)
    parser.add_argument("--series", type=int, default=200)
    parser.add_argument("--skip-real", action="store_true")
    parser.add_argument("--skip-simulated", action="store_true")
    parser.add_argument("--skip-oracle", action="store_true")
    parser.add_argument("--ab", action="store_true",
                        help="after the real runs, the same pairs measured together by "
                             "steadybench ab (part 1b)")
    parser.add_argument("--false-series", type=int, default=None,
                        help="series without a step per cell (default: --series)")
    parser.add_argument("--record-noise", type=float, default=None,
                        help="the simulated record noise (default 1.67 %%: the issue's figures)")
    parser.add_argument("--noise-table", type=str, default=None,
                        help="comma-separated record noises: the step-found rates at each")
    args = parser.parse_args()
    noise = HistoryNoise() if args.record_noise is None else HistoryNoise().scaled_to(
        args.record_noise)
    if args.noise_table:
        noise_table(args.series, [float(v) for v in args.noise_table.split(",")])
        return
    if not args.skip_real:
        real_pairs(args.pairs, args.slowdown)
    if args.ab:
        ab_pairs(args.pairs, args.slowdown)
    if not args.skip_simulated:
        simulated(args.series, noise, false_series=args.false_series)
    if not args.skip_oracle:
        oracle(args.series, noise)


if __name__ == "__main__":
    main()
