"""``steadybench iters`` on real programs: the C example built with cc, a Python program using
the protocol helper, and programs that misbehave."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

import steadybench.iters_protocol
from child_process import default_sigint
from steadybench.cli import main
from steadybench.output.results_io import load_results

ROOT = Path(__file__).resolve().parents[1]
CONTRIB = ROOT / "contrib" / "c"


@pytest.fixture(scope="module")
def busy(tmp_path_factory) -> str:
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler")
    exe = tmp_path_factory.mktemp("c") / "example_busy"
    subprocess.run([cc, "-O2", "-std=c99", "-Wall", "-Wextra", "-Werror", "-I", str(CONTRIB),
                    "-o", str(exe), str(CONTRIB / "example_busy.c")], check=True)
    return str(exe)


@pytest.fixture(scope="module")
def pyprog(tmp_path_factory) -> Path:
    """A Python protocol program: busy-waits WORK_US per iteration after OVERHEAD_US once.

    It spins on, and reports, process CPU time, so time spent preempted on a loaded test
    machine counts in neither and the known cost holds. It imports the helper as a stand-alone
    module (the file copied next to it), as the docs advise, so each run does not pay for
    importing numpy and scipy.
    """
    d = tmp_path_factory.mktemp("py")
    shutil.copy(steadybench.iters_protocol.__file__, d / "steadybench_iters.py")
    prog = d / "prog.py"
    prog.write_text(textwrap.dedent("""
        import sys, time
        from steadybench_iters import busy_wait, parse_iters, report
        iters, args = parse_iters(sys.argv[1:])
        work, overhead = float(args[0]) * 1e-6, float(args[1]) * 1e-6
        clock = time.process_time
        t0 = clock()
        busy_wait(overhead, clock)
        for _ in range(iters):
            busy_wait(work, clock)
        report(clock() - t0, iters)
    """))
    return prog


def run_cli(args, capsys):
    code = main(args)
    return code, capsys.readouterr().err


def test_c_example_slope_and_intercept(busy, tmp_path, capsys):
    out = tmp_path / "r.json"
    code, err = run_cli(["iters", "--max-time", "1", "--json", str(out), "--",
                         busy, "100", "2000", "cpu"], capsys)
    assert code == 0, err
    case = load_results(out).cases[0]
    est = case.estimate
    assert est.value == pytest.approx(100e-6, rel=0.03)
    assert est.figure("intercept") == pytest.approx(2e-3, rel=0.10)
    assert est.ci_low <= est.value <= est.ci_high
    fit = case.extra["fit"]
    assert len(fit["x"]) >= 8 and fit["x"][0] == 1
    assert case.values("selftimed")  # the C header prints SELFTIMED too
    assert case.extra["iters_position"] == "first argument"


def test_python_helper_program_slope_and_intercept(pyprog, tmp_path, capsys):
    out = tmp_path / "r.json"
    code, err = run_cli(["iters", "--max-time", "1.5", "--json", str(out), "--",
                         sys.executable, str(pyprog), "{iters}", "300", "5000"], capsys)
    assert code == 0, err
    case = load_results(out).cases[0]
    assert case.estimate.value == pytest.approx(300e-6, rel=0.05)
    assert case.estimate.figure("intercept") == pytest.approx(5e-3, rel=0.15)
    assert case.extra["iters_position"] == "placeholder {iters}"


def test_iters_cli_honours_the_stop_options(pyprog, tmp_path, capsys):
    """iters used to ignore stop conditions: --runs and --warmup now mean what they mean in
    run and exec (the one run loop checks them)."""
    out = tmp_path / "r.json"
    code, err = run_cli(["iters", "--runs", "12", "--warmup", "2", "--json", str(out), "--",
                         sys.executable, str(pyprog), "{iters}", "30", "500"], capsys)
    assert code == 0, err
    case = load_results(out).cases[0]
    assert case.n == 12 and case.count("warmup") == 2
    assert "12 runs" in case.stop_reason


def test_sweep_with_params_gives_a_case_per_value(busy, tmp_path, capsys):
    out = tmp_path / "r.json"
    code, err = run_cli(["iters", "--max-time", "0.3", "--param", "w=20,60", "--json", str(out),
                         "--", busy, "{w}", "0", "cpu"], capsys)
    assert code == 0, err
    a, b = load_results(out).cases
    assert a.params == {"w": 20} and b.params == {"w": 60}
    assert b.estimate.value / a.estimate.value == pytest.approx(3, rel=0.05)


def _script(tmp_path: Path, body: str) -> str:
    p = tmp_path / "bad.py"
    p.write_text(textwrap.dedent(body))
    return str(p)


@pytest.mark.parametrize("body, fragment", [
    ("print('hello'); print('world')", "with iters=1: no 'BATCHTIME: <seconds>' line; its last "
                                       "output line was 'world'"),
    ("import sys\nprint('BATCHTIME: soon')", "with iters=1: BATCHTIME is not a number: "
                                             "'BATCHTIME: soon'"),
    ("import sys\nn=int(sys.argv[1])\nprint('BATCHTIME: 0.001')\nif n >= 4: print('BATCHTIME: 1')",
     "with iters=4: BATCHTIME printed twice"),
    ("import sys\nsys.stderr.write('kaput\\n')\nsys.exit(5)", "with iters=1: exit status 5; "
                                                              "stderr: kaput"),
])
def test_misbehaving_programs_give_one_line_errors(body, fragment, tmp_path, capsys):
    out = tmp_path / "r.json"
    prog = _script(tmp_path, body)
    code, err = run_cli(["iters", "-q", "--json", str(out), "--", sys.executable, prog, "{iters}"],
                        capsys)
    assert code == 1
    lines = [ln for ln in err.splitlines() if ln.startswith("error:")]
    assert len(lines) == 1, err
    assert f"command '{sys.executable} {prog} {{iters}}'" in lines[0]
    assert fragment in lines[0]
    assert "Traceback" not in err
    case = load_results(out).cases[0]
    assert case.errors and fragment in case.errors[0]


def test_hanging_program_is_killed_by_the_timeout(tmp_path, capsys):
    prog = _script(tmp_path, "import sys, time\nn=int(sys.argv[1])\n"
                             "print('BATCHTIME: 0.0001')\nif n >= 4: time.sleep(60)")
    code, err = run_cli(["iters", "-q", "--timeout", "0.5", "--", sys.executable, prog,
                         "{iters}"], capsys)
    assert code == 1
    assert "with iters=4: timed out after 0.5 s (process group killed)" in err


@pytest.mark.parametrize("args, fragment", [
    (["--", "no-such-prog-xyz"], "error: command not found: no-such-prog-xyz"),
    ([], "error: no command given"),
    (["--", "prog", "{n}"], "error: placeholder {n}"),
    (["--param", "iters=1,2", "--", "true", "{iters}"], "error: parameter 'iters' is set by"),
    (["--max-time", "0", "--", "true"], "error: Invalid value for '--max-time': must be positive"),
])
def test_bad_iters_input(args, fragment, capsys):
    code, err = run_cli(["iters", *args], capsys)
    assert code == 2
    assert err.strip().splitlines()[-1].startswith(fragment), err


def test_ctrl_c_keeps_the_points_and_leaves_no_child(tmp_path):
    pids = tmp_path / "pids"
    hanging = tmp_path / "hanging"  # the 16-iteration run printed its time and hangs
    prog = _script(tmp_path, f"""
        import os, sys, time
        with open({str(pids)!r}, "a") as fh:
            fh.write(f"{{os.getpid()}}\\n")
        n = int(sys.argv[1])
        time.sleep(0.02)
        print(f"BATCHTIME: {{n * 1e-6}}")
        if n >= 16:
            open({str(hanging)!r}, "w").close()
            time.sleep(60)
    """)
    out = tmp_path / "r.json"
    code = "import sys; from steadybench.cli import main; sys.exit(main(sys.argv[1:]))"
    proc = subprocess.Popen([sys.executable, "-c", code, "iters", "-q", "--json", str(out), "--",
                             sys.executable, prog, "{iters}"], stderr=subprocess.PIPE, text=True,
                            preexec_fn=default_sigint)
    deadline = time.monotonic() + 120
    while not hanging.exists():
        assert proc.poll() is None, proc.communicate()[1]
        assert time.monotonic() < deadline, "the 16-iteration run never started"
        time.sleep(0.02)  # polling, not a fixed wait
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    data = json.loads(out.read_text())
    assert data["interrupted"] is True
    bench = data["benchmarks"][0]
    assert bench["status"] == "interrupted"
    assert bench["runs"]["metrics"]["iters"] == [1.0, 2.0, 4.0, 8.0]
    assert bench["extra"]["fit"]["slope"] == pytest.approx(1e-6, rel=1e-6)
    def alive(pid: int) -> bool:
        try:
            return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] != "Z"
        except FileNotFoundError:
            return False

    deadline = time.monotonic() + 30  # the killed children may take a moment to die
    while survivors := [p for p in map(int, pids.read_text().split()) if alive(p)]:
        assert time.monotonic() < deadline, f"children left running: {survivors}"
        time.sleep(0.05)


def test_batchtime_that_does_not_grow_is_an_error_not_a_number(tmp_path, capsys):
    """A program that ignores the count: no per-iteration time is published (issue 3's rule)."""
    out = tmp_path / "r.json"
    prog = _script(tmp_path, "print('BATCHTIME: 0.001')")
    code, err = run_cli(["iters", "-q", "--max-time", "0.3", "--json", str(out), "--",
                         sys.executable, prog, "{iters}"], capsys)
    lines = [ln for ln in err.splitlines() if ln.startswith("error:")]
    assert code == 1 and len(lines) == 1, err
    assert "time per iteration is not positive" in lines[0] and prog in lines[0]
    case = load_results(out).cases[0]
    assert case.estimate.value is None and case.extra["fit"]["x"]


def test_the_command_line_outlier_threshold_is_the_library_default():
    import click

    from steadybench.cli import cli
    from steadybench.stats.regression import DEFAULT_OUTLIER_THRESHOLD

    for name in ("iters", "sweep"):
        command = cli.get_command(click.Context(cli), name)
        option = next(p for p in command.params if p.name == "outlier_threshold")
        assert option.default == DEFAULT_OUTLIER_THRESHOLD
