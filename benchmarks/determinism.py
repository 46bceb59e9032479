"""How reproducible counts are across invocations, next to time (issue 26, "Done when").

Workloads (each a short-form benchmark file generated here; the decorated function is the
set-up and returns ``work``):

* ``loop40`` — ``x = 0; for i in range(40): x += i``;
* ``sorted1000`` — ``sorted(data)`` of 1,000 reversed ints;
* ``sorted1010`` — the same with 1,010 ints (about 1 % more work), counted only;
* ``sorted1000-copy`` — a copy of the ``sorted1000`` file in another directory, counted only.

N rounds (--invocations, default 10); each round runs, in a shuffled order, as separate
processes: ``steadybench run FILE --measure instructions`` for every workload,
``steadybench run FILE`` (time) and ``python -m pyperf timeit --fast`` for ``loop40`` and
``sorted1000``. Printed per workload and tool: the mean headline, its coefficient of variation
across the N invocations and the mean wall time per invocation; the target is an instructions
CoV ≤ 0.01 % (at least 100× below both time CoVs) at ≤ 20 s per benchmark.

Then the verdicts on counts, per round: ``sorted1000`` against ``sorted1010`` (expected
"different") and against ``sorted1000-copy`` (expected "same"). The rule: different when the
counts per call differ by more than :data:`SAME_WITHIN` (0.1 %, ten times the CoV target); the
line prints how many of the N pairs got the expected verdict (target: N of N both ways).

Usage: .venv/bin/python benchmarks/determinism.py [--invocations N] [--seed S] [--json PATH]
       [--measures instructions,time,pyperf]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

#: counts closer than this (relative) are called the same
SAME_WITHIN = 0.001

BENCH = """\
import steadybench


@steadybench.benchmark
def {name}():
{setup}
    return work
"""
WORKLOADS = {
    "loop40": "    def work():\n        x = 0\n        for i in range(40):\n            x += i\n",
    "sorted1000": "    data = list(range(1000))[::-1]\n\n    def work():\n        sorted(data)\n",
    "sorted1010": "    data = list(range(1010))[::-1]\n\n    def work():\n        sorted(data)\n",
}


def steadybench_value(file: Path, measure: str, out: Path) -> tuple[float, float]:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "steadybench", "run", str(file), "-q", "--measure",
                    measure, "--json", str(out)], check=True, capture_output=True)
    wall = time.perf_counter() - start
    value = json.loads(out.read_text())["benchmarks"][0]["estimate"]["value"]
    return float(value), wall


def pyperf_value(setup: str, out: Path) -> tuple[float, float]:
    out.unlink(missing_ok=True)
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "pyperf", "timeit", "--fast", "--quiet", "-o", str(out),
                    "-s", setup, "work()"], check=True, capture_output=True)
    wall = time.perf_counter() - start
    import pyperf

    return pyperf.Benchmark.load(str(out)).mean(), wall


def cov(values: list[float]) -> float:
    return statistics.stdev(values) / statistics.fmean(values) if len(values) > 1 else 0.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--invocations", type=int, default=10)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--measures", default="instructions,time,pyperf",
                        help="which of instructions, time, pyperf to run (default: all)")
    args = parser.parse_args()
    if shutil.which("valgrind") is None:
        print("valgrind is not installed (apt-get install valgrind)", file=sys.stderr)
        return 2
    have_pyperf = importlib.util.find_spec("pyperf") is not None
    if not have_pyperf:
        print("pyperf is not installed (pip install -e '.[bench]'): skipped", file=sys.stderr)
    rng = random.Random(args.seed)
    work = Path(tempfile.mkdtemp(prefix="determinism-"))
    files = {}
    for name, setup in WORKLOADS.items():
        files[name] = work / f"{name}.py"
        files[name].write_text(BENCH.format(name=name.replace("-", "_"), setup=setup))
    (work / "copy").mkdir()
    files["sorted1000-copy"] = work / "copy" / "sorted1000.py"
    shutil.copy(files["sorted1000"], files["sorted1000-copy"])
    setups = {n: "def _f():\n" + WORKLOADS[n] + "    return work\nwork = _f()"
              for n in ("loop40", "sorted1000")}
    wanted = {m.strip() for m in args.measures.split(",")}
    unknown = wanted - {"instructions", "time", "pyperf"}
    if unknown or "instructions" not in wanted:
        parser.error("--measures: instructions plus any of time, pyperf")
    jobs = [(n, "instructions") for n in files]
    if "time" in wanted:
        jobs += [(n, "time") for n in setups]
    if have_pyperf and "pyperf" in wanted:
        jobs += [(n, "pyperf") for n in setups]
    got: dict[tuple[str, str], list[tuple[float, float]]] = {job: [] for job in jobs}
    env_note = os.environ.get("XDG_STATE_HOME")
    for r in range(args.invocations):
        order = jobs[:]
        rng.shuffle(order)
        for name, tool in order:
            out = work / f"out-{tool}.json"
            if tool == "pyperf":
                got[(name, tool)].append(pyperf_value(setups[name], out))
            else:
                got[(name, tool)].append(steadybench_value(files[name], tool, out))
        print(f"round {r + 1}/{args.invocations} done", file=sys.stderr, flush=True)
    print(f"{'workload':16} {'tool':24} {'mean':>16} {'CoV':>10} {'wall/inv':>9}")
    summary = {}
    for (name, tool), pairs in got.items():
        values = [v for v, _ in pairs]
        label = {"instructions": "steadybench instructions", "time": "steadybench time",
                 "pyperf": "pyperf timeit --fast"}[tool]
        mean = statistics.fmean(values)
        shown = f"{mean:,.1f}" if tool == "instructions" else f"{mean * 1e9:,.1f} ns"
        c, wall = cov(values), statistics.fmean(w for _, w in pairs)
        summary[f"{name}/{tool}"] = {"values": values, "cov": c, "wall": wall}
        print(f"{name:16} {label:24} {shown:>16} {c:>9.4%} {wall:>8.1f}s")
    for name in setups:
        counts = summary[f"{name}/instructions"]
        others = [summary[f"{name}/{t}"]["cov"] for t in ("time", "pyperf") if
                  f"{name}/{t}" in summary]
        ok = counts["cov"] <= 1e-4 and counts["wall"] <= 20 and all(
            counts["cov"] * 100 <= o for o in others)
        print(f"{name}: instructions CoV {counts['cov']:.4%} at {counts['wall']:.1f} s per "
              f"invocation; time CoVs {', '.join(f'{o:.3%}' for o in others)}: target "
              f"{'met' if ok else 'NOT met'}")
    base = summary["sorted1000/instructions"]["values"]

    def verdicts(other: str) -> list[bool]:
        return [abs(b / a - 1) > SAME_WITHIN
                for a, b in zip(base, summary[f"{other}/instructions"]["values"], strict=True)]

    different = sum(verdicts("sorted1010"))
    same = sum(not d for d in verdicts("sorted1000-copy"))
    n = args.invocations
    ratio = statistics.fmean(summary["sorted1010/instructions"]["values"]) / statistics.fmean(base)
    print(f"sorted 1,000 vs 1,010 (counts {ratio - 1:+.2%}): called different in "
          f"{different}/{n} pairs; two copies of one file called the same in {same}/{n} "
          f"(rule: different beyond {SAME_WITHIN:.1%})")
    if args.json:
        args.json.write_text(json.dumps({"summary": summary, "different": different,
                                         "same": same, "invocations": n,
                                         "state_home": env_note}, indent=1))
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
