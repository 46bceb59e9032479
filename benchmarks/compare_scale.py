"""Wall time and peak memory of ``steadybench compare`` and ``steadybench plan`` on large inputs.

Three cases, each run as ``BIN/steadybench ...`` (the project's venv) in a separate process:

* ``compare 1e6`` — ``steadybench compare base.txt new.txt --json out.json -q`` on plain sample
  files (one time per line) of 10^6 values per side: log-normal times (median 1 ms, σ of the
  log 0.1), NEW 1% slower (its median ×1.01). Targets: <= 10 s and <= 1 GB peak RSS.
* ``compare suite`` — 100 benchmarks × 100k samples each, compared with itself. The input is a
  hyperfine-style JSON export ``{"results": [{"command": "bench_i", "times": [...]}, ...]}``
  with 100 entries (steadybench reads hyperfine exports and matches benchmarks by command),
  written once and copied, so BASE and NEW are two files with the same content. Same call as
  above. Target: <= 60 s (peak RSS printed, no target).
* ``plan`` — ``steadybench plan pilot.txt --detect 0.1%`` and ``--detect 1%`` on a 1,000-value
  pilot (log-normal as above). Target: about a second, judged as <= 1.5 s.

Inputs are generated in a temporary directory with a fixed numpy seed (--seed). Each case is run
--repeat times (default 3); the median wall time and the largest peak RSS are judged. Wall time
is the process's, start to exit (``time.perf_counter`` around it); peak RSS is the child's own
``ru_maxrss``, read with ``os.wait4`` on that child (so one case's peak cannot hide behind an
earlier, larger one, as it would with ``getrusage(RUSAGE_CHILDREN)``, a maximum over all
children so far). For scale, the start-up of ``steadybench --help`` is measured the same way and
shown, with the throughput in values per second of wall time. Each case's verdict (compare) or
first output line (plan) is printed as a sanity check: compare 1e6 should find NEW slower, the
suite should find no difference anywhere.

--scale F multiplies the numbers of values (0.01 for a quick try; the targets are for 1).

Usage: python benchmarks/compare_scale.py [--scale F] [--repeat N] [--seed N] [--json PATH]
(run it with the project's interpreter, .venv/bin/python).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

PYTHON = sys.executable
BIN = Path(sys.executable).parent  # the venv's bin directory: steadybench's script is there
GB = 1024**3


def run(cmd: list[str], cwd: Path, timeout: float = 1800) -> dict:
    """Run ``cmd``; its wall time, its own peak RSS (bytes), exit status and output."""
    out, err = cwd / "stdout.txt", cwd / "stderr.txt"
    with open(out, "wb") as fo, open(err, "wb") as fe:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=cwd, stdout=fo, stderr=fe)
        deadline = t0 + timeout
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() > deadline:
                proc.kill()
                pid, status, usage = os.wait4(proc.pid, 0)
                break
            time.sleep(0.002)
        wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here, not by Popen
    return {"wall": wall, "maxrss": usage.ru_maxrss * 1024,  # Linux: kilobytes
            "exit": proc.returncode, "stdout": out.read_text(errors="replace"),
            "stderr": err.read_text(errors="replace")}


def lognormal(rng: np.random.Generator, n: int, median: float) -> np.ndarray:
    return rng.lognormal(np.log(median), 0.1, n)


def write_samples(path: Path, values: np.ndarray) -> None:
    np.savetxt(path, values, fmt="%.9e")


def write_hyperfine(path: Path, rng: np.random.Generator, benchmarks: int, n: int) -> None:
    """A hyperfine-style JSON export: ``benchmarks`` commands with ``n`` times each."""
    with open(path, "w") as f:
        f.write('{"results": [')
        for i in range(benchmarks):
            median = 1e-3 * (1 + i / 10)  # 1 ms .. 10.9 ms
            times = lognormal(rng, n, median)
            f.write(("," if i else "") + f'\n{{"command": "bench_{i}", "times": [')
            f.write(",".join(f"{x:.9e}" for x in times.tolist()))
            f.write("]}")
        f.write("\n]}\n")


def verdicts(path: Path) -> dict[str, int]:
    """How many benchmarks of a compare JSON got each verdict."""
    try:
        doc = json.loads(path.read_text())
        counts: dict[str, int] = {}
        for row in doc["benchmarks"]:
            counts[row["verdict"]] = counts.get(row["verdict"], 0) + 1
        return counts
    except (OSError, ValueError, KeyError, TypeError) as exc:
        return {f"unreadable JSON ({type(exc).__name__})": 1}


def fmt_bytes(n: float) -> str:
    for scale, unit in ((GB, "GB"), (1024**2, "MB")):
        if n >= scale:
            return f"{n / scale:.2f} {unit}"
    return f"{n / 1024:.0f} kB"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0,
                        help="multiply the numbers of values (default 1; 0.01 to try)")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each case (default 3)")
    parser.add_argument("--seed", type=int, default=12345, help="numpy seed of the inputs")
    parser.add_argument("--json", type=Path, default=None, help="save the raw figures here")
    args = parser.parse_args()
    if args.repeat < 1 or args.scale <= 0:
        parser.error("--repeat must be >= 1 and --scale > 0")
    steadybench = BIN / "steadybench"
    if not steadybench.exists():
        print(f"steadybench is not installed in {BIN}", file=sys.stderr)
        return 1
    sys.stdout.reconfigure(line_buffering=True)

    n_plain = max(10, round(1_000_000 * args.scale))
    n_suite = max(10, round(100_000 * args.scale))
    n_pilot = 1000
    print(f"Python {platform.python_version()} ({PYTHON}), {platform.machine()}, "
          f"{os.cpu_count()} CPUs, numpy seed {args.seed}, scale {args.scale:g}, "
          f"{args.repeat} run(s) per case")
    print("wall: process start to exit; peak RSS: the child's ru_maxrss via os.wait4")

    results: dict = {"python": platform.python_version(), "machine": platform.machine(),
                     "seed": args.seed, "scale": args.scale, "repeat": args.repeat,
                     "cases": {}}
    with tempfile.TemporaryDirectory(prefix="sb-cmpscale-") as d:
        tmp = Path(d)
        rng = np.random.default_rng(args.seed)
        t0 = time.perf_counter()
        write_samples(tmp / "base.txt", lognormal(rng, n_plain, 1e-3))
        write_samples(tmp / "new.txt", lognormal(rng, n_plain, 1.01e-3))
        write_hyperfine(tmp / "suite_base.json", rng, 100, n_suite)
        shutil.copyfile(tmp / "suite_base.json", tmp / "suite_new.json")
        write_samples(tmp / "pilot.txt", lognormal(rng, n_pilot, 1e-3))
        print(f"inputs generated in {time.perf_counter() - t0:.1f} s: base/new.txt "
              f"{(tmp / 'base.txt').stat().st_size / 1e6:.0f} MB each, suite JSON "
              f"{(tmp / 'suite_base.json').stat().st_size / 1e6:.0f} MB each")

        sb = str(steadybench)
        cases = [
            # name, command, values read, target seconds, target bytes, expected outcome
            ("startup (--help)", [sb, "--help"], 0, None, None, None),
            (f"compare {n_plain:,}/side",
             [sb, "compare", "base.txt", "new.txt", "--json", "out_plain.json", "-q"],
             2 * n_plain, 10.0, 1 * GB, "out_plain.json"),
            (f"compare 100x{n_suite:,} self",
             [sb, "compare", "suite_base.json", "suite_new.json", "--json", "out_suite.json",
              "-q"], 2 * 100 * n_suite, 60.0, None, "out_suite.json"),
            ("plan --detect 0.1%", [sb, "plan", "pilot.txt", "--detect", "0.1%"], n_pilot,
             1.5, None, "stdout"),
            ("plan --detect 1%", [sb, "plan", "pilot.txt", "--detect", "1%"], n_pilot,
             1.5, None, "stdout"),
        ]
        ok_all = True
        for name, cmd, n_values, _, _, outcome in cases:
            runs = []
            for r in range(args.repeat):
                res = run(cmd, tmp)
                runs.append(res)
                print(f"  {name} run {r + 1}/{args.repeat}: {res['wall']:.2f} s, "
                      f"{fmt_bytes(res['maxrss'])}, exit {res['exit']}", file=sys.stderr)
                if res["exit"] != 0:
                    break
            last = runs[-1]
            record = {"command": cmd, "values": n_values,
                      "wall": [x["wall"] for x in runs], "maxrss": [x["maxrss"] for x in runs],
                      "exit": [x["exit"] for x in runs]}
            if last["exit"] != 0:
                tail = "\n".join((last["stdout"] + last["stderr"]).strip().splitlines()[-10:])
                record["error"] = tail
                print(f"\n{name}: FAILED (exit {last['exit']}): {' '.join(cmd)}\n{tail}")
                results["cases"][name] = record
                ok_all = False
                continue
            if outcome == "stdout":
                record["outcome"] = (last["stdout"].strip().splitlines() or [""])[-1].strip()
            elif outcome is not None:
                record["outcome"] = verdicts(tmp / outcome)
            results["cases"][name] = record
        print_table(results["cases"], cases)
        results["met"] = ok_all and all(c.get("met", True) for c in results["cases"].values())
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")
        print(f"\nraw figures written to {args.json}")
    return 0


def print_table(records: dict, cases: list) -> None:
    print()
    header = (f"{'case':<26} {'wall (median)':>13} {'target':>8} {'':>7} {'peak RSS':>10} "
              f"{'target':>7} {'':>7} {'values/s':>9}")
    print(header)
    print("-" * len(header))
    startup = None
    for name, _, n_values, t_target, m_target, _ in cases:
        rec = records.get(name)
        if rec is None or "error" in rec:
            print(f"{name:<26} {'failed':>13}")
            continue
        wall = statistics.median(rec["wall"])
        peak = max(rec["maxrss"])
        if startup is None:
            startup = wall
        t_ok = None if t_target is None else wall <= t_target
        m_ok = None if m_target is None else peak <= m_target
        rec["met"] = all(x is not False for x in (t_ok, m_ok))
        rate = f"{n_values / wall:9.2g}" if n_values else ""
        print(f"{name:<26} {wall:>11.2f} s "
              f"{'' if t_target is None else f'<= {t_target:g}s':>8} "
              f"{'' if t_ok is None else 'MET' if t_ok else 'NOT met':>7} "
              f"{fmt_bytes(peak):>10} {'' if m_target is None else '<= 1GB':>7} "
              f"{'' if m_ok is None else 'MET' if m_ok else 'NOT met':>7} {rate}")
    print("(plan: 'about a second' judged as <= 1.5 s; values/s: values read per second of wall "
          "time, start-up included)")
    if startup is not None:
        print(f"start-up of steadybench (--help): {startup:.2f} s")
    print("\noutcomes (sanity: compare 1e6 should find NEW slower, the suite no difference):")
    for name, rec in records.items():
        if "outcome" in rec:
            print(f"  {name:<26} {rec['outcome']}")


if __name__ == "__main__":
    sys.exit(main())
