"""Peak memory of ``steadybench run`` with a million runs of a trivial function.

Runs the command in a child process and reads the child's peak resident set size from the
kernel's accounting (``ru_maxrss``). The target of issue 2 is under 150 MB with ``--stream``.

Run: ``.venv/bin/python benchmarks/stream_memory.py [RUNS]``
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

BENCH = textwrap.dedent("""
    import steadybench as sb

    @sb.benchmark
    def trivial():
        return lambda: None
""")


def measure(args: list[str]) -> tuple[float, float, int]:
    exe = Path(sys.executable).with_name("steadybench")
    start = time.perf_counter()
    proc = subprocess.Popen([str(exe), *args], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - start
    return usage.ru_maxrss / 1024, elapsed, os.waitstatus_to_exitcode(status)


def main() -> None:
    runs = sys.argv[1] if len(sys.argv) > 1 else "1000000"
    with tempfile.TemporaryDirectory() as tmp:
        bench = Path(tmp) / "trivial.py"
        bench.write_text(BENCH)
        for label, extra in (("--stream", ["--stream"]), ("raw samples kept", [])):
            peak, elapsed, code = measure(
                [
                    "run",
                    str(bench),
                    "--runs",
                    runs,
                    "-q",
                    "--json",
                    str(Path(tmp) / "r.json"),
                    *extra,
                ]
            )
            print(
                f"steadybench run --runs {runs} {label:<17}: peak RSS {peak:7.1f} MB, "
                f"{elapsed:6.1f} s, exit {code}"
            )


if __name__ == "__main__":
    main()
