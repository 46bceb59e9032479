"""Run-to-run reproducibility of the headline figure of four benchmarking tools, side by side.

steadybench, pyperf, timeit and pytest-benchmark are measured in one run on one machine.

Each tool times the same code: a set-up (not timed) defines a function ``work`` and the tool
measures calls of ``work()``. Two workloads:

* ``loop40`` — a loop of 40 additions (about 1.4 µs): ``x = 0; for i in range(40): x += i``;
* ``sorted1000`` — ``sorted(data)`` of 1,000 reversed ints (about 8 µs), ``data`` built in the
  set-up.

Each tool is invoked as a separate process, with its defaults, and reports one headline figure
(seconds per call of ``work``):

* steadybench — ``steadybench run FILE --json OUT -q`` on a generated short-form file (the
  decorated function is the set-up and returns ``work``); headline
  ``benchmarks[0]["estimate"]["value"]`` of the JSON;
* pyperf — ``python -m pyperf timeit --fast -s SETUP "work()" -o OUT --quiet``; headline the mean
  of all values of its worker processes, ``pyperf.Benchmark.load(OUT).mean()``;
* timeit — ``python -m timeit -s SETUP "work()"``; headline its "best of N: X per loop" figure
  (the fastest of N repeats, each an average over the loops), parsed from its output;
* pytest-benchmark — ``python -m pytest --benchmark-json=OUT`` on a generated test file that
  calls ``benchmark(work)``; headline the **mean** of the rounds (``stats.mean`` in the JSON,
  the figure its OPS column is derived from); min and median are kept in the --json output.

A fifth entry, ``one process``, is a reference rather than a tool: one Python process with a
fixed memory layout (hash seed 0, address-space randomisation off with ``setarch -R``) times
``work`` for 3 s, about steadybench's time, and reports the median time per call. Its CoV across
invocations is what one uninterrupted 3-s measurement repeats to on this machine in the same
rounds, where steadybench spreads its 3 s over 25 processes. (It is not a floor: a process's
physical memory still differs from one run to the next. ``drift.py`` measures the machine's own
drift, in one process that never restarts.)

For each workload there are N rounds (--invocations); round r runs every tool once, in a
shuffled order, so that drift of the machine (heat, frequency, background load) hits all tools
alike. For each invocation the headline and the invocation's wall time (process start to exit)
are recorded. Printed per workload and tool: the mean headline, its coefficient of variation
across invocations (sample standard deviation / mean), the mean wall time per invocation, and
the ratios of steadybench to pyperf for both, with whether the target "steadybench's CoV at most
half of pyperf's, at no more wall time" is met. A tool that is not installed is skipped, with a
message (pyperf and pytest-benchmark: ``pip install -e '.[bench]'``).

Usage: python benchmarks/reproducibility.py [--invocations N] [--workloads loop40,sorted1000]
       [--tools steadybench,pyperf,timeit,pytest-benchmark] [--seed N] [--json PATH]
(run it with the project's interpreter, .venv/bin/python: the tools are run from its venv).
"""

from __future__ import annotations

import argparse
import functools
import importlib.util
import json
import os
import platform
import random
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from array import array
from pathlib import Path

from _common import available, compile_steadybench, parse_list, save_json

PYTHON = sys.executable
BIN = Path(sys.executable).parent  # the venv's bin directory: steadybench's script is there

WORKLOADS = {
    "loop40": (
        "loop of 40 additions (~1.4 µs)",
        "def work():\n"
        "    x = 0\n"
        "    for i in range(40):\n"
        "        x += i\n",
    ),
    "sorted1000": (
        "sorted() of 1,000 reversed ints (~8 µs)",
        "data = list(range(1000))[::-1]\n"
        "\n"
        "def work():\n"
        "    return sorted(data)\n",
    ),
}

TIMEIT_UNITS = {"nsec": 1e-9, "usec": 1e-6, "msec": 1e-3, "sec": 1.0}


