"""Start-up time of ``steadybench`` next to Python's (run: python benchmarks/startup.py).

Each command is started afresh ``--runs`` times (default 15), the commands interleaved run by
run so that a drift of the machine reaches all of them alike, after one unmeasured warm-up run
each; its wall time is measured from start to exit. Printed per command: the median, the
minimum, the ratio of the median to ``python -c pass`` and the difference of the medians.

``steadybench`` is the script next to ``sys.executable`` (the virtual environment's), and
``python`` is ``sys.executable`` itself; ``python -m pyperf --help`` is shown for reference when
pyperf is importable. The command line imports numpy, scipy, rich, matplotlib and jinja2 only
inside the commands that use them, so ``--version`` and every ``--help`` should stay within
about 0.15 s of Python's own start-up.

The commands run with byte-code caching on, as for a user, whatever ``PYTHONDONTWRITEBYTECODE``
says, and with their caches in a temporary folder (``PYTHONPYCACHEPREFIX``), so the warm-up run
compiles every module once and the checkout is left alone.

Usage: python benchmarks/startup.py [--runs N]
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def commands() -> dict[str, list[str]]:
    python = sys.executable
    steadybench = str(Path(python).with_name("steadybench"))
    cmds = {
        "python -c pass": [python, "-c", "pass"],
        "steadybench --version": [steadybench, "--version"],
        "steadybench --help": [steadybench, "--help"],
        "steadybench run --help": [steadybench, "run", "--help"],
    }
    if importlib.util.find_spec("pyperf") is not None:
        cmds["python -m pyperf --help"] = [python, "-m", "pyperf", "--help"]
    return cmds


def wall_time(argv: list[str], env: dict[str, str]) -> float:
    t0 = time.perf_counter()
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env,
                   check=True)
    return time.perf_counter() - t0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15, help="runs of each command (15)")
    args = parser.parse_args()
    cmds = commands()
    if not Path(cmds["steadybench --version"][0]).exists():
        sys.exit(f"no steadybench next to {sys.executable}: install the package first")
    times: dict[str, list[float]] = {label: [] for label in cmds}
    with tempfile.TemporaryDirectory(prefix="startup-pycache-") as cache:
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env["PYTHONPYCACHEPREFIX"] = cache
        for argv in cmds.values():  # warm-up: byte-code compiled, files in the page cache
            wall_time(argv, env)
        for _ in range(args.runs):
            for label, argv in cmds.items():
                times[label].append(wall_time(argv, env))
    base = statistics.median(times["python -c pass"])
    print(f"{args.runs} runs each (after a warm-up run), wall time from start to exit, byte-code "
          "cached")
    print(f"{'command':26s} {'median':>9s} {'min':>9s} {'× python':>9s} {'+ python':>9s}")
    for label, values in times.items():
        median = statistics.median(values)
        print(f"{label:26s} {median * 1e3:6.1f} ms {min(values) * 1e3:6.1f} ms "
              f"{median / base:8.1f}× {(median - base) * 1e3:+6.1f} ms")


if __name__ == "__main__":
    main()
