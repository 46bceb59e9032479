"""False positives, detection and time to a verdict of three A/B tools, side by side in one run.

``steadybench ab``, hyperfine with Welch's t-test and pyperf's ``compare_to`` are each asked the
same question many times on one machine: is B slower than A?

Workloads (Python): A is ``sorted(data)`` with ``data = list(range(1000))[::-1]``; B is the same
sort of 1,050 reversed ints (``list(range(1050))[::-1]``), about 5% slower. An **A/A pair**
compares A with itself (any call of "faster" or "slower" is a false
positive); an **A/B pair** compares A with B (the right call is "B slower"; "faster" is counted
apart as a wrong-direction error).

Each tool is invoked as separate processes, as its documentation suggests:

* steadybench ab — ``steadybench ab a.py b.py --json OUT -q [--ab-args ...]`` on two generated
  short-form benchmark files (the decorated function is the set-up and returns the callable to
  time; for A/A, ``a.py`` against itself, or with ``--aa copy`` against a byte-identical copy
  ``a2.py``: a file's name changes its module's layout, so a copy is a slightly different
  program). Its verdict is the JSON's ``verdict``
  ("faster", "slower", "no difference", "equivalent" or "failed": the last, or a non-zero exit
  without a verdict, is a failure of the tool). Time to verdict: the process's wall time (the
  JSON's ``elapsed`` is kept too).
* hyperfine + Welch — hyperfine's own way of comparing two commands: one invocation
  ``hyperfine -N --warmup 3 --export-json OUT CMD1 CMD2`` (its defaults otherwise: at least 10
  runs and 3 s per command, run as sequential blocks), then Welch's t-test on the two ``times``
  arrays of the export, as hyperfine's ``scripts/welch_ttest.py`` does
  (``scipy.stats.ttest_ind(equal_var=False)``, α = 0.05 two-sided), direction from the means.
  A command is ``python FILE.py`` where FILE runs the sort in a loop (``for _ in range(N):
  sorted(data)``) so that the work, not interpreter start-up, dominates a run: N is calibrated
  at start so that the loop takes about 75 ms here (``--hf-loops`` to fix it); N and the mean
  run time hyperfine measured are printed. The order of the two commands in the invocation is
  random per pair. Time to verdict: the hyperfine invocation's wall time.
* pyperf compare_to — ``python -m pyperf timeit --fast -s SETUP "sorted(data)" -o X.json`` for A
  and for B (A first or B first, at random per pair), then ``python -m pyperf compare_to A.json
  B.json``: its output says "not significant" (no difference) or "N.NNx faster/slower" (pyperf's
  own rule: a Student t-test on all values at 95%). Time to verdict: both timeit runs and
  compare_to.

All tools run in this interpreter (the project's venv). For each tool there are ``--pairs`` A/A
and as many A/B pairs (default 20 each); the pairs of all tools are interleaved in one shuffled
order, so that drift of the machine (heat, frequency, background load) hits all tools alike.

Printed per tool: the A/A false-positive rate (faster or slower, over the pairs that gave a
verdict), the A/B detection rate (called slower, over all A/B pairs: a failure counts as a
miss), wrong-direction calls, failures, Wilson 95% intervals of the two rates (20 pairs pin a
rate down only loosely), and the median wall time to a verdict for A/A and A/B pairs. For
steadybench ab the targets are judged: false positives <= 5%, detection >= 90%, median time to
a verdict <= 10 s (A/A and A/B). A tool that is missing (hyperfine not on PATH, pyperf or scipy
not installed) is skipped with a message; a failed invocation is recorded, with its error, in
the --json output and the run goes on (a tool whose first 3 invocations all fail is dropped).

Usage: python benchmarks/verdicts.py [--pairs N] [--tools ab,hyperfine,pyperf] [--seed N]
       [--ab-args "--max-rounds 40"] [--hf-loops N] [--json PATH]
(run it with the project's interpreter, .venv/bin/python; hyperfine: apt-get install -y
hyperfine; pyperf: pip install -e '.[bench]').
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import platform
import random
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import timeit
from pathlib import Path

from _common import available, compile_steadybench, parse_list, save_json

PYTHON = sys.executable
BIN = Path(sys.executable).parent  # the venv's bin directory: steadybench's script is there

N_A, N_B = 1000, 1050  # ints sorted by A and by B (B ≈ 5% slower)
SETUP = "data = list(range({n}))[::-1]"
ALPHA = 0.05  # Welch's t-test, two-sided, as hyperfine's welch_ttest.py
HF_TARGET_RUN = 0.075  # seconds of sorting in one hyperfine run (calibrated loop count)
TIMEOUT = 900  # seconds: one invocation of a tool that takes longer is a failure
DROP_AFTER = 3  # a tool whose first invocations all fail is dropped after this many

# Rough seconds per pair on a 2-core VM, for the estimate printed at the start.
ESTIMATE = {"ab": {"AA": 17.0, "AB": 7.0}, "hyperfine": {"AA": 7.0, "AB": 7.0},
            "pyperf": {"AA": 15.0, "AB": 15.0}}

TARGETS = {"fp": 0.05, "detect": 0.90, "time": 10.0}

VERDICTS = ("slower", "faster", "no difference", "equivalent")


class ToolFailure(Exception):
    """One invocation of a tool failed; the message says how."""


def invoke(cmd: list[str], cwd: Path) -> tuple[subprocess.CompletedProcess, float]:
    """Run one command; return the completed process and its wall time in seconds."""
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=TIMEOUT)
    except subprocess.TimeoutExpired as exc:
        raise ToolFailure(f"{shlex.join(cmd)} did not end within {TIMEOUT} s") from exc
    return proc, time.perf_counter() - t0


def tail(proc: subprocess.CompletedProcess, lines: int = 15) -> str:
    return "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-lines:])


def check(proc: subprocess.CompletedProcess, cmd: list[str]) -> None:
    if proc.returncode != 0:
        raise ToolFailure(f"{shlex.join(cmd)} exited with {proc.returncode}:\n{tail(proc)}")


# --- the tools ------------------------------------------------------------------------------
# Each runner takes the pair's kind ("AA" or "AB"), a fresh stem, the working directory and the
# run's settings, and returns (verdict, wall time to the verdict in seconds, details).


def ab_file(n: int) -> str:
    return ("import steadybench\n\n\n@steadybench.benchmark\ndef sort():\n"
            f"    data = list(range({n}))[::-1]\n    return lambda: sorted(data)\n")


def ab_command(kind: str, out: Path | str, settings: dict) -> list[str]:
    b = ("a.py" if settings["aa"] == "self" else "a2.py") if kind == "AA" else "b.py"
    return [str(BIN / "steadybench"), "ab", "a.py", b, "--json", str(out), "-q",
            *settings["ab_args"]]


def run_ab(kind: str, stem: str, tmp: Path, settings: dict) -> tuple[str, float, dict]:
    out = tmp / f"{stem}.json"
    cmd = ab_command(kind, out, settings)
    proc, wall = invoke(cmd, tmp)
    doc = None
    if out.exists():
        try:
            doc = json.loads(out.read_text())
        except ValueError:
            doc = None
    verdict = doc.get("verdict") if doc else None
    if verdict not in VERDICTS:
        reason = (doc or {}).get("reason")
        raise ToolFailure(f"{shlex.join(cmd)} exited with {proc.returncode}, verdict {verdict!r}"
                          + (f" ({reason})" if reason else "") + f":\n{tail(proc)}")
    result = doc.get("result") or {}
    details = {"exit": proc.returncode, "elapsed": doc.get("elapsed"),
               "ratio": result.get("ratio"), "low": result.get("low"),
               "high": result.get("high"), "rounds": result.get("rounds"),
               "method": result.get("method"), "reason": doc.get("reason"),
               "failures": doc.get("failures"), "warnings": doc.get("warnings"),
               "settings": doc.get("settings")}
    return verdict, wall, details


def ab_settings_seen(records: list[dict]) -> list[str]:
    """The distinct settings and methods of steadybench ab in these records (its defaults may
    change while src/ is edited: a rate across such a change means little)."""
    seen = []
    for r in records:
        if r["verdict"] == "failed":
            continue
        settings = {k: v for k, v in (r["details"].get("settings") or {}).items() if k != "seed"}
        seen.append(f"{json.dumps(settings, sort_keys=True)}; method {r['details']['method']}")
    return list(dict.fromkeys(seen))


def hf_script(n: int, loops: int) -> str:
    return f"data = list(range({n}))[::-1]\nfor _ in range({loops}):\n    sorted(data)\n"


def hf_commands(kind: str, aa: str = "self") -> tuple[str, str]:
    other = ("hf_a.py" if aa == "self" else "hf_a2.py") if kind == "AA" else "hf_b.py"
    return f"{PYTHON} hf_a.py", f"{PYTHON} {other}"


def run_hyperfine(kind: str, stem: str, tmp: Path, settings: dict) -> tuple[str, float, dict]:
    from scipy import stats

    out = tmp / f"{stem}.json"
    a, b = hf_commands(kind, settings["aa"])
    a_first = settings["rng"].random() < 0.5
    order = [a, b] if a_first else [b, a]
    cmd = ["hyperfine", "-N", "--style", "none", "--warmup", "3", "--export-json", str(out),
           *order]
    proc, wall = invoke(cmd, tmp)
    check(proc, cmd)
    results = json.loads(out.read_text())["results"]
    times_a, times_b = (results[0]["times"], results[1]["times"]) if a_first else \
        (results[1]["times"], results[0]["times"])
    t, p = stats.ttest_ind(times_a, times_b, equal_var=False)
    mean_a, mean_b = statistics.fmean(times_a), statistics.fmean(times_b)
    verdict = ("slower" if mean_b > mean_a else "faster") if p < ALPHA else "no difference"
    details = {"a_first": a_first, "runs_a": len(times_a), "runs_b": len(times_b),
               "mean_a": mean_a, "mean_b": mean_b, "ratio": mean_a / mean_b,
               "t": float(t), "p": float(p)}
    return verdict, wall, details


PYPERF_RESULT = re.compile(r"([\d.]+)x (faster|slower)")


def pyperf_timeit(n: int, out: Path) -> list[str]:
    return [PYTHON, "-m", "pyperf", "timeit", "--fast", "--quiet", "-s", SETUP.format(n=n),
            "-o", str(out), "sorted(data)"]


def run_pyperf(kind: str, stem: str, tmp: Path, settings: dict) -> tuple[str, float, dict]:
    out_a, out_b = tmp / f"{stem}_A.json", tmp / f"{stem}_B.json"  # fresh: pyperf won't overwrite
    n_b = N_A if kind == "AA" else N_B
    a_first = settings["rng"].random() < 0.5
    runs = [(N_A, out_a), (n_b, out_b)]
    wall = 0.0
    for n, out in runs if a_first else runs[::-1]:
        cmd = pyperf_timeit(n, out)
        proc, took = invoke(cmd, tmp)
        check(proc, cmd)
        wall += took
    cmd = [PYTHON, "-m", "pyperf", "compare_to", str(out_a), str(out_b)]
    proc, took = invoke(cmd, tmp)
    check(proc, cmd)
    wall += took
    text = proc.stdout.strip()
    m = PYPERF_RESULT.search(text)
    if "not significant" in text.lower():
        verdict = "no difference"
    elif m is not None:
        verdict = m.group(2)
    elif "no change" in text:
        verdict = "no difference"
    else:
        raise ToolFailure(f"cannot parse pyperf compare_to's output: {text!r}")
    details = {"a_first": a_first, "output": text,
               "factor": float(m.group(1)) if m else None}
    return verdict, wall, details


TOOLS = {
    # name: (runner, label, Python modules needed in this interpreter, program needed on PATH)
    "ab": (run_ab, "steadybench ab", (), None),
    "hyperfine": (run_hyperfine, "hyperfine + Welch", ("scipy",), "hyperfine"),
    "pyperf": (run_pyperf, "pyperf compare_to", ("pyperf",), None),
}


def missing(tool: str) -> str | None:
    """Why ``tool`` cannot run here, or None."""
    _, label, modules, program = TOOLS[tool]
    for module in modules:
        if importlib.util.find_spec(module) is None:
            return f"{label}: {module} is not installed (pip install -e '.[bench]')"
    if program is not None and shutil.which(program) is None:
        return f"{label}: {program} is not on PATH (apt-get install -y {program})"
    if tool == "ab" and not (BIN / "steadybench").exists():
        return f"{label}: steadybench is not installed in {BIN}"
    return None


def calibrate_loops() -> tuple[int, float]:
    """Loops of A's sort that take about HF_TARGET_RUN seconds here; and one sort's time."""
    data = list(range(N_A))[::-1]
    timer = timeit.Timer("sorted(data)", globals={"data": data})
    number, _ = timer.autorange()
    per_call = min(timer.repeat(repeat=5, number=number)) / number
    return max(100, int(round(HF_TARGET_RUN / per_call, -2))), per_call


def options_used(tools: list[str], settings: dict) -> list[str]:
    """Each tool's command lines as run (relative to the temporary directory)."""
    lines = []
    if "ab" in tools:
        lines.append("steadybench ab: " + shlex.join(ab_command("AB", "OUT.json", settings))
                     + ("  (A/A: a.py a.py)" if settings["aa"] == "self"
                        else "  (A/A: a.py and its copy a2.py)"))
    if "hyperfine" in tools:
        a, b = hf_commands("AB")
        lines.append(f"hyperfine + Welch: hyperfine -N --style none --warmup 3 --export-json "
                     f"OUT.json '{a}' '{b}'  (A/A: "
                     f"{'hf_a.py twice' if settings['aa'] == 'self' else 'hf_a2.py'}; "
                     "order random per pair); "
                     f"hf_*.py run sorted(data) {settings['hf_loops']} times; Welch's t-test "
                     f"(scipy ttest_ind equal_var=False), alpha {ALPHA} two-sided")
    if "pyperf" in tools:
        lines.append("pyperf compare_to: " + shlex.join(pyperf_timeit(N_A, Path("A.json")))
                     + "  (and for B: " + SETUP.format(n=N_B) + "; order random per pair); "
                     + f"{PYTHON} -m pyperf compare_to A.json B.json")
    return lines