def fmt(seconds: float) -> str:
    for scale, unit in ((1.0, "s"), (1e-3, "ms"), (1e-6, "µs")):
        if abs(seconds) >= scale:
            return f"{seconds / scale:.3f} {unit}"
    return f"{seconds * 1e9:.1f} ns"


def invoke(cmd: list[str], cwd: Path) -> tuple[str, float]:
    """Run one tool invocation; return its standard output and its wall time in seconds."""
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-15:])
        raise RuntimeError(f"{' '.join(cmd)} exited with {proc.returncode}:\n{tail}")
    return proc.stdout, wall


SAMPLE_SECONDS = 1e-3
ONE_PROCESS_SECONDS = 3.0  # about steadybench's wall time per invocation

# The probe: it calibrates a loop count so that one sample lasts about SAMPLE_SECONDS, warms up
# for half a second, then writes (start time, seconds per call) pairs as raw doubles to stdout.
PROBE = """\
import sys, time
from array import array
{setup}
duration, target = float(sys.argv[1]), float(sys.argv[2])
clock = time.perf_counter
loops = 1
while True:
    t0 = clock()
    for _ in range(loops):
        work()
    if clock() - t0 >= target:
        break
    loops *= 2
end = clock() + 0.5
while clock() < end:
    work()
out = array("d")
start = clock()
end = start + duration
while True:
    t0 = clock()
    if t0 >= end:
        break
    for _ in range(loops):
        work()
    out.append(t0 - start)
    out.append((clock() - t0) / loops)
sys.stdout.buffer.write(out.tobytes())
"""


def probe(setup: str, seconds: float, fixed_layout: bool = False) -> list[tuple[float, float]]:
    """Run the probe for ``seconds``; return its (start time, seconds per call) samples.

    With ``fixed_layout`` the process runs with hash seed 0 and, where ``setarch`` is found, with
    address-space randomisation off, so that every run of it has the same memory layout.
    """
    cmd = [PYTHON, "-c", PROBE.format(setup=setup), str(seconds), str(SAMPLE_SECONDS)]
    env = None
    if fixed_layout:
        env = {**os.environ, "PYTHONHASHSEED": "0"}
        if shutil.which("setarch"):
            cmd = ["setarch", platform.machine(), "-R", *cmd]
    proc = subprocess.run(cmd, capture_output=True, check=False, env=env)
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr.decode(errors="replace").strip().splitlines()[-1])
    values = array("d")
    values.frombytes(proc.stdout)
    return list(zip(values[0::2], values[1::2]))


# Each runner takes the workload's set-up code, a fresh file stem and the working directory, and
# returns (headline in seconds, wall time in seconds, extra figures for the --json output).


def run_steadybench(setup: str, stem: str, tmp: Path,
                    options: tuple[str, ...] = ()) -> tuple[float, float, dict]:
    bench = tmp / f"bench_{stem}.py"
    bench.write_text("import steadybench\n\n\n@steadybench.benchmark\ndef work_factory():\n"
                     + textwrap.indent(setup, "    ") + "    return work\n")
    out = tmp / f"{stem}.json"
    _, wall = invoke([str(BIN / "steadybench"), "run", str(bench), "--json", str(out), "-q",
                        *options], tmp)
    estimate = json.loads(out.read_text())["benchmarks"][0]["estimate"]
    extra = {k: estimate.get(k) for k in ("statistic", "method", "n_runs", "ci_low", "ci_high",
                                          "between_cov", "within_cov")}
    extra["execution_values"] = (estimate.get("fields") or {}).get("execution_values")
    return estimate["value"], wall, extra


def run_pyperf(setup: str, stem: str, tmp: Path) -> tuple[float, float, dict]:
    import pyperf

    out = tmp / f"{stem}.json"  # pyperf refuses to overwrite: a fresh name each time
    _, wall = invoke([PYTHON, "-m", "pyperf", "timeit", "--fast", "--quiet", "-o", str(out),
                      "-s", setup, "work()"], tmp)
    bench = pyperf.Benchmark.load(str(out))
    return bench.mean(), wall, {"n_values": bench.get_nvalue(), "stdev": bench.stdev()}


