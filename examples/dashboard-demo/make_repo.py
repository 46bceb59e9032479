"""Make the dashboard demo's git repository: 40 commits of a project with one benchmark, a
loop whose length is read from ``loops.txt``; commit 27 makes the loop 20 % longer.

    python make_repo.py DIR [--slow-at 27] [--commits 40]

The repository has what the CI workflow of ``examples/github-actions/benchmarks.yml`` needs:
``benchmarks/bench.py`` and ``steadybench.toml`` (a 5 % threshold and the repository's address
for the dashboard's commit links). ``record.sh`` then records every commit as CI would.
"""

from __future__ import annotations

import argparse
import subprocess
from pathlib import Path

BENCH = '''"""The demo's benchmark: a loop of LOOPS additions (LOOPS from loops.txt)."""
from pathlib import Path

import steadybench

LOOPS = int((Path(__file__).parent.parent / "loops.txt").read_text())


@steadybench.benchmark
def loop():
    def run():
        total = 0
        for i in range(LOOPS):
            total += i
        return total
    return run
'''

PROJECT = '''[thresholds]
default = "5%"

[dashboard]
repository = "https://github.com/example/demo"
'''


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("directory", type=Path)
    parser.add_argument("--slow-at", type=int, default=27)
    parser.add_argument("--commits", type=int, default=40)
    args = parser.parse_args()
    repo: Path = args.directory
    (repo / "benchmarks").mkdir(parents=True)

    def git(*words: str) -> None:
        subprocess.run(["git", "-c", "user.name=Demo", "-c", "user.email=demo@example.org",
                        *words], cwd=repo, check=True, capture_output=True)

    git("init", "-q", "-b", "main")
    (repo / "benchmarks" / "bench.py").write_text(BENCH)
    (repo / "steadybench.toml").write_text(PROJECT)
    (repo / ".gitignore").write_text(".steadybench/\nsite/\n")
    for i in range(1, args.commits + 1):
        slow = i >= args.slow_at
        (repo / "loops.txt").write_text(f"{24000 if slow else 20000}\n")
        (repo / "CHANGES.txt").write_text(f"change {i}\n")
        git("add", "-A")
        git("commit", "-qm", f"commit {i}: the loop 20% longer" if i == args.slow_at
            else f"commit {i}")


if __name__ == "__main__":
    main()
