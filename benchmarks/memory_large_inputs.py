"""Peak memory and time of commands on large inputs (issue 27 item 13).

``blocks`` with 100,000 rounds asked numpy for 74.5 GiB (a full SVD made an n×n factor) and
``blocks --unit`` of 100,000 characters ran for minutes. This script makes the inputs in a
temporary folder, runs each command as a subprocess under an address-space limit (so an n×n
allocation fails at once instead of swapping), and prints its exit status, wall time and peak
resident memory (``ru_maxrss`` of the child).

Usage: python benchmarks/memory_large_inputs.py [--rows N] [--limit-gb G] [--src DIR]

``--src`` runs another checkout's ``src`` (e.g. an export of an older commit) for a before/after
comparison.
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def make_counts(path: Path, rows: int) -> None:
    rng = random.Random(1)
    with path.open("w") as f:
        f.write("a,b,c,total\n")
        for _ in range(rows):
            a, b, c = rng.randint(0, 9), rng.randint(0, 9), rng.randint(0, 9)
            f.write(f"{a},{b},{c},{1.5 * a + 2.5 * b + 0.5 * c + rng.random() * 0.1:.6f}\n")


def run(args: list[str], src: Path, limit: int) -> tuple[int, float, float, str]:
    """(exit status, seconds, peak RSS in MiB, last line of standard error) of one command."""
    def limited() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    env = {**os.environ, "PYTHONPATH": str(src)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    t0 = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "steadybench", *args], env=env,
                          capture_output=True, text=True, preexec_fn=limited, timeout=600)
    seconds = time.monotonic() - t0
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    # ru_maxrss of RUSAGE_CHILDREN is the largest child so far: report it only when it grew
    rss = peak / 1024 if peak > before else float("nan")
    lines = [ln for ln in done.stderr.splitlines() if ln.strip()]
    return done.returncode, seconds, rss, (lines[-1][:110] if lines else "")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000, help="rounds of blocks (100000)")
    parser.add_argument("--limit-gb", type=float, default=4.0,
                        help="address-space limit of each command in GiB (4)")
    parser.add_argument("--src", type=Path, default=ROOT / "src",
                        help="the steadybench sources to run (this checkout's)")
    args = parser.parse_args()
    limit = int(args.limit_gb * 2**30)
    with tempfile.TemporaryDirectory(prefix="steadybench-memory-") as tmp:
        counts = Path(tmp) / "counts.csv"
        make_counts(counts, args.rows)
        small = Path(tmp) / "small.csv"
        make_counts(small, 20)
        cases = [
            (f"blocks, {args.rows} rounds", ["blocks", str(counts)]),
            ("blocks --unit of 100,000 characters", ["blocks", "--unit", "x" * 100_000,
                                                      str(small)]),
        ]
        print(f"sources: {args.src}; address-space limit {args.limit_gb:g} GiB")
        print(f"{'case':<40} {'exit':>4} {'seconds':>8} {'peak RSS MiB':>13}  last line")
        for name, argv in cases:
            code, seconds, rss, last = run(argv, args.src, limit)
            print(f"{name:<40} {code:>4} {seconds:>8.2f} {rss:>13.1f}  {last}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
