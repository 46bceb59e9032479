"""Ctrl-C at random moments of ``steadybench run`` and ``steadybench exec`` (issue 28, item 1).

Each trial starts the command in a session of its own, as a terminal runs a foreground job,
waits a random time drawn uniformly over the command's usual duration, and sends SIGINT to
the whole process group (what Ctrl-C does: the workers get it too). Then it checks:

* no ``Traceback`` on either stream;
* no ``FAILED`` status (an interrupted case is "interrupted", not a crash);
* the exit status is 130 when the command was interrupted (0 when it had already finished);
* no verdict from an interrupted case: no line says which is faster, or that there is no clear
  difference, about a case the JSON marks as interrupted;
* the message saying the results are partial appears at most once.

A Ctrl-C that lands while the interpreter itself is still starting (before Python installs
its SIGINT handler) ends the process by the signal's default action, status -2, with nothing
printed or written: that is reported as such ("before Python's start-up ended"), not as a
problem.

Prints one line per trial and the totals. Usage::

    python benchmarks/interrupts.py [--trials 20] [--seed 1]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BENCH = '''import steadybench as sb

@sb.benchmark(group="build", n=[200])
def join(n):
    parts = [str(i) for i in range(n)]
    return lambda: "".join(parts)

@sb.benchmark(group="build", n=[200])
def concat(n):
    parts = [str(i) for i in range(n)]
    def f():
        s = ""
        for p in parts:
            s += p
        return s
    return f
'''

COMMANDS = {
    "run": ["run", "bench.py", "-p", "6", "--max-time", "0.15", "--json", "out.json"],
    "exec": ["exec", "sleep 0.01", "sleep 0.02", "--runs", "15", "--json", "out.json"],
}
VERDICT = re.compile(r"faster than|slower than|no clear difference|apart")


def labels_of(doc: dict) -> dict[str, bool]:
    """Each case's implementation (run) or command (exec) name → interrupted?"""
    return {b.get("implementation") or b.get("name"): bool(b.get("interrupted"))
            for b in doc.get("benchmarks", [])}


def trial(kind: str, delay: float, workdir: Path, steadybench: list[str]) -> tuple[bool, str]:
    out_json = workdir / "out.json"
    if out_json.exists():
        out_json.unlink()
    env = {**os.environ, "COLUMNS": "80"}
    proc = subprocess.Popen([*steadybench, *COMMANDS[kind]], cwd=workdir, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    time.sleep(delay)
    interrupted = proc.poll() is None
    if interrupted:
        os.killpg(proc.pid, signal.SIGINT)
    try:
        out, err = proc.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        return False, "did not end within 120 s of Ctrl-C"
    problems = []
    text = out + err
    if "Traceback" in text:
        problems.append("traceback")
    if "FAILED" in text:
        problems.append("FAILED status")
    finished = False
    early = interrupted and proc.returncode == -signal.SIGINT and not text.strip() \
        and not out_json.exists()
    if early:
        # killed by the signal's default action before the interpreter had installed its
        # handler (Python start-up, seconds on a loaded machine): nothing was printed or
        # written, as for any Python program; counted apart
        pass
    elif interrupted and proc.returncode == -signal.SIGINT and out_json.exists() \
            and not json.loads(out_json.read_text() or "{}").get("interrupted"):
        # the signal came after the command had written everything, while the interpreter
        # was shutting down (Python puts the default SIGINT action back at exit)
        finished = True
    elif interrupted and proc.returncode not in (130, 0):
        problems.append(f"exit status {proc.returncode}")
    if not interrupted and proc.returncode != 0:
        problems.append(f"finished with exit status {proc.returncode}")
    if text.count("partial results") > 1:
        problems.append("the interrupt message twice")
    doc = {}
    if out_json.exists():
        try:
            doc = json.loads(out_json.read_text())
        except ValueError:
            problems.append("unreadable JSON")
    stopped = [name for name, cut in labels_of(doc).items() if cut]
    for line in out.splitlines():
        if VERDICT.search(line) and any(name and name in line for name in stopped):
            problems.append(f"verdict from an interrupted case: {line.strip()}")
    moment = ("before Python's start-up ended" if early else
              "interrupted" if interrupted and not finished else "finished first")
    state = (f"rc {proc.returncode}, {moment}, "
             f"{len(stopped)} case(s) marked interrupted")
    if problems:  # what the user saw, for the diagnosis
        seen = " | ".join(line.strip() for line in text.splitlines() if line.strip())
        problems.append(f"output: {seen[:300]!r}")
    return not problems, state + ("; " + "; ".join(problems) if problems else "")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=20, help="trials per command")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--max-delay", type=float, default=4.0,
                        help="latest Ctrl-C, in seconds after the start")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    steadybench = [sys.executable, "-m", "steadybench"]
    failures = 0
    with tempfile.TemporaryDirectory(prefix="steadybench-interrupts-") as tmp:
        workdir = Path(tmp)
        (workdir / "bench.py").write_text(BENCH)
        os.environ.setdefault("XDG_STATE_HOME", str(workdir / "state"))
        for kind in COMMANDS:
            bad = 0
            for k in range(args.trials):
                delay = rng.uniform(0.2, args.max_delay)
                ok, state = trial(kind, delay, workdir, steadybench)
                bad += not ok
                print(f"{kind} #{k + 1:2d} Ctrl-C at {delay:4.2f} s: "
                      f"{'ok' if ok else 'PROBLEM'} ({state})", flush=True)
            print(f"{kind}: {args.trials - bad} of {args.trials} clean", flush=True)
            failures += bad
    print(f"total: {2 * args.trials - failures} of {2 * args.trials} clean")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