# --- figures --------------------------------------------------------------------------------


def wilson(k: int, n: int, z: float = 1.959964) -> tuple[float, float]:
    """Wilson 95% interval of a proportion k/n."""
    if n == 0:
        return float("nan"), float("nan")
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def median_or_nan(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def summarize(records: list[dict]) -> dict:
    aa = [r for r in records if r["kind"] == "AA"]
    ab = [r for r in records if r["kind"] == "AB"]
    aa_ok = [r for r in aa if r["verdict"] != "failed"]
    ab_ok = [r for r in ab if r["verdict"] != "failed"]
    fp = sum(r["verdict"] in ("faster", "slower") for r in aa_ok)
    detected = sum(r["verdict"] == "slower" for r in ab)
    counts = {kind: {v: sum(r["verdict"] == v for r in rs) for v in (*VERDICTS, "failed")}
              for kind, rs in (("AA", aa), ("AB", ab))}
    return {
        "aa_pairs": len(aa), "ab_pairs": len(ab), "counts": counts,
        "fp": fp, "fp_rate": fp / len(aa_ok) if aa_ok else float("nan"),
        "fp_ci": wilson(fp, len(aa_ok)),
        "detected": detected, "detect_rate": detected / len(ab) if ab else float("nan"),
        "detect_ci": wilson(detected, len(ab)),
        "wrong_direction": counts["AB"]["faster"],
        "failures": counts["AA"]["failed"] + counts["AB"]["failed"],
        "median_time_aa": median_or_nan([r["wall"] for r in aa_ok]),
        "median_time_ab": median_or_nan([r["wall"] for r in ab_ok]),
    }


def pct(x: float) -> str:
    return "—" if math.isnan(x) else f"{x * 100:.0f}%"


def secs(x: float) -> str:
    return "—" if math.isnan(x) else f"{x:.1f}s"


def print_table(summary: dict[str, dict]) -> None:
    print("\nA/A: identical variants (any call is a false positive); "
          "A/B: B = 1,050 ints, ≈5% slower (right call: slower)")
    header = (f"{'tool':<20} {'A/A FP':>7} {'95% CI':>11} {'A/B det.':>9} {'95% CI':>11} "
              f"{'wrong':>6} {'fail':>5} {'t A/A':>8} {'t A/B':>8}")
    print(header)
    print("-" * len(header))
    for tool, s in summary.items():
        fp_ci = f"{pct(s['fp_ci'][0])}-{pct(s['fp_ci'][1])}"
        det_ci = f"{pct(s['detect_ci'][0])}-{pct(s['detect_ci'][1])}"
        print(f"{TOOLS[tool][1]:<20} {pct(s['fp_rate']):>7} {fp_ci:>11} "
              f"{pct(s['detect_rate']):>9} {det_ci:>11} {s['wrong_direction']:>6} "
              f"{s['failures']:>5} {secs(s['median_time_aa']):>8} {secs(s['median_time_ab']):>8}")
    print("(FP: faster or slower on A/A, over pairs with a verdict; det.: slower on A/B, over "
          "all A/B pairs;\n wrong: faster on A/B; fail: failed invocations; t: median wall time "
          "to a verdict)")
    print("\nverdicts per tool (A/A | A/B):")
    for tool, s in summary.items():
        parts = [" ".join(f"{v}={n}" for v, n in s["counts"][kind].items() if n)
                 for kind in ("AA", "AB")]
        print(f"  {TOOLS[tool][1]:<20} {parts[0]} | {parts[1]}")


def judge(s: dict) -> bool:
    checks = [
        (f"false positives {pct(s['fp_rate'])} <= {pct(TARGETS['fp'])}",
         s["fp_rate"] <= TARGETS["fp"]),
        (f"detection {pct(s['detect_rate'])} >= {pct(TARGETS['detect'])}",
         s["detect_rate"] >= TARGETS["detect"]),
        (f"median time to verdict A/A {secs(s['median_time_aa'])} <= {TARGETS['time']:.0f}s",
         s["median_time_aa"] <= TARGETS["time"]),
        (f"median time to verdict A/B {secs(s['median_time_ab'])} <= {TARGETS['time']:.0f}s",
         s["median_time_ab"] <= TARGETS["time"]),
    ]
    print("\ntargets for steadybench ab:")
    for text, ok in checks:
        print(f"  {text:<52} {'MET' if ok else 'NOT met'}")
    if s["wrong_direction"] or s["failures"]:
        print(f"  (also: {s['wrong_direction']} wrong-direction call(s), {s['failures']} "
              "failure(s))")
    return all(ok for _, ok in checks)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=20,
                        help="A/A pairs and A/B pairs per tool (default 20 each)")
    parser.add_argument("--tools", type=lambda v: parse_list(v, TOOLS), default=list(TOOLS),
                        help="comma-separated subset of ab,hyperfine,pyperf")
    parser.add_argument("--ab-args", default="", metavar="OPTIONS",
                        help="extra options for steadybench ab, e.g. '--max-rounds 40'")
    parser.add_argument("--hf-loops", type=int, default=None,
                        help="sorts per hyperfine run (default: calibrated to ~75 ms)")
    parser.add_argument("--seed", type=int, default=None, help="seed of the shuffled order")
    parser.add_argument("--aa", choices=("self", "copy"), default="self",
                        help="A/A pairs compare the workload with itself (the same file: "
                        "default) or with a byte-identical copy under another name")
    parser.add_argument("--json", type=Path, default=None, help="save the raw figures here")
    args = parser.parse_args()
    compile_steadybench()  # as an installed copy has it (see _common.py)
    if args.pairs < 1:
        parser.error("--pairs must be at least 1")

    tools = available(args.tools, missing)
    if not tools:
        print("no tool to run", file=sys.stderr)
        return 1
    sys.stdout.reconfigure(line_buffering=True)  # tables and progress (stderr) in order
    seed = args.seed if args.seed is not None else random.randrange(2**32)
    rng = random.Random(seed)
    loops, per_call = calibrate_loops() if args.hf_loops is None else (args.hf_loops, None)
    settings = {"ab_args": shlex.split(args.ab_args), "hf_loops": loops, "aa": args.aa,
                "rng": random.Random(rng.random())}

    print(f"Python {platform.python_version()} ({PYTHON}), {platform.machine()}, "
          f"shuffle seed {seed}")
    if per_call is not None:
        print(f"sorted() of {N_A} reversed ints: {per_call * 1e6:.2f} µs here; hyperfine runs "
              f"{loops} sorts per run (~{loops * per_call * 1e3:.0f} ms plus start-up)")
    print("options as used:")
    for line in options_used(tools, settings):
        print(f"  {line}")
    estimate = sum(ESTIMATE[t][k] for t in tools for k in ("AA", "AB")) * args.pairs
    print(f"{args.pairs} A/A + {args.pairs} A/B pairs per tool, {2 * args.pairs * len(tools)} "
          f"invocations; estimated run time ~{estimate / 60:.1f} min")

    tasks = [(t, kind, i) for t in tools for kind in ("AA", "AB") for i in range(args.pairs)]
    rng.shuffle(tasks)
    records: dict[str, list[dict]] = {t: [] for t in tools}
    dropped: set[str] = set()
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="sb-verdicts-") as d:
        tmp = Path(d)
        (tmp / "a.py").write_text(ab_file(N_A))
        (tmp / "a2.py").write_text(ab_file(N_A))
        (tmp / "b.py").write_text(ab_file(N_B))
        (tmp / "hf_a.py").write_text(hf_script(N_A, loops))
        (tmp / "hf_a2.py").write_text(hf_script(N_A, loops))
        (tmp / "hf_b.py").write_text(hf_script(N_B, loops))
        for k, (tool, kind, i) in enumerate(tasks):
            if tool in dropped:
                continue
            record = {"kind": kind, "index": i, "order": k}
            try:
                verdict, wall, details = TOOLS[tool][0](kind, f"{tool}_{kind}_{i}", tmp,
                                                        settings)
                record.update(verdict=verdict, wall=wall, details=details)
            except (ToolFailure, OSError, ValueError, KeyError, IndexError) as exc:
                record.update(verdict="failed", wall=None, error=f"{type(exc).__name__}: {exc}")
                print(f"  {tool} {kind} #{i + 1} failed: {exc}", file=sys.stderr)
            records[tool].append(record)
            done = [r for r in records[tool] if r["verdict"] != "failed"]
            if not done and len(records[tool]) >= DROP_AFTER:
                print(f"dropping {tool}: its first {DROP_AFTER} invocations failed",
                      file=sys.stderr)
                dropped.add(tool)
            elapsed = time.perf_counter() - started
            wall = "" if record["wall"] is None else f"{record['wall']:6.1f}s"
            print(f"  [{k + 1}/{len(tasks)}] {tool:<9} {kind} #{i + 1:<3} "
                  f"{record['verdict']:<13} {wall:>7}   elapsed {elapsed / 60:5.1f} min, "
                  f"ETA {elapsed / (k + 1) * (len(tasks) - k - 1) / 60:5.1f} min",
                  file=sys.stderr)
        if len(dropped) == len(tools):
            print("nothing works: every tool failed", file=sys.stderr)
            save_json(args.json, {"seed": seed, "records": records})
            return 1

    summary = {t: summarize(records[t]) for t in tools if t not in dropped}
    print(f"\ntotal run time {(time.perf_counter() - started) / 60:.1f} min")
    if "hyperfine" in summary:
        means = [r["details"][m] for r in records["hyperfine"] if r["verdict"] != "failed"
                 for m in ("mean_a", "mean_b")]
        runs = [r["details"][m] for r in records["hyperfine"] if r["verdict"] != "failed"
                for m in ("runs_a", "runs_b")]
        if means:
            print(f"hyperfine: median run {statistics.median(means) * 1e3:.0f} ms, median "
                  f"{statistics.median(runs):.0f} runs per command")
    print_table(summary)
    if "ab" in summary:
        seen = ab_settings_seen(records["ab"])
        summary["ab"]["settings_seen"] = seen
        print("\nsteadybench ab settings (from its JSON):" if len(seen) <= 1 else
              "\nwarning: steadybench ab's settings or method changed during the run:")
        for line in seen:
            print(f"  {line}")
    met = judge(summary["ab"]) if "ab" in summary else None
    if met is None:
        print("\ntargets: not judged (steadybench ab was not run)")
    save_json(args.json, {
        "python": platform.python_version(), "machine": platform.machine(), "seed": seed,
        "pairs": args.pairs, "workloads": {"A": f"sorted(data), {SETUP.format(n=N_A)}",
                                           "B": f"sorted(data), {SETUP.format(n=N_B)}"},
        "options": options_used(tools, settings), "hf_loops": loops,
        "dropped": sorted(dropped), "targets_ab": TARGETS, "targets_met": met,
        "summary": summary, "records": records})
    return 0


if __name__ == "__main__":
    sys.exit(main())