def run_timeit(setup: str, stem: str, tmp: Path) -> tuple[float, float, dict]:
    stdout, wall = invoke([PYTHON, "-m", "timeit", "-s", setup, "work()"], tmp)
    m = re.search(r"(\d+) loops?, best of (\d+): ([\d.]+) (nsec|usec|msec|sec) per loop", stdout)
    if m is None:
        raise RuntimeError(f"cannot parse timeit's output: {stdout!r}")
    loops, repeats, value, unit = m.groups()
    return (float(value) * TIMEIT_UNITS[unit], wall,
            {"loops": int(loops), "repeats": int(repeats)})


def run_pytest_benchmark(setup: str, stem: str, tmp: Path) -> tuple[float, float, dict]:
    test = tmp / f"test_{stem}.py"
    test.write_text("def test_work(benchmark):\n" + textwrap.indent(setup, "    ")
                    + "    benchmark(work)\n")
    (tmp / "pytest.ini").write_text("[pytest]\n")  # keep the project's pytest config out
    out = tmp / f"{stem}.json"
    _, wall = invoke([PYTHON, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                      f"--benchmark-json={out}", str(test)], tmp)
    stats = json.loads(out.read_text())["benchmarks"][0]["stats"]
    extra = {k: stats[k] for k in ("min", "median", "stddev", "rounds", "iterations")}
    return stats["mean"], wall, extra


def run_one_process(setup: str, stem: str, tmp: Path) -> tuple[float, float, dict]:
    """The reference: one fixed-layout process timing ``work`` for ONE_PROCESS_SECONDS."""
    t0 = time.perf_counter()
    samples = probe(setup, ONE_PROCESS_SECONDS, fixed_layout=True)
    wall = time.perf_counter() - t0
    return (statistics.median(v for _, v in samples), wall,
            {"samples": len(samples), "aslr_off": shutil.which("setarch") is not None})


TOOLS = {
    # name: (runner, headline statistic, module needed in this interpreter or None)
    "steadybench": (run_steadybench, "estimate.value", None),
    "pyperf": (run_pyperf, "mean", "pyperf"),
    "timeit": (run_timeit, "best of N", None),
    "pytest-benchmark": (run_pytest_benchmark, "mean", "pytest_benchmark"),
    "one process": (run_one_process, "median", None),
}


def missing(tool: str) -> str | None:
    """Why ``tool`` cannot run here, or None."""
    module = TOOLS[tool][2]
    if module is not None and importlib.util.find_spec(module) is None:
        return f"{tool} is not installed (pip install -e '.[bench]')"
    if tool == "steadybench" and not (BIN / "steadybench").exists():
        return f"steadybench is not installed in {BIN}"
    return None


def cov(values: list[float]) -> float:
    return statistics.stdev(values) / statistics.fmean(values) if len(values) > 1 else float("nan")


def summarize(figures: dict[str, dict]) -> dict[str, dict]:
    summary = {tool: {"mean": statistics.fmean(f["headline"]), "cov": cov(f["headline"]),
                      "wall": statistics.fmean(f["wall"])}
               for tool, f in figures.items()}
    if "steadybench" in figures:  # its defaults may change; a CoV across changes means little
        settings = [f"method {e['method']}, statistic {e['statistic']}"
                    for e in figures["steadybench"]["extra"]]
        summary["steadybench"]["settings"] = list(dict.fromkeys(settings))
    return summary


