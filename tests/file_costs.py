"""Print ``tests/file_costs.txt`` from a CPU log of the suite (``conftest.py``'s opt-in
``STEADYBENCH_TEST_CPU_LOG``): one line per test file, its processor seconds (its tests' and
their children's, user + system) and its path, costliest first.

    STEADYBENCH_TEST_CPU_LOG=/tmp/cpu.log make test
    .venv/bin/python tests/file_costs.py /tmp/cpu.log > tests/file_costs.txt
"""

from __future__ import annotations

import sys
from collections import Counter


def main(log: str) -> None:
    costs: Counter[str] = Counter()
    with open(log) as lines:
        for line in lines:
            nodeid, seconds = line.rstrip("\n").rsplit("\t", 1)
            costs[nodeid.split("::")[0].removeprefix("tests/")] += float(seconds)
    print("# processor seconds per test file (tests/file_costs.py); make test starts the")
    print("# costliest first. Only the order of the run depends on these figures.")
    for path, seconds in costs.most_common():
        print(f"{seconds:8.1f}  {path}")


if __name__ == "__main__":
    main(sys.argv[1])
