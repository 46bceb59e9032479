"""Profiles (``--profile``, :mod:`steadybench.profiles`): shares of a real sampled benchmark,
the difference of two versions ranked (sampled and, with callgrind, exact), the record's
files, and every way a profiler fails leaving the measurement intact.

The sampled tests run py-spy on this machine: it needs ptrace (root, or
``kernel.yama.ptrace_scope`` 0); where it is not permitted they are skipped with the reason.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import textwrap
from pathlib import Path

import pytest

from steadybench import testing
from steadybench.profiles import collapsed
from steadybench.profiles.backend import ProfileBackend, ProfileSettings, take_profile
from steadybench.profiles.diff import Z, diff
from steadybench.profiles.filtering import MARKER, PACKAGE_DIR, calls_region
from steadybench.profiles.model import SAMPLES, Frame, Profile, ProfileFailure
from steadybench.profiles.writers import speedscope, write_profile

SLOW_FAST = testing.SLOW_FAST  # slow() ×3 + fast() ×1: shares 0.75 and 0.25


def _python_variant(path: Path):
    from steadybench.ab.variants import PythonVariant

    return PythonVariant("A", str(path))


def _sampled(path: Path, seconds: float = 1.5) -> Profile:
    from steadybench.profiles.backend import for_variant

    got = take_profile(for_variant(_python_variant(path), ProfileSettings(seconds=seconds)), 120)
    if isinstance(got, ProfileFailure) and got.reason in ("not-permitted", "missing"):
        pytest.skip(got.message)
    assert isinstance(got, Profile), got
    return got


def _line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), start=1) if line.startswith(needle))


# ------------------------------------------------------------------------ a sampled profile
#: standard errors of tolerance: a false failure in about 1 of 2,000 runs per share
Z_TOLERANCE = 3.3


def share_tolerance(expected: float, samples: int) -> float:
    """The binomial standard error of a share over ``samples`` samples, inflated by the
    clustering of py-spy's samples measured beside CPU hogs (``DESIGN_EFFECT``: the variance
    of a share over 40 profiles was 2.0-3.9 times the binomial one, pooled 3.2, upper 95 %
    bound 4.9; benchmarks/profile_fidelity.py), times :data:`Z_TOLERANCE`."""
    from steadybench.profiles.sampler import DESIGN_EFFECT

    return Z_TOLERANCE * math.sqrt(DESIGN_EFFECT * expected * (1 - expected) / samples)


@pytest.mark.slow
def test_shares_of_slow_three_times_and_fast_once(tmp_path: Path) -> None:
    path = tmp_path / "bench_shares.py"
    path.write_text(SLOW_FAST)
    profile = _sampled(path, seconds=2.0)
    funcs = {f.frame.function: f for f in profile.functions()}
    # slow() runs the same work as fast(), three times as often: 75 % and 25 % of the calls'
    # cost. 2 s at 250 Hz is ~500 samples: the tolerance is 3.3 binomial errors inflated by
    # the clustering measured beside two CPU hogs (0.14 at 500 samples).
    assert profile.samples >= 150
    tolerance = share_tolerance(0.75, profile.samples)
    assert abs(funcs["slow"].share - 0.75) < tolerance, (funcs["slow"].share, tolerance)
    assert abs(funcs["fast"].share - 0.25) < tolerance, (funcs["fast"].share, tolerance)
    assert funcs["both"].share > 0.97  # the benchmark's own function holds (almost) all
    # file:line of the user's code: the function's first line in the user's file
    assert funcs["slow"].frame.file == str(path)
    assert funcs["slow"].frame.line == _line_of(SLOW_FAST, "def slow")
    assert funcs["fast"].frame.where == f"bench_shares.py:{_line_of(SLOW_FAST, 'def fast')}"
    # steadybench's own frames (the child, the marker) are not in the profile
    assert not any(f.frame.file.startswith(PACKAGE_DIR) for f in profile.functions())
    # the per-call view: calls counted, cost per call, collection measured, allocations
    assert profile.calls >= 1 and profile.total_per_call > 0
    assert profile.gc is not None and profile.alloc is not None and profile.alloc.calls >= 1
    assert profile.profiler.startswith("py-spy")


THREAD_WORK = '''\
import threading

from steadybench import benchmark


def crunch(n):
    s = 0
    for i in range(n):
        s += i * i
    return s


def in_a_thread():
    t = threading.Thread(target=crunch, args=(200_000,))
    t.start()
    t.join()


@benchmark
def case():
    return in_a_thread
'''

PROCESS_WORK = '''\
import subprocess
import sys

from steadybench import benchmark

CHILD = (
    "def crunch(n):\\n"
    "    s = 0\\n"
    "    for i in range(n):\\n"
    "        s += i * i\\n"
    "    return s\\n"
    "crunch(3_000_000)\\n"
)


def in_a_child_process():
    subprocess.run([sys.executable, "-c", CHILD], check=True)


@benchmark
def case():
    return in_a_child_process
'''


@pytest.mark.slow
def test_work_in_another_thread_is_the_users_function(tmp_path: Path) -> None:
    path = tmp_path / "bench_thread.py"
    path.write_text(THREAD_WORK)
    profile = _sampled(path, seconds=1.0)
    funcs = {f.frame.function: f for f in profile.functions()}
    # the work is crunch()'s, in the thread the call started, found by --threads and counted
    # per call; the main thread waiting in start() and join() is idle and not sampled, except
    # once woken and waiting for a core (on a loaded machine: crunch() had 0.80-0.91 of the
    # samples at load 12, the waits the rest)
    assert max(profile.functions(), key=lambda f: f.self_weight).frame.function == "crunch"
    assert funcs["crunch"].share > 0.6, funcs["crunch"].share
    assert funcs["crunch"].frame.where == f"bench_thread.py:{_line_of(THREAD_WORK, 'def crunch')}"
    assert any("other threads'" in note for note in profile.notes)


@pytest.mark.slow
def test_work_in_a_child_process_is_the_users_function(tmp_path: Path) -> None:
    path = tmp_path / "bench_process.py"
    path.write_text(PROCESS_WORK)
    profile = _sampled(path, seconds=1.0)
    funcs = {f.frame.function: f for f in profile.functions()}
    # the call waits for its child process (idle: not sampled); the child's crunch() is found
    # by --subprocesses, beside the child interpreter's own start-up
    assert max(profile.functions(), key=lambda f: f.self_weight).frame.function == "crunch"
    assert funcs["crunch"].share > 0.5, funcs["crunch"].share
    assert any("child processes'" in note for note in profile.notes)


def test_other_threads_and_processes_are_counted_per_call() -> None:
    from steadybench.profiles.backend import CHILD_PROCESSES, OTHER_THREADS, case_profile
    from steadybench.profiles.sampler import PySpySample, Sampled

    own = os.path.join(PACKAGE_DIR, "profiles", "child.py")
    marker = Frame(MARKER, own, 1)
    user, work = Frame("both", "/u/b.py", 3), Frame("work", "/u/b.py", 9)
    root = ((100, "python -m steadybench.profiles.child t 1"),)
    samples = (PySpySample(root, 100, "MainThread", (Frame("main", own, 2), marker, user), 60),
               PySpySample(root, 100, "MainThread", (Frame("main", own, 2),), 30),
               PySpySample(root, 101, "Thread-1", (Frame("run", "/t.py", 1), work), 40),
               PySpySample((*root, (102, 'python -c "a; b"')), 102, "", (work,), 20),
               PySpySample((*root, (103, "sh")), 103, "", (), 5))
    got = Sampled(samples, "", "", 0, 2.0)
    data = {"calls": 30, "other_calls": 10, "seconds": 1.0, "gc_collections": 0,
            "gc_pause_seconds": 0.0, "asynchronous": False,
            "alloc": {"calls": 9, "peak_bytes_per_call": 0.0, "retained_bytes_per_call": 0.0}}
    profile = case_profile(got, data, rate=250, wall=2.0)
    assert isinstance(profile, Profile)
    stacks = dict(profile.stacks)
    # the main thread cut to the calls; the others weighed by the calls' share 30 / 40
    assert stacks[(user,)] == 60
    assert stacks[(OTHER_THREADS, Frame("run", "/t.py", 1), work)] == 30
    assert stacks[(CHILD_PROCESSES, work)] == 15
    assert len(stacks) == 3 and profile.samples == 105


def test_py_spy_raw_lines_with_processes_and_threads() -> None:
    from steadybench.profiles.sampler import parse_raw

    text = ('process 7:"python -m steadybench.profiles.child t 1";thread (7): MainThread;'
            'main (/s/child.py:1);slow (/u/b.py:4) 12\n'
            'process 7:"python -m steadybench.profiles.child t 1";process 9:"python -c \n'
            '    s = 0\nimport x; x.run(\"a;b\")";thread (9);<module> (<string>:1);'
            'run (/u/x.py:2) 3\n'
            'process 7:"python -m steadybench.profiles.child t 1";thread (8): pool_0;'
            'work (/u/b.py:9) 5\n')
    first, child, thread = parse_raw(text)
    assert first.processes == ((7, "python -m steadybench.profiles.child t 1"),)
    assert (first.thread, first.thread_name) == (7, "MainThread")
    assert first.frames == (Frame("main", "/s/child.py", 1), Frame("slow", "/u/b.py", 4))
    assert first.weight == 12
    # a command holding a newline, ';' and quotes stays one process frame
    # (and a line of it that ends in a number, as a record's count does)
    assert child.processes[1] == (9, 'python -c \n    s = 0\nimport x; x.run(\"a;b\")')
    assert child.thread == 9 and child.frames[-1] == Frame("run", "/u/x.py", 2)
    assert (thread.thread, thread.thread_name, thread.weight) == (8, "pool_0", 5)


# ------------------------------------------------------------------------ the difference
VERSION = '''\
from steadybench import benchmark


def parse(n):
    return sum(i % 7 for i in range(n))


def render(n):
    return sum(i % 11 for i in range(n))


def both():
    parse(3000)
    render({render})


@benchmark
def case():
    return both
'''


def _cpu_per_call(*paths: Path) -> dict[str, float]:
    import importlib.util
    import time

    calls = []
    for path in paths:
        spec = importlib.util.spec_from_file_location(f"version_{path.stem}", path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        calls.append(module.both)
    totals = [0.0] * len(calls)
    for _ in range(200):
        for k, call in enumerate(calls):
            start = time.process_time()
            call()
            totals[k] += time.process_time() - start
    return {label: total / 200 for label, total in zip("AB", totals, strict=False)}


@pytest.mark.slow
def test_the_function_that_changed_is_ranked_first(tmp_path: Path) -> None:
    from steadybench.ab.variants import PythonVariant
    from steadybench.profiles.pair import profile_variants

    (tmp_path / "a.py").write_text(VERSION.format(render=1000))
    (tmp_path / "b.py").write_text(VERSION.format(render=4000))
    va = PythonVariant("A", str(tmp_path / "a.py"))
    vb = PythonVariant("B", str(tmp_path / "b.py"))
    # as ab does, each profile is scaled to the variant's unprofiled time per call (here CPU
    # time, interleaved: the profiled stretch's wall time moves with the machine's load)
    pair = profile_variants(va, vb, ProfileSettings(seconds=1.0), 120,
                            _cpu_per_call(tmp_path / "a.py", tmp_path / "b.py"))
    if any(f.reason in ("not-permitted", "missing") for f in pair.failures.values()):
        pytest.skip(next(iter(pair.failures.values())).message)
    assert pair.difference is not None, pair.failures
    first = pair.difference.ranked[0]
    assert first.frame.function == "render" and first.frame.where.startswith("b.py:")
    assert first.difference > 0 and first.before > 0
    # parse() did not change: if it is ranked at all, it is below render
    assert all(abs(c.difference) < first.difference for c in pair.difference.ranked[1:])
    lines = pair.lines()
    assert lines[1].split()[0] == "function" and lines[2].split()[0] == "render"


def _profile(costs: dict[str, float], total: float = 1e-3) -> Profile:
    frames = {name: Frame(name, f"/x/{name}.py", 1) for name in costs}
    stacks = tuple(((Frame("main", "/x/main.py", 1), frames[name]), weight)
                   for name, weight in costs.items())
    return Profile(kind=SAMPLES, unit="s", profiler="test", stacks=stacks, calls=10,
                   total_per_call=total)


def test_difference_figures_and_sampling_error() -> None:
    a = _profile({"f": 500, "g": 500}, total=1e-3)
    b = _profile({"f": 498, "g": 1500, "h": 2}, total=2e-3)
    d = diff(a, b)
    g = d.ranked[0]
    assert g.frame.function == "g"
    # each cost is its share of the samples times the cost per call
    assert math.isclose(g.before, 0.5e-3) and math.isclose(g.after, 1.5e-3)
    assert math.isclose(g.difference, 1e-3) and math.isclose(g.share, 1.0)
    # the standard error, computed here from the binomial proportion's
    se = math.hypot(1e-3 * math.sqrt(0.5 * 0.5 / 1000),
                    2e-3 * math.sqrt(0.75 * 0.25 / 2000))
    assert math.isclose(g.error, se, rel_tol=1e-9)
    # f's cost did not change (0.5 ms each side); h's 2 samples are within their error
    names = {c.frame.function for c in d.within_error}
    assert "h" in names and "h" not in {c.frame.function for c in d.ranked}
    assert all(abs(c.difference) <= Z * c.error for c in d.within_error)


def test_renamed_files_are_one_function() -> None:
    a = Profile(SAMPLES, "s", "t", (((Frame("convert", "/p/a.py", 3),), 10.0),), 1, 1.0)
    b = Profile(SAMPLES, "s", "t", (((Frame("convert", "/p/b.py", 3),), 10.0),), 1, 2.0)
    assert len(diff(a, b, {"a.py": "b.py"}).ranked) == 1
    assert diff(a, b, {"a.py": "b.py"}).ranked[0].only_in is None
    assert {c.only_in for c in diff(a, b, {}).ranked} == {"A", "B"}  # told: no renaming
    # not told: one file only in A and one only in B are two versions of one file
    assert [c.only_in for c in diff(a, b).ranked] == [None]


def test_builtins_count_for_their_caller() -> None:
    clean = Frame("clean_text", "/u/b.py", 5)
    a = Profile(SAMPLES, "s", "t", (((clean,), 10.0),), 1, 1.0, sample_count=10)
    b = Profile(SAMPLES, "s", "t", (((clean, Frame("str.split", "<built-in>", 0)), 30.0),
                                    ((clean,), 10.0)), 1, 4.0, sample_count=40)
    (change,) = diff(a, b).ranked
    assert change.frame == clean and math.isclose(change.difference, 3.0)


# ------------------------------------------------------------------------ callgrind: exact
CG = r'''
#define STR2(x) #x
#define STR(x) STR2(x)
__attribute__((noinline)) void work(void) { __asm__ volatile(".rept " STR(PAD) "\n nop\n .endr"); }
__attribute__((noinline)) void other(void) { __asm__ volatile(".rept 50\n nop\n .endr"); }
int main(void) { for (int i = 0; i < 1000; i++) { work(); other(); } return 0; }
'''


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("valgrind") is None or shutil.which("cc") is None,
                    reason="needs valgrind and a C compiler")
def test_callgrind_difference_is_the_known_instruction_difference(tmp_path: Path) -> None:
    from steadybench.profiles.pair import compare_profiles

    src = tmp_path / "cg.c"
    src.write_text(CG)
    progs = {}
    for label, pad in (("A", 100), ("B", 1100)):
        progs[label] = tmp_path / f"prog{label}"
        subprocess.run(["cc", "-O1", f"-DPAD={pad}", str(src), "-o", str(progs[label])],
                       check=True)
    settings = ProfileSettings(mode="callgrind")
    profiles = {}
    for label, prog in progs.items():
        got = take_profile(ProfileBackend(label, settings, argv=[str(prog)]), 120)
        assert isinstance(got, Profile), got
        profiles[label] = got
    d = compare_profiles(profiles).difference
    assert d is not None and d.exact
    first = d.ranked[0]
    # B's work() runs 1000 more nops per call, called 1000 times: exactly 10^6 instructions
    assert first.frame.function == "work" and first.difference == 1_000_000
    assert first.error == 0.0
    assert len(d.ranked) == 1  # nothing else changed: other() and main are unchanged
    assert d.total_change == 1_000_000


def test_callgrind_reader_follows_the_format() -> None:
    from steadybench.profiles.callgrind import parse, stacks_of

    text = textwrap.dedent("""\
        version: 1
        events: Ir
        fl=(1) main.c
        fn=(1) main
        3 10
        +1 5
        cfn=(2) leaf
        calls=4 10
        * 400
        fn=(2)
        10 400
        summary: 415
        """)
    graph = parse(text)
    main, leaf = Frame("main", "main.c"), Frame("leaf", "main.c")
    assert graph.self_cost == {main: 15, leaf: 400}
    assert graph.edges == {(main, leaf): 400} and graph.calls == {(main, leaf): 4}
    assert graph.total == 415 and graph.inclusive(main) == 415
    assert dict(stacks_of(graph)) == {(main, leaf): 400.0, (main,): 15.0}


# ------------------------------------------------------------------------ records and files
def test_record_round_trips_and_files_open_elsewhere(tmp_path: Path) -> None:
    p = _profile({"f": 3, "g": 1})
    again = Profile.from_dict(json.loads(json.dumps(p.to_dict())))
    assert again == p
    with pytest.raises(ValueError):
        Profile.from_dict({"frames": [], "stacks": [[[5], 1]], "kind": "samples", "unit": "s",
                           "total_per_call": 1})
    doc = speedscope(p, "case")
    assert doc["$schema"].startswith("https://www.speedscope.app")
    frames = doc["shared"]["frames"]
    (prof,) = doc["profiles"]
    assert [[frames[i]["name"] for i in s] for s in prof["samples"]] == [["main", "f"],
                                                                          ["main", "g"]]
    assert prof["weights"] == [3, 1] and prof["endValue"] == 4
    out = write_profile(p, tmp_path / "p.collapsed", "case")
    assert collapsed.parse(out.read_text()) == p.stacks
    assert out.read_text().splitlines()[0] == "main (/x/main.py:1);f (/x/f.py:1) 3"


def test_stacks_are_cut_to_the_calls_and_own_frames_hidden() -> None:
    own = os.path.join(PACKAGE_DIR, "profiles", "child.py")
    marker = Frame(MARKER, own, 1)
    user = Frame("slow", "/home/u/bench.py", 4)
    wrapper = Frame("run", os.path.join(PACKAGE_DIR, "definitions.py"), 9)
    stacks = [((Frame("<module>", own, 1), Frame("main", own, 2), marker, wrapper, user), 7.0),
              ((Frame("<module>", own, 1), Frame("_allocations", own, 3), user), 5.0),
              ((Frame("<module>", own, 1), marker), 1.0)]
    kept, hidden = calls_region(stacks)
    assert kept == (((user,), 7.0),) and hidden == 1


# ------------------------------------------------------------------------ failures
def _fake_py_spy(tmp_path: Path, stderr: str, status: int) -> str:
    prog = tmp_path / "py-spy"
    prog.write_text(f"#!/bin/sh\necho '{stderr}' >&2\nexit {status}\n")
    prog.chmod(0o755)
    return str(prog)


@pytest.mark.parametrize(("stderr", "status", "reason"), [
    ("Error: Permission denied (os error 13)", 1, "not-permitted"),
    ("Error: Failed to find python version from target process", 1, "not-python"),
    ("Segmentation fault", 139, "failed"),
])
def test_a_failing_profiler_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                        stderr: str, status: int, reason: str) -> None:
    monkeypatch.setenv("STEADYBENCH_PY_SPY", _fake_py_spy(tmp_path, stderr, status))
    got = take_profile(ProfileBackend("A", ProfileSettings(), argv=["true"]), 30)
    assert isinstance(got, ProfileFailure) and got.reason == reason
    assert "\n" not in got.message and got.message.startswith("profile not taken")
    assert "measurement is not affected" in got.message


def test_a_missing_profiler_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STEADYBENCH_PY_SPY", str(tmp_path / "no-such-py-spy"))
    got = take_profile(ProfileBackend("A", ProfileSettings(), argv=["true"]), 30)
    assert isinstance(got, ProfileFailure) and got.reason == "missing"
    assert "pip install py-spy" in got.message


def _case_backend(tmp_path: Path) -> ProfileBackend:
    from steadybench.profiles.backend import for_variant

    path = tmp_path / "bench_shares.py"
    path.write_text(SLOW_FAST)
    return for_variant(_python_variant(path), ProfileSettings(seconds=0.2))


def test_a_python_case_without_py_spy_on_path_is_one_line(tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    empty = tmp_path / "bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    monkeypatch.setenv("STEADYBENCH_PY_SPY", "py-spy")  # looked up on PATH only
    got = take_profile(_case_backend(tmp_path), 30)
    assert isinstance(got, ProfileFailure) and got.reason == "missing", got
    assert "\n" not in got.message and "measurement is not affected" in got.message


@pytest.mark.parametrize(("stderr", "status", "reason"), [
    ("Error: Operation not permitted (os error 1): process_vm_readv", 1, "not-permitted"),
    ("Segmentation fault", 139, "failed"),
])
def test_a_python_case_whose_profiler_fails_is_one_line(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch,
                                                        stderr: str, status: int,
                                                        reason: str) -> None:
    monkeypatch.setenv("STEADYBENCH_PY_SPY", _fake_py_spy(tmp_path, stderr, status))
    got = take_profile(_case_backend(tmp_path), 30)
    assert isinstance(got, ProfileFailure) and got.reason == reason, got
    assert "\n" not in got.message and got.message.startswith("profile not taken")
    assert "measurement is not affected" in got.message


def test_a_py_spy_that_runs_the_case_then_crashes_is_one_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # the case runs to its end (its report is printed) but py-spy writes no profile
    prog = tmp_path / "py-spy"
    prog.write_text('#!/bin/sh\nwhile [ "$1" != "--" ]; do shift; done; shift\n"$@"\n'
                    'echo "thread panicked" >&2\nexit 101\n')
    prog.chmod(0o755)
    monkeypatch.setenv("STEADYBENCH_PY_SPY", str(prog))
    got = take_profile(_case_backend(tmp_path), 60)
    assert isinstance(got, ProfileFailure) and got.reason == "failed", got
    assert "py-spy failed (exit status 101: thread panicked)" in got.message


def test_what_py_spy_says_about_falling_behind_is_a_note(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    # a py-spy that writes a profile of a command with a thread and a Python child process,
    # and says it fell behind (py-spy prints that when a sample is over 1 s late)
    prog = tmp_path / "py-spy"
    prog.write_text(
        '#!/bin/sh\nwhile [ "$1" != "--output" ]; do shift; done; out="$2"\n'
        'printf \'%s\\n\' \'process 5:"python p.py";thread (5): MainThread;'
        'main (/u/p.py:1);parse (/u/p.py:9) 30\' \'process 5:"python p.py";thread (6): T;'
        'parse (/u/p.py:9) 10\' \'process 5:"python p.py";process 8:"python -c x";'
        'thread (8);<module> (<string>:1) 5\' \'process 5:"python p.py";thread (5) 2\' > "$out"\n'
        'echo "py-spy> 1.52s behind in sampling, results may be inaccurate. Try reducing the '
        'sampling rate"\n')
    prog.chmod(0o755)
    monkeypatch.setenv("STEADYBENCH_PY_SPY", str(prog))
    got = take_profile(ProfileBackend("A", ProfileSettings(), argv=["python", "p.py"]), 30)
    assert isinstance(got, Profile), got
    from steadybench.profiles.backend import CHILD_PROCESSES, NO_PYTHON_FRAME

    parse, main_f = Frame("parse", "/u/p.py", 9), Frame("main", "/u/p.py", 1)
    # the command's threads as one; its child process under a heading; no frame yet: said
    assert dict(got.stacks) == {(main_f, parse): 30, (parse,): 10,
                                (CHILD_PROCESSES, Frame("<module>", "<string>", 1)): 5,
                                NO_PYTHON_FRAME: 2}
    assert any("fell behind its rate of 250 Hz (py-spy> 1.52s behind" in n for n in got.notes)


def test_callgrind_stacks_keep_every_self_cost() -> None:
    from steadybench.profiles.callgrind import CallGraph, stacks_of

    a, b = Frame("a", "m.c"), Frame("b", "m.c")
    # a and b call each other and nothing outside calls them: no root reaches them
    graph = CallGraph(self_cost={a: 10, b: 20}, edges={(a, b): 25, (b, a): 5},
                      calls={(a, b): 1, (b, a): 1}, total=30)
    assert sum(w for _, w in stacks_of(graph)) == 30


def test_comprehensions_count_for_their_function() -> None:
    from steadybench.profiles.filtering import fold_comprehensions

    render = Frame("render", "/u/b.py", 8)
    stacks = [((render, Frame("<genexpr>", "/u/b.py", 9)), 5.0), ((render,), 1.0),
              ((render, Frame("render.<locals>.<listcomp>", "/u/b.py", 10)), 2.0)]
    assert fold_comprehensions(stacks) == (((render,), 8.0),)


ASYNC = '''\
import asyncio

from steadybench import benchmark


async def compute(i):
    await asyncio.sleep(0)
    return sum(range(20000))


async def gather_all():
    return await asyncio.gather(*(compute(i) for i in range(4)))


@benchmark
def case():
    return gather_all
'''


@pytest.mark.slow
def test_a_coroutine_function_is_awaited_and_said(tmp_path: Path) -> None:
    path = tmp_path / "bench_async.py"
    path.write_text(ASYNC)
    profile = _sampled(path, seconds=0.5)
    funcs = {f.frame.function: f for f in profile.functions()}
    # the coroutine's own work is in the profile (not a coroutine object left unawaited)
    assert funcs["compute"].share > 0.5
    assert any("event loop" in note for note in profile.notes)


def test_the_profiling_runner_is_the_measuring_runner_plus_a_profile() -> None:
    from steadybench.profiles.runner import ProfilingRunner

    class Inner:
        confidence = 0.95
        time_limit = 5.0
        last_case = None

    inner = Inner()
    wrapped = ProfilingRunner(inner, ProfileSettings())
    wrapped.confidence = 0.99  # what the manager does: it reaches the measuring runner
    assert inner.confidence == 0.99 and wrapped.time_limit == 5.0
    assert wrapped.settings == ProfileSettings() and not hasattr(inner, "settings")


def test_callgrind_on_a_python_case_is_one_line(tmp_path: Path) -> None:
    got = take_profile(ProfileBackend("A", ProfileSettings(mode="callgrind"), task=b"x"), 30)
    assert isinstance(got, ProfileFailure) and got.reason == "unsupported"
    assert "measurement is not affected" in got.message and "\n" not in got.message