def print_table(name: str, description: str, summary: dict[str, dict], n: int) -> None:
    print(f"\n{name}: {description}, {n} invocations per tool")
    header = f"{'tool':<24} {'headline':<15} {'mean headline':>14} {'CoV':>8} {'wall/inv.':>10}"
    print(header)
    print("-" * len(header))
    for tool, s in summary.items():
        print(f"{tool:<24} {TOOLS[tool][1]:<15} {fmt(s['mean']):>14} {s['cov'] * 100:>7.2f}% "
              f"{s['wall']:>9.2f}s")
    if len(summary.get("steadybench", {}).get("settings", [])) > 1:
        print("warning: steadybench's method or statistic changed between invocations: "
              + "; ".join(summary["steadybench"]["settings"]))
    sb, pp = summary.get("steadybench"), summary.get("pyperf")
    if sb is None or pp is None:
        print("target: not judged (needs both steadybench and pyperf)")
        return
    cov_ratio = sb["cov"] / pp["cov"] if pp["cov"] > 0 else float("inf")
    wall_ratio = sb["wall"] / pp["wall"]
    met = cov_ratio <= 0.5 and wall_ratio <= 1.0
    print(f"steadybench / pyperf: CoV {cov_ratio:.2f}x, wall {wall_ratio:.2f}x")
    print(f"target (steadybench CoV <= 0.5 x pyperf's at no more wall time): "
          f"{'MET' if met else 'NOT met'}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--invocations", type=int, default=10,
                        help="invocations of each tool per workload (default 10)")
    parser.add_argument("--workloads", type=lambda v: parse_list(v, WORKLOADS),
                        default=list(WORKLOADS), help="comma-separated subset of workloads")
    parser.add_argument("--tools", type=lambda v: parse_list(v, TOOLS), default=list(TOOLS),
                        help="comma-separated subset of tools")
    parser.add_argument("--seed", type=int, default=None, help="seed of the shuffled order")
    parser.add_argument("--json", type=Path, default=None, help="save the raw figures here")
    parser.add_argument("--variant", action="append", default=[], metavar="OPTIONS",
                        help="also run steadybench with these options, as a tool of its own "
                             "(e.g. '-p 20'; repeatable); the target is judged on the defaults")
    args = parser.parse_args()
    compile_steadybench()  # as an installed copy has it (see _common.py)
    for options in args.variant:
        name = f"steadybench {options}"
        TOOLS[name] = (functools.partial(run_steadybench, options=tuple(shlex.split(options))),
                       "estimate.value", None)
        args.tools.append(name)
    if args.invocations < 2:
        parser.error("--invocations must be at least 2 (a CoV needs two values)")

    tools = available(args.tools, missing)
    if not tools:
        print("no tool to run", file=sys.stderr)
        return 1
    sys.stdout.reconfigure(line_buffering=True)  # tables and progress (stderr) in order
    seed = args.seed if args.seed is not None else random.randrange(2**32)
    rng = random.Random(seed)

    print(f"Python {platform.python_version()} ({PYTHON}), {platform.machine()}, "
          f"shuffle seed {seed}")

    results: dict = {"python": platform.python_version(), "machine": platform.machine(),
                     "invocations": args.invocations, "seed": seed, "workloads": {}}
    with tempfile.TemporaryDirectory(prefix="sb-repro-") as d:
        tmp = Path(d)
        for workload in args.workloads:
            description, setup = WORKLOADS[workload]
            figures = {t: {"statistic": TOOLS[t][1], "headline": [], "wall": [], "extra": []}
                       for t in tools}
            order = []
            for r in range(args.invocations):
                round_tools = rng.sample(tools, len(tools))
                order.append(round_tools)
                for tool in round_tools:
                    try:
                        headline, wall, extra = TOOLS[tool][0](setup, f"{tool}_{workload}_{r}",
                                                               tmp)
                    except RuntimeError as exc:
                        print(f"{workload}: {tool} failed in round {r + 1}: {exc}",
                              file=sys.stderr)
                        return 1
                    figures[tool]["headline"].append(headline)
                    figures[tool]["wall"].append(wall)
                    figures[tool]["extra"].append(extra)
                    print(f"  {workload} round {r + 1}/{args.invocations} {tool:<24} "
                          f"{fmt(headline):>11}  {wall:6.2f}s", file=sys.stderr)
            summary = summarize(figures)
            print_table(workload, description, summary, args.invocations)
            results["workloads"][workload] = {"description": description, "setup": setup,
                                              "order": order, "tools": figures,
                                              "summary": summary}
    save_json(args.json, results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
