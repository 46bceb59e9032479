"""Measure the same commands with ``steadybench exec`` and with hyperfine, in one run.

For each command both tools make the same number of runs (after the same warm-up), without a
shell (hyperfine ``-N``, steadybench's default). Printed per command and tool: the mean, the
standard deviation, the median, and the wall time the tool took in total (start-up, calibration
and reporting included). steadybench's mean is shown corrected for process start-up (its
default) and raw; hyperfine with ``-N`` does not correct, so its mean compares with the raw one.

Usage: python benchmarks/vs_hyperfine.py [--runs N] [--warmup N]
(needs ``hyperfine`` on PATH: ``apt-get install -y hyperfine``; a C compiler for the C example).
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def fmt(seconds: float | None) -> str:
    if seconds is None:
        return "—"
    for scale, unit in ((1.0, "s"), (1e-3, "ms"), (1e-6, "µs")):
        if abs(seconds) >= scale:
            return f"{seconds / scale:.3f} {unit}"
    return f"{seconds * 1e9:.0f} ns"


def commands(tmp: Path) -> list[list[str]]:
    cmds = [["true"], ["sleep", "0.01"], [sys.executable, "-S", "-c", "pass"]]
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc:
        exe = tmp / "example_busy"
        subprocess.run([cc, "-O2", "-I", str(ROOT / "contrib" / "c"), "-o", str(exe),
                        str(ROOT / "contrib" / "c" / "example_busy.c")], check=True)
        cmds.append([str(exe), "1000", "5"])  # 1000 iterations of 5 µs: about 5 ms
    return cmds


def run_steadybench(cmd: list[str], runs: int, warmup: int, tmp: Path) -> dict:
    out = tmp / "sb.json"
    steadybench = [sys.executable, "-c", "import sys; from steadybench.cli import main; "
                   "sys.exit(main(sys.argv[1:]))"]
    t0 = time.perf_counter()
    subprocess.run([*steadybench, "exec", "-q", "--runs", str(runs), "--warmup", str(warmup),
                    "--json", str(out), "--", *cmd], check=True)
    took = time.perf_counter() - t0
    case = json.loads(out.read_text())["benchmarks"][0]
    return {"mean": case["stats"]["mean"], "stdev": case["stats"]["stdev"],
            "median": case["stats"]["median"], "raw_mean": case["estimate"]["raw_mean"],
            "took": took}


def run_hyperfine(cmd: list[str], runs: int, warmup: int, tmp: Path) -> dict:
    out = tmp / "hf.json"
    t0 = time.perf_counter()
    subprocess.run(["hyperfine", "-N", "--style", "none", "--runs", str(runs), "--warmup",
                    str(warmup), "--export-json", str(out), " ".join(cmd)], check=True,
                   stdout=subprocess.DEVNULL)
    took = time.perf_counter() - t0
    r = json.loads(out.read_text())["results"][0]
    return {"mean": r["mean"], "stdev": r["stddev"], "median": r["median"], "raw_mean": r["mean"],
            "took": took}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--warmup", type=int, default=5)
    args = parser.parse_args()
    if shutil.which("hyperfine") is None:
        print("hyperfine is not installed (apt-get install -y hyperfine)", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        header = (f"{'command':<34} {'tool':<12} {'mean':>11} {'raw mean':>11} {'stdev':>11} "
                  f"{'median':>11} {'wall taken':>11}")
        print(f"{args.runs} runs after {args.warmup} warm-up runs, no shell\n")
        print(header)
        print("-" * len(header))
        for cmd in commands(tmp):
            label = " ".join(Path(c).name if i == 0 else c for i, c in enumerate(cmd))[:34]
            for tool, fn in (("steadybench", run_steadybench), ("hyperfine", run_hyperfine)):
                r = fn(cmd, args.runs, args.warmup, tmp)
                print(f"{label:<34} {tool:<12} {fmt(r['mean']):>11} {fmt(r['raw_mean']):>11} "
                      f"{fmt(r['stdev']):>11} {fmt(r['median']):>11} {r['took']:>10.2f}s")
    print("\nsteadybench 'mean' is corrected for process start-up; hyperfine -N does not "
          "correct (its mean is raw).")
    return 0


if __name__ == "__main__":
    sys.exit(main())
