"""The dashboard at project scale: ``history publish`` of 500 benchmarks × 2,000 records.

Generates a SQLite history (one machine, 2,000 records of 500 benchmarks each, 4 executions per
benchmark with 1 % noise; every 10th benchmark slows down by 5 % at a random record), then
prints the wall time of ``steadybench history publish`` (target ≤ 60 s) and the time each kind
of page takes to load and draw in headless Chromium from ``file://`` (target ≤ 1 s): the
pages record ``performance.now()`` once drawn, in ``<body data-rendered-ms>``.

    python benchmarks/publish_scale.py [--benchmarks 500] [--records 2000] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def generate(path: Path, benchmarks: int, records: int, seed: int = 1) -> None:
    """The store, written directly in one transaction (the schema made by HistoryStore)."""
    from steadybench.history.store import HistoryStore

    HistoryStore.open(str(path)).close()
    rng = random.Random(seed)
    steps = {b: rng.randrange(records // 4, records) for b in range(0, benchmarks, 10)}
    db = sqlite3.connect(path)
    with db:
        for r in range(records):
            sha = f"{rng.getrandbits(160):040x}"
            db.execute("INSERT INTO records (id, created, name, command, git_commit, git_branch, "
                       "git_dirty, git_note, machine, fingerprint, preset, source, results) "
                       "VALUES (?, ?, NULL, 'bench', ?, 'main', 0, NULL, 'ci-runner', 'null', "
                       "NULL, 'steadybench', '{}')",
                       (r + 1, f"2026-01-01T00:00:00+{r:05d}", sha))
            rows = []
            for b in range(benchmarks):
                base = 1e-4 * (1 + b % 50) * (1.05 if b in steps and r >= steps[b] else 1.0)
                ex = [base * math.exp(rng.gauss(0.0, 0.01)) for _ in range(4)]
                mid = sorted(ex)[2]
                rows.append((r + 1, f"suite_{b // 50}.py::bench_{b}", f"suite_{b // 50}.py::"
                             f"bench_{b}", f"suite_{b // 50}.py::bench_{b}", "", "s", mid,
                             min(ex), max(ex), "executions", 4, json.dumps(ex)))
            db.executemany("INSERT INTO measurements (record_id, label, benchmark, "
                           "implementation, params, unit, value, ci_low, ci_high, level, "
                           "n_executions, executions) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
                           "?)", rows)
    db.close()


def load_ms(chromium: str, page: Path, profile: Path) -> float | None:
    """Milliseconds from navigation to the page's drawn mark, as Chromium reports them."""
    proc = subprocess.run([chromium, *FLAGS, f"--user-data-dir={profile}",
                           "--window-size=1280,900", "--dump-dom", page.resolve().as_uri()],
                          capture_output=True, text=True, timeout=120, check=False)
    found = re.search(r'data-rendered-ms="([0-9.]+)"', proc.stdout)
    return float(found.group(1)) if found else None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--benchmarks", type=int, default=500)
    parser.add_argument("--records", type=int, default=2000)
    parser.add_argument("--loads", type=int, default=3, help="page loads timed per page")
    parser.add_argument("--keep", default=None, help="write the site here and keep it")
    parser.add_argument("--store", default=None,
                        help="reuse (or make, when missing) the generated store at this path")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="sb-publish-"))
    try:
        store = Path(args.store) if args.store else tmp / "history.sqlite"
        started = time.perf_counter()
        if not store.exists():
            generate(store, args.benchmarks, args.records)
        print(f"store: {args.benchmarks} benchmarks × {args.records} records "
              f"({args.benchmarks * args.records:,} measurements, "
              f"{store.stat().st_size / 1e6:.0f} MB) ready in "
              f"{time.perf_counter() - started:.1f} s")
        site = Path(args.keep) if args.keep else tmp / "site"
        cli = [sys.executable, "-m", "steadybench", "history", "publish", str(site),
               "--history-url", str(store)]
        import resource

        load = os.getloadavg()[0]
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        proc = subprocess.run(cli, capture_output=True, text=True, check=False)
        build = time.perf_counter() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        if proc.returncode != 0:
            print(proc.stderr, file=sys.stderr)
            return 1
        size = sum(p.stat().st_size for p in site.rglob("*") if p.is_file())
        print(f"build: {build:.1f} s (target ≤ 60 s) on {os.cpu_count()} CPUs, "
              f"{cpu:.1f} s of CPU in all processes, load average {load:.1f} at the start "
              f"and {os.getloadavg()[0]:.1f} at the end; largest resident memory of a "
              f"process {after.ru_maxrss / 1e6:.2f} GB; site {size / 1e6:.1f} MB; "
              f"{proc.stdout.strip()}")
        for line in proc.stderr.splitlines():  # the phases, as publish reports them
            print(f"  {line}")
        chromium = next((shutil.which(n) for n in ("chromium", "chromium-browser",
                                                   "google-chrome") if shutil.which(n)), None)
        if chromium is None:
            print("page load: chromium not found (apt-get install chromium)")
            return 0
        pages = {"index": site / "index.html", "benchmark page": sorted(
            (site / "b").glob("*.html"))[0]}
        for name, page in pages.items():
            times = [load_ms(chromium, page, tmp / f"profile-{name[0]}{i}")
                     for i in range(args.loads)]
            shown = ", ".join("failed" if t is None else f"{t:.0f} ms" for t in times)
            ok = [t for t in times if t is not None]
            worst = f"{max(ok) / 1000:.2f} s" if ok else "?"
            print(f"page load, {name}: {shown} (worst {worst}; target ≤ 1 s)")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
