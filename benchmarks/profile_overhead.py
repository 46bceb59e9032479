"""What ``--profile`` costs, and that it leaves the estimate alone (run: python
benchmarks/profile_overhead.py).

For each workload, ``steadybench run FILE`` is run ``--pairs`` times without and with
``--profile``, the two interleaved pair by pair (so a drift of the machine reaches both), each
in its own process with its own state directory. Printed per workload:

* the extra wall time of the command with ``--profile`` (median over the pairs of the
  difference, with the medians of both): the profiled execution, ``--profile-time`` seconds of
  calls under py-spy plus the process's start-up, set-up and tracemalloc stretch;
* the estimate without and with ``--profile`` (medians over the pairs) and their ratio: the
  profile is an extra execution after the measured ones, so the ratio is 1 up to the
  run-to-run noise, which the spread of the estimates without ``--profile`` shows beside it
  ((max - min) / median over the pairs).

Workloads: a numeric loop, generator-heavy code (many calls and returns), and
``examples/json2csv/convert_a.py`` (JSON decoding, dicts, CSV writing).

Usage: python benchmarks/profile_overhead.py [--pairs N] [--processes K] [--max-time S]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LOOP = '''from steadybench import benchmark


def work(n):
    s = 0
    for i in range(n):
        s += i * i
    return s


@benchmark
def numeric_loop():
    return lambda: work(20_000)
'''
GENERATORS = '''from steadybench import benchmark


def squares(n):
    for i in range(n):
        yield i * i


@benchmark
def generator_sum():
    return lambda: sum(x for x in squares(20_000) if x % 3)
'''


def _run(path: Path, args: list[str], state: str) -> tuple[float, dict]:
    steadybench = Path(sys.executable).with_name("steadybench")
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "r.json"
        started = time.perf_counter()
        subprocess.run([str(steadybench), "run", str(path), "-q", "--json", str(out), *args],
                       check=True, env={**os.environ, "XDG_STATE_HOME": state},
                       cwd=path.parent)
        wall = time.perf_counter() - started
        doc = json.loads(out.read_text())
    return wall, doc


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("--processes", type=int, default=5)
    parser.add_argument("--max-time", type=float, default=0.1)
    parser.add_argument("--profile-time", type=float, default=2.0)
    opts = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        files = {"numeric loop": Path(tmp) / "loop.py", "generators": Path(tmp) / "gen.py",
                 "json2csv (examples/)": ROOT / "examples" / "json2csv" / "convert_a.py"}
        files["numeric loop"].write_text(LOOP)
        files["generators"].write_text(GENERATORS)
        state = str(Path(tmp) / "state")
        common = ["-p", str(opts.processes), "--max-time", str(opts.max_time)]
        print(f"{opts.pairs} pairs of 'steadybench run FILE {' '.join(common)}' without and "
              f"with --profile (--profile-time {opts.profile_time:g})")
        print(f"{'workload':<22} {'wall without':>12} {'with':>8} {'extra':>8} "
              f"{'estimate without':>16} {'with':>10} {'ratio':>6} {'spread':>7}")
        for name, path in files.items():
            walls: dict[bool, list[float]] = {False: [], True: []}
            values: dict[bool, list[float]] = {False: [], True: []}
            for _ in range(opts.pairs):
                for profiled in (False, True):
                    extra = ["--profile", "--profile-time", str(opts.profile_time)] \
                        if profiled else []
                    wall, doc = _run(path, [*common, *extra], state)
                    (case,) = doc["benchmarks"]
                    value = case["estimate"]["value"]
                    walls[profiled].append(wall)
                    values[profiled].append(value)
                    if profiled:
                        assert doc["context"]["profiles"], "no profile in the results"
            extra_wall = statistics.median(w1 - w0 for w0, w1 in zip(walls[False], walls[True],
                                                                      strict=True))
            v0, v1 = statistics.median(values[False]), statistics.median(values[True])
            spread = (max(values[False]) - min(values[False])) / v0
            print(f"{name:<22} {statistics.median(walls[False]):>11.2f}s "
                  f"{statistics.median(walls[True]):>7.2f}s {extra_wall:>+7.2f}s "
                  f"{v0 * 1e3:>13.3f} ms {v1 * 1e3:>7.3f} ms {v1 / v0:>6.3f} "
                  f"{spread:>6.1%}")


if __name__ == "__main__":
    main()
