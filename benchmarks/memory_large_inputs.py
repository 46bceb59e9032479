"""Peak memory and time of commands on large inputs (issue 27 item 13).

``blocks`` with 100,000 rounds asked numpy for 74.5 GiB (a full SVD made an n×n factor) and
``blocks --unit`` of 100,000 characters ran for minutes; a results file of 10⁶ entries (84 MB)
took ``compare`` 7.6 GB and 146 s, ``report`` more than 300 s and 5.6 GB, and ``history import``
5.7 GB before it said "nothing to record".

Measured on the many-cases shape, CPU seconds and peak RSS (2-core VM, other work beside it):

===============  ==================  ==================  =================
10^6 benchmarks  749c728             scale27b (8a1208d)  scale27c (e733623)
===============  ==================  ==================  =================
compare          85.7 s, 5,910 MiB   61.0 s, 2,210 MiB   54.5 s, 1,477 MiB
report           100.1 s, 8,343 MiB  90.2 s, 3,028 MiB   67.0 s, 1,942 MiB
history import   56.0 s, 1,826 MiB   61-65 s, 1,379 MiB  51.2 s, 1,379 MiB
===============  ==================  ==================  =================

What scale27c changed: compare holds a file's samples column-wise (``compare.columns``) and
pairs them by index; the report makes its case views when the page reads them and drops each
parsed entry once its case is made; history import settles numbers without a call each.

The results files come in two shapes, since "entries" can mean either: **many cases** (10⁶
benchmarks of three samples each, as a hand-made or converted file has them: 95 MB, the issue's
size) and **one case** of 10⁶ samples (13 MB). Each is compared with itself, made into an HTML
report and imported into a fresh history. This script makes the inputs in a
temporary folder, runs each command as a subprocess under an address-space limit (so an n×n
allocation fails at once instead of swapping), and prints its exit status, wall time, CPU time
(user + system, the figure that does not depend on what else the machine runs) and peak
resident memory (``ru_maxrss`` of the child).

``--entries`` takes several sizes (``--entries 100000 1000000``): each is run in turn.
``--shapes cases`` runs the many-cases shape only.

Usage: python benchmarks/memory_large_inputs.py [--rows N] [--entries N ...]
[--only blocks|results] [--shapes cases|samples ...] [--commands compare|report|import ...]
[--limit-gb G] [--timeout S] [--src DIR]

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


def make_many_cases(path: Path, entries: int) -> None:
    """``entries`` benchmarks of three samples each, no estimate (a hand-made file)."""
    rng = random.Random(1)
    with path.open("w") as f:
        f.write('{"schema_version": 1, "suite": "large", "benchmarks": [\n')
        for i in range(entries):
            values = ", ".join(f"{0.001 + rng.random() * 1e-4:.7f}" for _ in range(3))
            f.write(("" if i == 0 else ",\n") + f'{{"name": "bench{i:07d}", '
                    f'"implementation": "x", "samples": [{values}]}}')
        f.write("\n]}\n")


def make_one_case(path: Path, entries: int) -> None:
    """One benchmark of ``entries`` samples, no estimate."""
    rng = random.Random(1)
    with path.open("w") as f:
        f.write('{"schema_version": 1, "suite": "large", "benchmarks": '
                '[{"name": "big", "samples": [\n')
        f.write(",\n".join(f"{0.001 + rng.random() * 1e-4:.9f}" for _ in range(entries)))
        f.write("\n]}]}\n")


def run(args: list[str], src: Path, limit: int, timeout: float = 600,
        cwd: Path | None = None) -> tuple[int, float, float, float, str]:
    """(exit status, seconds, CPU seconds (user + system), peak RSS in MiB, last line of
    output) of one command; status -9 and the word "timeout" when it ran past ``timeout``
    seconds."""
    def limited() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    env = {**os.environ, "PYTHONPATH": str(src), "XDG_STATE_HOME": str(cwd or Path.cwd())}
    t0 = time.monotonic()
    with tempfile.TemporaryFile("w+") as out:
        proc = subprocess.Popen([sys.executable, "-m", "steadybench", *args], env=env,
                                stdout=out, stderr=subprocess.STDOUT, text=True,
                                preexec_fn=limited, cwd=cwd)
        while True:  # the child's own peak (wait4), not the largest child's so far
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() - t0 > timeout:
                proc.kill()
                pid, status, usage = os.wait4(proc.pid, 0)
                break
            time.sleep(0.05)
        seconds = time.monotonic() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        lines = [ln for ln in out.read().splitlines() if ln.strip()]
    last = "timeout" if seconds > timeout else (lines[-1][:110] if lines else "")
    cpu = usage.ru_utime + usage.ru_stime
    return proc.returncode, seconds, cpu, usage.ru_maxrss / 1024, last


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000, help="rounds of blocks (100000)")
    parser.add_argument("--entries", type=int, nargs="+", default=[1_000_000],
                        help="entries of the large results files, one or more sizes (1000000)")
    parser.add_argument("--shapes", nargs="+", choices=["cases", "samples"],
                        default=["cases", "samples"], help="shapes of results files (both)")
    parser.add_argument("--commands", nargs="+", choices=["compare", "report", "import"],
                        default=["compare", "report", "import"],
                        help="the commands run on each results file (all three)")
    parser.add_argument("--only", choices=["blocks", "results"], default=None,
                        help="run only these cases")
    parser.add_argument("--timeout", type=float, default=600,
                        help="seconds before a command is stopped (600)")
    parser.add_argument("--limit-gb", type=float, default=8.0,
                        help="address-space limit of each command in GiB (8)")
    parser.add_argument("--src", type=Path, default=ROOT / "src",
                        help="the steadybench sources to run (this checkout's)")
    args = parser.parse_args()
    limit = int(args.limit_gb * 2**30)
    with tempfile.TemporaryDirectory(prefix="steadybench-memory-") as tmp:
        counts = Path(tmp) / "counts.csv"
        make_counts(counts, args.rows)
        small = Path(tmp) / "small.csv"
        make_counts(small, 20)
        cases = []
        if args.only != "results":
            cases += [
                (f"blocks, {args.rows} rounds", ["blocks", str(counts)]),
                ("blocks --unit of 100,000 characters", ["blocks", "--unit", "x" * 100_000,
                                                          str(small)]),
            ]
        makers = {"cases": make_many_cases, "samples": make_one_case}
        for entries in (args.entries if args.only != "blocks" else []):
            for shape in args.shapes:
                path = Path(tmp) / f"{shape}{entries}.json"
                makers[shape](path, entries)
                size = path.stat().st_size / 2**20
                label = f"{entries} {shape} ({size:.0f} MiB)"
                commands = {  # each command reads the file it is given only
                    "compare": (f"compare, {label}", ["compare", str(path), str(path)]),
                    "report": (f"report, {label}", ["report", str(path), "-o",
                                                    str(Path(tmp) / f"{shape}{entries}.html")]),
                    "import": (f"history import, {label}",
                               ["history", "import", str(path), "--history-url",
                                f"sqlite:///{tmp}/{shape}{entries}.sqlite"]),
                }
                cases += [commands[c] for c in commands if c in args.commands]
        print(f"sources: {args.src}; address-space limit {args.limit_gb:g} GiB")
        print(f"{'case':<48} {'exit':>4} {'seconds':>8} {'CPU s':>8} {'peak RSS MiB':>13}  "
              "last line")
        for name, argv in cases:
            code, seconds, cpu, rss, last = run(argv, args.src, limit, args.timeout, Path(tmp))
            print(f"{name:<48} {code:>4} {seconds:>8.2f} {cpu:>8.2f} {rss:>13.1f}  {last}",
                  flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
